#include <livemon/ui/widgets/chart_grid.h>

#include <algorithm>
#include <iterator>

#include <QEvent>
#include <QKeyEvent>
#include <QLabel>
#include <QPushButton>
#include <QResizeEvent>
#include <QScrollBar>
#include <QToolButton>

#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/drawn_icons.h>

namespace livemon::ui {

namespace {
constexpr int kChartMinimumWidth = 400;
// Cards keep this shape as the window grows, within these heights.
constexpr double kChartAspect = 0.6;
constexpr int kChartMinimumHeight = 240;
constexpr int kChartMaximumHeight = 460;
constexpr int kMaxColumns = 4;
constexpr int kMargin = 6;
constexpr int kSpacing = 6;
constexpr int kHeaderHeight = 24;
constexpr int kButtonSize = 22;
const char* const kPinButton = "pinChart";
const char* const kEnlargeButton = "enlargeChart";
}  // namespace

bool ChartGrid::DisplayOrder::operator()(const QString& a, const QString& b) const { return chartLess(a, b); }

ChartGrid::ChartGrid(const StatRegistry& registry, QWidget* parent) : QScrollArea(parent), registry_(registry) {
  content_ = new QWidget();
  // It grows as charts arrive; growing must not repaint the charts already on screen.
  content_->setAttribute(Qt::WA_StaticContents);
  content_->installEventFilter(this);
  // Smoothing and scale apply to every chart at once: redraw them when they change.
  viewOptions_ = new ChartViewOptions(this);
  connect(viewOptions_, &ChartViewOptions::changed, this, [this] { refresh(); });
  placeholder_ = new QLabel(content_);
  placeholder_->setAlignment(Qt::AlignCenter);
  placeholder_->setWordWrap(true);
  placeholder_->setStyleSheet(dimTextStyle(QStringLiteral("padding: 40px;")));
  placeholder_->setTextInteractionFlags(Qt::TextSelectableByMouse);  // endpoints and commands to copy
  connectButton_ = new QPushButton(tr("Connect…"), content_);
  connectButton_->setObjectName(QStringLiteral("emptyConnect"));
  connectButton_->setToolTip(tr("Add or remove the publishers this dashboard listens to"));
  connectButton_->hide();
  connect(connectButton_, &QPushButton::clicked, this, &ChartGrid::connectRequested);
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
      if (!found->second->addSeries(id)) undrawn_.insert(id);
    } else if (std::vector<SeriesId>& pending = pendingStats_[entry->stat]; pending.size() < maxLinesPerChart_) {
      if (std::find(pending.begin(), pending.end(), id) == pending.end()) pending.push_back(id);
    } else {
      undrawn_.insert(id);
    }
  }
}

void ChartGrid::removeSeries(const std::vector<SeriesId>& ids) {
  if (ids.empty()) return;
  const auto removed = [&ids](SeriesId id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); };
  for (SeriesId id : ids) undrawn_.erase(id);
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
    renderCost_.erase(chart);
    lastRendered_.erase(chart);
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

void ChartGrid::setRunDisplay(const RunDisplay* runs) {
  runs_ = runs;
  for (const auto& entry : charts_) entry.second->setRunDisplay(runs);
}

StatChartView* ChartGrid::createChart(const QString& statName) {
  auto* chart = new StatChartView(statName, registry_, view_.mode(), content_);
  chart->setMaxLines(maxLinesPerChart_);
  // The card's own controls, over its top right corner.
  auto* pin = new QToolButton(chart);
  pin->setObjectName(QLatin1String(kPinButton));
  pin->setCheckable(true);
  pin->setAutoRaise(true);
  pin->setText(tr("Pin"));
  styleCardButton(pin);
  pin->setToolTip(tr("Pin this chart to the top of the grid"));
  connect(pin, &QToolButton::clicked, this, [this, statName](bool on) { setPinned(statName, on); });
  auto* enlarge = new QToolButton(chart);
  enlarge->setObjectName(QLatin1String(kEnlargeButton));
  enlarge->setCheckable(true);
  enlarge->setAutoRaise(true);
  // Drawn: the style's title-bar icon is dark on the dark card, an empty square.
  enlarge->setIcon(enlargeIcon(QColor(colours::text()), QColor(colours::dimText())));
  styleCardButton(enlarge);
  enlarge->setToolTip(tr("Enlarge this chart to fill the chart area (Escape returns)"));
  connect(enlarge, &QToolButton::clicked, this, [this, statName](bool on) {
    setEnlarged(on ? std::optional<QString>(statName) : std::nullopt);
  });
  chart->setViewOptions(viewOptions_);
  chart->setRunDisplay(runs_);
  connect(chart, &StatChartView::rangeRequested, this, [this](double min, double max) { showRange(XRange{min, max}); });
  connect(chart, &StatChartView::resetRequested, this, &ChartGrid::followLive);
  charts_.emplace(statName, chart);
  emit chartCreated(chart);
  return chart;
}

ChartGrid::RefreshStats ChartGrid::refresh() {
  RefreshStats stats;
  if (!pendingStats_.empty()) {
    const auto start = budgets_.clock->now();
    while (!pendingStats_.empty()) {
      auto next = pendingStats_.begin();
      StatChartView* chart = createChart(next->first);
      for (SeriesId id : next->second) chart->addSeries(id);
      pendingStats_.erase(next);
      ++stats.created;
      if (budgets_.clock->now() - start >= budgets_.creation) break;
    }
    relayout();
    emit chartCountChanged(static_cast<int>(charts_.size()));
  }
  const ChartRenderContext context = renderContext();
  std::vector<StatChartView*> due;
  for (const auto& [name, chart] : charts_) {
    if (chart->needsRender(context)) due.push_back(chart);
  }
  // The longest undrawn first (never drawn before any), so that while every chart has news at
  // every refresh each still has its turn: a budget of one chart a refresh goes round them all.
  ++refreshes_;
  const auto drawnAt = [this](const StatChartView* chart) {
    const auto at = lastRendered_.find(chart);
    return at != lastRendered_.end() ? at->second : 0;
  };
  std::stable_sort(due.begin(), due.end(),
                   [&drawnAt](const StatChartView* a, const StatChartView* b) { return drawnAt(a) < drawnAt(b); });
  deferred_.clear();
  const auto deadline = budgets_.clock->now() + budgets_.render;
  for (StatChartView* chart : due) {
    const auto now = budgets_.clock->now();
    const auto cost = renderCost_.find(chart);
    if (stats.rendered > 0 && now + (cost != renderCost_.end() ? cost->second : std::chrono::nanoseconds(0)) > deadline) {
      deferred_.insert(chart);
      continue;
    }
    if (chart->render(context)) {
      ++stats.rendered;
      renderCost_[chart] = budgets_.clock->now() - now;
      lastRendered_[chart] = refreshes_;
    }
  }
  stats.deferred = static_cast<int>(deferred_.size());
  return stats;
}

ChartRenderContext ChartGrid::renderContext() const {
  ChartRenderContext context;
  context.mode = view_.mode();
  const TimeAxisMode timeMode = TimeView::timeMode(view_.mode());
  std::optional<XRange> extent = registry_.extent(timeMode);
  const std::optional<double> edge = timeMode == TimeAxisMode::WallClock       ? playheadMs_
                                    : timeMode == TimeAxisMode::SinceRunStart ? playheadRunS_
                                                                              : std::nullopt;
  if (edge) extent = XRange{extent ? std::min(extent->min, *edge) : *edge, *edge};
  if (context.mode == TimeAxisMode::Step) {
    // The time range picks the points; the axis shows their steps.
    context.window = view_.window(extent);
    context.x = view_.visible(registry_.stepExtent(context.window));
  } else {
    context.x = view_.visible(extent);
  }
  context.frozen = view_.paused();
  context.following = view_.followsLive();
  // Live time axes only: a replay's range moves with its playhead, a Step axis with new steps.
  if (context.following && !context.frozen && !playheadMs_ && context.mode != TimeAxisMode::Step) {
    context.x = snapLiveEdge(context.x);
  }
  context.cutoff = view_.pausedEdge();
  return context;
}

void ChartGrid::setNameFilter(const QString& filter) {
  if (filter.trimmed() == choices_.filter.text()) return;
  choices_.filter = ChartFilter(filter);
  relayout();
}

void ChartGrid::setPinned(const QString& chart, bool pinned) {
  if (pinned == isPinned(chart)) return;
  if (pinned) {
    choices_.pinned.insert(chart);
  } else {
    choices_.pinned.erase(chart);
  }
  relayout();
}

void ChartGrid::setEnlarged(const std::optional<QString>& chart) {
  if (chart == choices_.enlarged) return;
  const bool wasEnlarged = choices_.enlarged.has_value();
  choices_.enlarged = chart;
  relayout();
  verticalScrollBar()->setValue(0);
  if (wasEnlarged != chart.has_value()) emit enlargedChanged(chart.has_value());
}

void ChartGrid::setSectionCollapsed(const QString& section, bool collapsed) {
  if (collapsed == isSectionCollapsed(section)) return;
  if (collapsed) {
    choices_.collapsed.insert(section);
  } else {
    choices_.collapsed.erase(section);
  }
  relayout();
}

void ChartGrid::restoreChoices(const ChartChoices& saved, const ChartViewState& view) {
  choices_.pinned = saved.pinned;
  choices_.collapsed = saved.collapsed;
  viewOptions_->restore(view);
  relayout();
}

QString ChartGrid::placeholderText() const { return placeholder_->isHidden() ? QString() : placeholder_->text(); }

int ChartGrid::columnCount() const {
  return std::clamp((content_->width() - 2 * kMargin + kSpacing) / (kChartMinimumWidth + kSpacing), 1, kMaxColumns);
}

void ChartGrid::setWaitingNote(const QString& note) {
  if (note == waitingNote_) return;
  waitingNote_ = note;
  if (arrangement_.mode == ChartArrangement::Mode::Empty) relayout();
}

void ChartGrid::setEndpoints(const QStringList& endpoints) {
  if (endpoints == endpoints_) return;
  endpoints_ = endpoints;
  if (arrangement_.mode == ChartArrangement::Mode::Empty) relayout();
}

QString ChartGrid::waitingText() const {
  const QString arrived = endpoints_.isEmpty()
                              ? tr("Nothing has arrived yet: this dashboard is connected to no endpoint.")
                              : tr("Nothing has arrived from %1 yet.").arg(endpoints_.join(QStringLiteral(", ")));
  // Why nothing arrives, when known, before what to do about it.
  const QString note = waitingNote_.isEmpty() ? QString() : QStringLiteral("\n\n") + waitingNote_;
  return tr("Waiting for charts…\n\n%1 Charts appear as soon as a publisher sends its first Stat window "
            "(livemon.Stat or torch.monitor.Stat) or an event with a number in it.%2\n\n"
            "Start your job publishing there (a publisher binds tcp://127.0.0.1:5555 unless told otherwise),\n"
            "or run \u201clivemonctl demo\u201d in a terminal for a demo run,\n"
            "or connect to other endpoints or a relay:")
      .arg(arrived, note);
}

void ChartGrid::showPlaceholder(const QString& text, bool offerConnect) {
  placeholder_->setText(text);
  const int width = std::max(0, content_->width() - 2 * kMargin);
  const int fitted = placeholder_->heightForWidth(width);
  const int height = fitted > 0 ? fitted : 240;
  placeholder_->setGeometry(kMargin, kMargin, width, height);
  placeholder_->show();
  connectButton_->setVisible(offerConnect);
  if (offerConnect) {
    const QSize size = connectButton_->sizeHint();
    connectButton_->setGeometry(kMargin + (width - size.width()) / 2, kMargin + height, size.width(), size.height());
  }
}

void ChartGrid::placeChart(StatChartView* chart, const QRect& geometry) {
  chart->setGeometry(geometry);
  const QString& name = chart->statName();
  if (auto* enlarge = chart->findChild<QToolButton*>(QLatin1String(kEnlargeButton))) {
    const bool enlarged = choices_.enlarged == name;
    enlarge->setChecked(enlarged);
    // Checked, the icon draws its On state: arrows pointing back in.
    enlarge->setToolTip(enlarged ? tr("Back to the grid of charts (Escape)")
                                 : tr("Enlarge this chart to fill the chart area (Escape returns)"));
    enlarge->setGeometry(geometry.width() - kButtonSize - 4, 4, kButtonSize, kButtonSize);
    enlarge->raise();
    if (auto* pin = chart->findChild<QToolButton*>(QLatin1String(kPinButton))) {
      const bool pinned = isPinned(name);
      pin->setChecked(pinned);
      pin->setText(pinned ? tr("Unpin") : tr("Pin"));
      const int width = pin->sizeHint().width();
      pin->setGeometry(enlarge->x() - width - 2, 4, width, kButtonSize);
      pin->raise();
      // The title is centred: it may reach as far right of the centre as the Pin button leaves room.
      chart->fitTitle(2 * (pin->x() - kSpacing) - geometry.width());
    }
  }
  chart->show();
}

QToolButton* ChartGrid::sectionHeader(const ChartSection& section) {
  QToolButton*& header = headers_[section.name];
  if (header == nullptr) {
    header = new QToolButton(content_);
    header->setAutoRaise(true);
    header->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    QFont font = header->font();
    font.setBold(true);
    header->setFont(font);
    header->setToolTip(tr("Show or hide this section's charts"));
    connect(header, &QToolButton::clicked, this,
            [this, name = section.name] { setSectionCollapsed(name, !isSectionCollapsed(name)); });
  }
  header->setArrowType(section.collapsed ? Qt::RightArrow : Qt::DownArrow);
  header->setText(QStringLiteral("%1  (%2)").arg(section.title).arg(section.charts));
  return header;
}

void ChartGrid::relayout() {
  std::vector<QString> names;
  names.reserve(charts_.size());
  for (const auto& [name, chart] : charts_) names.push_back(name);
  arrangement_ = arrangeCharts(names, choices_);
  // In the grid the scroll bar is always there, so the content's width never depends on its
  // height: chart heights follow the width, and a scroll bar that came and went with the height
  // changed the width, which changed the height, and so on, until the stack overflowed. Elsewhere
  // the content fits the viewport.
  const Qt::ScrollBarPolicy policy =
      arrangement_.mode == ChartArrangement::Mode::Grid ? Qt::ScrollBarAlwaysOn : Qt::ScrollBarAlwaysOff;
  if (verticalScrollBarPolicy() != policy) setVerticalScrollBarPolicy(policy);
  const int width = content_->width();
  std::set<QString> shown;
  std::set<QString> headers;
  int height = 0;
  switch (arrangement_.mode) {
    case ChartArrangement::Mode::Empty:
      showPlaceholder(waitingText(), true);
      break;
    case ChartArrangement::Mode::NoMatch:
      showPlaceholder(tr("No chart matches “%1”.\n\nSeparate alternatives with |, e.g. loss|acc; * and ? are "
                         "wildcards.").arg(choices_.filter.text()));
      break;
    case ChartArrangement::Mode::Single: {
      placeholder_->hide();
      connectButton_->hide();
      StatChartView* chart = charts_.at(arrangement_.single);
      placeChart(chart, QRect(kMargin, kMargin, std::max(1, width - 2 * kMargin),
                              std::max(kChartMinimumHeight, viewport()->height() - 2 * kMargin)));
      shown.insert(arrangement_.single);
      break;
    }
    case ChartArrangement::Mode::Grid: {
      placeholder_->hide();
      connectButton_->hide();
      const int columns = columnCount();
      const int chartWidth = std::max(1, (width - 2 * kMargin - (columns - 1) * kSpacing) / columns);
      const int chartHeight =
          std::clamp(static_cast<int>(chartWidth * kChartAspect), kChartMinimumHeight, kChartMaximumHeight);
      // Sections flow on from one another (flowCharts); a row where a section starts has a strip
      // for its label above the charts.
      const ChartFlow flow = flowCharts(arrangement_, columns);
      std::vector<int> labelTop(static_cast<std::size_t>(flow.rows));
      std::vector<int> chartTop(static_cast<std::size_t>(flow.rows));
      int y = kMargin;
      for (std::size_t row = 0; row < labelTop.size(); ++row) {
        labelTop[row] = y;
        if (flow.labelOnly[row] || flow.labelled[row]) y += kHeaderHeight + kSpacing;
        chartTop[row] = y;
        if (!flow.labelOnly[row]) y += chartHeight + kSpacing;
      }
      const auto cellX = [&](int column) { return kMargin + column * (chartWidth + kSpacing); };
      for (std::size_t s = 0; s < arrangement_.sections.size(); ++s) {
        const ChartSection& section = arrangement_.sections[s];
        const SectionFlow& place = flow.sections[s];
        QToolButton* header = sectionHeader(section);
        header->setGeometry(cellX(place.header.column), labelTop[static_cast<std::size_t>(place.header.row)],
                            std::max(1, place.headerSpan * (chartWidth + kSpacing) - kSpacing), kHeaderHeight);
        header->show();
        headers.insert(section.name);
        for (std::size_t i = 0; i < section.shown.size(); ++i) {
          const FlowCell cell = place.charts[i];
          placeChart(charts_.at(section.shown[i]),
                     QRect(cellX(cell.column), chartTop[static_cast<std::size_t>(cell.row)], chartWidth, chartHeight));
          shown.insert(section.shown[i]);
        }
      }
      height = y + kMargin;
      break;
    }
  }
  for (const auto& [name, chart] : charts_) {
    if (!shown.contains(name)) chart->hide();
  }
  for (auto header = headers_.begin(); header != headers_.end();) {
    if (headers.contains(header->first)) {
      ++header;
      continue;
    }
    header->second->deleteLater();
    header = headers_.erase(header);
  }
  content_->setMinimumHeight(height);
}

bool ChartGrid::eventFilter(QObject* watched, QEvent* event) {
  // The content follows the viewport's width: place the charts again when it changes.
  if (watched == content_ && event->type() == QEvent::Resize) relayout();
  return QScrollArea::eventFilter(watched, event);
}

void ChartGrid::resizeEvent(QResizeEvent* event) {
  QScrollArea::resizeEvent(event);
  // An enlarged chart follows the viewport's height, which does not always resize the content.
  if (arrangement_.mode == ChartArrangement::Mode::Single) relayout();
}

void ChartGrid::keyPressEvent(QKeyEvent* event) {
  if (event->key() == Qt::Key_Escape && choices_.enlarged) {
    setEnlarged(std::nullopt);
    return;
  }
  QScrollArea::keyPressEvent(event);
}

void ChartGrid::setTimeAxisMode(TimeAxisMode mode) {
  view_.setMode(mode);
  if (view_.paused()) setPaused(true);  // the frozen edge, in the new mode's units
}

void ChartGrid::setTimeRange(TimeRange range) { view_.setRange(range); }

void ChartGrid::setPaused(bool paused) {
  const std::optional<XRange> extent = registry_.extent(TimeView::timeMode(view_.mode()));
  view_.setPaused(paused, extent ? std::optional<double>(extent->max) : std::nullopt);
}

void ChartGrid::showRange(XRange range) { view_.showFixed(range); }

void ChartGrid::followLive() { view_.followLive(); }

StatChartView* ChartGrid::chart(const QString& statName) const {
  const auto found = charts_.find(statName);
  return found != charts_.end() ? found->second : nullptr;
}

bool ChartGrid::revealChart(const QString& statName) {
  StatChartView* shown = chart(statName);
  if (shown == nullptr || !choices_.filter.matches(statName)) return false;
  if (choices_.enlarged && choices_.enlarged != statName) setEnlarged(std::nullopt);
  setSectionCollapsed(isPinned(statName) ? kPinnedSection : chartSection(statName), false);
  // Not ensureWidgetVisible: it brings a QGraphicsView's input cursor into view, a corner.
  const QPoint centre = shown->mapTo(content_, shown->rect().center());
  ensureVisible(centre.x(), centre.y(), shown->width() / 2 + kMargin, shown->height() / 2 + kMargin);
  return shown->isVisible();
}

std::size_t ChartGrid::undrawnLineCount() const { return undrawn_.size(); }

std::vector<StatChartView*> ChartGrid::charts() const {
  std::vector<StatChartView*> result;
  result.reserve(charts_.size());
  for (const auto& [name, chart] : charts_) result.push_back(chart);
  return result;
}

}  // namespace livemon::ui
