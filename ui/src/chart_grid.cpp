#include <livemon/ui/chart_grid.h>

#include <algorithm>

#include <QGridLayout>
#include <QLabel>
#include <QRegularExpression>
#include <QResizeEvent>
#include <QScrollBar>

#include <livemon/ui/dashboard_style.h>
#include <livemon/ui/stat_registry.h>

namespace livemon::ui {

namespace {
constexpr int kChartMinimumWidth = 440;
constexpr int kChartHeight = 270;
constexpr int kMaxColumns = 4;
}  // namespace

ChartGrid::ChartGrid(const StatRegistry& registry, QWidget* parent) : QScrollArea(parent), registry_(registry) {
  content_ = new QWidget();
  layout_ = new QGridLayout(content_);
  layout_->setContentsMargins(6, 6, 6, 6);
  layout_->setSpacing(6);
  layout_->setAlignment(Qt::AlignTop);
  placeholder_ = new QLabel(tr("Waiting for Stats…\n\nCharts appear here as soon as a publisher sends its first "
                               "Stat window (events named livemon.Stat or torch.monitor.Stat)."));
  placeholder_->setAlignment(Qt::AlignCenter);
  placeholder_->setWordWrap(true);
  placeholder_->setStyleSheet(QStringLiteral("color: #8b929e; padding: 40px;"));
  layout_->addWidget(placeholder_, 0, 0);
  setWidget(content_);
  setWidgetResizable(true);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  verticalScrollBar()->setSingleStep(40);
}

void ChartGrid::addSeries(const std::vector<SeriesId>& ids) {
  for (SeriesId id : ids) {
    const SeriesEntry* entry = registry_.series(id);
    if (entry == nullptr) continue;
    if (const auto found = charts_.find(entry->stat); found != charts_.end()) {
      found->second->addSeries(id);
    } else {
      pendingStats_[entry->stat].push_back(id);
    }
  }
}

void ChartGrid::refreshSeriesNames() {
  for (const auto& [name, chart] : charts_) chart->refreshSeriesNames();
}

StatChartView* ChartGrid::createChart(const QString& statName) {
  auto* chart = new StatChartView(statName, registry_, view_.mode(), content_);
  chart->setFixedHeight(kChartHeight);
  chart->setMinimumWidth(kChartMinimumWidth - 40);
  connect(chart, &StatChartView::rangeRequested, this, [this](double min, double max) { showRange(XRange{min, max}); });
  connect(chart, &StatChartView::resetRequested, this, &ChartGrid::followLive);
  charts_.emplace(statName, chart);
  return chart;
}

ChartGrid::RefreshStats ChartGrid::refresh() {
  RefreshStats stats;
  if (!pendingStats_.empty()) {
    const auto start = std::chrono::steady_clock::now();
    while (!pendingStats_.empty()) {
      auto next = pendingStats_.begin();
      StatChartView* chart = createChart(next->first);
      for (SeriesId id : next->second) chart->addSeries(id);
      pendingStats_.erase(next);
      ++stats.created;
      if (std::chrono::steady_clock::now() - start >= creationBudget_) break;
    }
    relayout();
    emit chartCountChanged(static_cast<int>(charts_.size()));
  }
  const ChartRenderContext context = renderContext();
  for (const auto& [name, chart] : charts_) {
    if (chart->render(context)) ++stats.rendered;
  }
  return stats;
}

ChartRenderContext ChartGrid::renderContext() const {
  ChartRenderContext context;
  context.mode = view_.mode();
  context.x = view_.visible(registry_.extent(view_.mode()));
  context.frozen = view_.paused();
  context.cutoff = view_.pausedEdge();
  return context;
}

bool ChartGrid::matchesFilter(const QString& statName) const {
  if (nameFilter_.isEmpty()) return true;
  if (nameFilter_.contains(QLatin1Char('*')) || nameFilter_.contains(QLatin1Char('?'))) {
    const QRegularExpression pattern(
        QRegularExpression::wildcardToRegularExpression(nameFilter_, QRegularExpression::UnanchoredWildcardConversion),
        QRegularExpression::CaseInsensitiveOption);
    return pattern.match(statName).hasMatch();
  }
  return statName.contains(nameFilter_, Qt::CaseInsensitive);
}

void ChartGrid::setNameFilter(const QString& filter) {
  const QString trimmed = filter.trimmed();
  if (trimmed == nameFilter_) return;
  nameFilter_ = trimmed;
  relayout();
}

int ChartGrid::columnCount() const {
  return std::clamp(viewport()->width() / kChartMinimumWidth, 1, kMaxColumns);
}

void ChartGrid::relayout() {
  columns_ = columnCount();
  while (layout_->count() > 0) layout_->takeAt(0);
  placeholder_->setVisible(charts_.empty());
  if (charts_.empty()) {
    layout_->addWidget(placeholder_, 0, 0);
    return;
  }
  int index = 0;
  for (const auto& [name, chart] : charts_) {
    const bool shown = matchesFilter(name);
    chart->setVisible(shown);
    if (!shown) continue;
    layout_->addWidget(chart, index / columns_, index % columns_);
    ++index;
  }
  for (int column = 0; column < kMaxColumns; ++column) layout_->setColumnStretch(column, column < columns_ ? 1 : 0);
}

void ChartGrid::resizeEvent(QResizeEvent* event) {
  QScrollArea::resizeEvent(event);
  if (columnCount() != columns_) relayout();
}

void ChartGrid::setTimeAxisMode(TimeAxisMode mode) {
  view_.setMode(mode);
  if (view_.paused()) setPaused(true);  // the frozen edge, in the new mode's units
}

void ChartGrid::setTimeRange(TimeRange range) { view_.setRange(range); }

void ChartGrid::setPaused(bool paused) {
  const std::optional<XRange> extent = registry_.extent(view_.mode());
  view_.setPaused(paused, extent ? std::optional<double>(extent->max) : std::nullopt);
}

void ChartGrid::showRange(XRange range) { view_.showFixed(range); }

void ChartGrid::followLive() { view_.followLive(); }

StatChartView* ChartGrid::chart(const QString& statName) const {
  const auto found = charts_.find(statName);
  return found != charts_.end() ? found->second : nullptr;
}

std::vector<StatChartView*> ChartGrid::charts() const {
  std::vector<StatChartView*> result;
  result.reserve(charts_.size());
  for (const auto& [name, chart] : charts_) result.push_back(chart);
  return result;
}

}  // namespace livemon::ui
