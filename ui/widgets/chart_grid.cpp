#include <livemon/ui/widgets/chart_grid.h>

#include <algorithm>
#include <iterator>

#include <QLabel>
#include <QRegularExpression>
#include <QEvent>
#include <QScrollBar>

#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

namespace {
constexpr int kChartMinimumWidth = 400;
constexpr int kChartHeight = 270;
constexpr int kMaxColumns = 4;
constexpr int kMargin = 6;
constexpr int kSpacing = 6;
}  // namespace

bool ChartGrid::DisplayOrder::operator()(const QString& a, const QString& b) const {
  const bool ownA = a.startsWith(QLatin1String("livemon."));
  const bool ownB = b.startsWith(QLatin1String("livemon."));
  if (ownA != ownB) return ownB;
  return a < b;
}

ChartGrid::ChartGrid(const StatRegistry& registry, QWidget* parent) : QScrollArea(parent), registry_(registry) {
  content_ = new QWidget();
  // It grows as charts arrive; growing must not repaint the charts already on screen.
  content_->setAttribute(Qt::WA_StaticContents);
  content_->installEventFilter(this);
  // Smoothing and scale apply to every chart at once: redraw them when they change.
  viewOptions_ = new ChartViewOptions(this);
  connect(viewOptions_, &ChartViewOptions::changed, this, [this] { refresh(); });
  placeholder_ = new QLabel(tr("Waiting for Stats…\n\nCharts appear here as soon as a publisher sends its first "
                               "Stat window (events named livemon.Stat or torch.monitor.Stat)."),
                            content_);
  placeholder_->setAlignment(Qt::AlignCenter);
  placeholder_->setWordWrap(true);
  placeholder_->setStyleSheet(dimTextStyle(QStringLiteral("padding: 40px;")));
  setWidget(content_);
  setWidgetResizable(true);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  verticalScrollBar()->setSingleStep(40);
  relayout();
}

void ChartGrid::addSeries(const std::vector<SeriesId>& ids) {
  for (SeriesId id : ids) {
    const SeriesEntry* entry = registry_.series(id);
    if (entry == nullptr) continue;
    if (const auto found = charts_.find(entry->stat); found != charts_.end()) {
      found->second->addSeries(id);
    } else if (std::vector<SeriesId>& pending = pendingStats_[entry->stat]; pending.size() < maxLinesPerChart_) {
      pending.push_back(id);
    }
  }
}

void ChartGrid::removeSeries(const std::vector<SeriesId>& ids) {
  if (ids.empty()) return;
  const auto removed = [&ids](SeriesId id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); };
  for (auto pending = pendingStats_.begin(); pending != pendingStats_.end();) {
    std::erase_if(pending->second, removed);
    pending = pending->second.empty() ? pendingStats_.erase(pending) : std::next(pending);
  }
  const std::size_t before = charts_.size();
  std::erase_if(charts_, [&](const auto& entry) {
    StatChartView* chart = entry.second;
    chart->removeSeries(ids);
    if (!chart->seriesIds().empty()) return false;
    deferred_.erase(chart);
    delete chart;
    return true;
  });
  if (charts_.size() == before) return;
  relayout();
  emit chartCountChanged(static_cast<int>(charts_.size()));
}

void ChartGrid::refreshSeriesNames() {
  for (const auto& [name, chart] : charts_) chart->refreshSeriesNames();
}

StatChartView* ChartGrid::createChart(const QString& statName) {
  auto* chart = new StatChartView(statName, registry_, view_.mode(), content_);
  chart->setMaxLines(maxLinesPerChart_);
  chart->setViewOptions(viewOptions_);
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
  std::vector<StatChartView*> due;
  for (const auto& [name, chart] : charts_) {
    if (chart->needsRender(context)) due.push_back(chart);
  }
  // Those left over last time first, so a burst is drawn in full over a few refreshes.
  std::stable_partition(due.begin(), due.end(), [this](const StatChartView* chart) { return deferred_.count(chart) > 0; });
  deferred_.clear();
  const auto deadline = std::chrono::steady_clock::now() + renderBudget_;
  for (StatChartView* chart : due) {
    if (stats.rendered > 0 && std::chrono::steady_clock::now() >= deadline) {
      deferred_.insert(chart);
      continue;
    }
    if (chart->render(context)) ++stats.rendered;
  }
  stats.deferred = static_cast<int>(deferred_.size());
  return stats;
}

ChartRenderContext ChartGrid::renderContext() const {
  ChartRenderContext context;
  context.mode = view_.mode();
  std::optional<XRange> extent = registry_.extent(view_.mode());
  if (playheadMs_ && view_.mode() == TimeAxisMode::WallClock) {
    extent = XRange{extent ? std::min(extent->min, *playheadMs_) : *playheadMs_, *playheadMs_};
  }
  context.x = view_.visible(extent);
  context.frozen = view_.paused();
  context.following = view_.followsLive();
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
  return std::clamp((content_->width() - 2 * kMargin + kSpacing) / (kChartMinimumWidth + kSpacing), 1, kMaxColumns);
}

void ChartGrid::relayout() {
  const int width = content_->width();
  if (charts_.empty()) {
    placeholder_->setGeometry(kMargin, kMargin, std::max(0, width - 2 * kMargin), 240);
    placeholder_->show();
    content_->setMinimumHeight(0);
    return;
  }
  placeholder_->hide();
  const int columns = columnCount();
  const int chartWidth = std::max(1, (width - 2 * kMargin - (columns - 1) * kSpacing) / columns);
  int index = 0;
  for (const auto& [name, chart] : charts_) {
    const bool shown = matchesFilter(name);
    if (!shown) {
      chart->hide();
      continue;
    }
    const int row = index / columns;
    const int column = index % columns;
    chart->setGeometry(kMargin + column * (chartWidth + kSpacing), kMargin + row * (kChartHeight + kSpacing), chartWidth,
                       kChartHeight);
    chart->show();
    ++index;
  }
  const int rows = (index + columns - 1) / columns;
  content_->setMinimumHeight(2 * kMargin + rows * kChartHeight + std::max(0, rows - 1) * kSpacing);
}

bool ChartGrid::eventFilter(QObject* watched, QEvent* event) {
  // The content follows the viewport's width: place the charts again when it changes.
  if (watched == content_ && event->type() == QEvent::Resize) relayout();
  return QScrollArea::eventFilter(watched, event);
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

std::size_t ChartGrid::undrawnLineCount() const {
  std::size_t drawn = 0;
  for (const auto& [name, chart] : charts_) drawn += chart->lineCount();
  for (const auto& [name, ids] : pendingStats_) drawn += ids.size();
  const std::size_t present = registry_.seriesCount();
  return present > drawn ? present - drawn : 0;
}

std::vector<StatChartView*> ChartGrid::charts() const {
  std::vector<StatChartView*> result;
  result.reserve(charts_.size());
  for (const auto& [name, chart] : charts_) result.push_back(chart);
  return result;
}

}  // namespace livemon::ui
