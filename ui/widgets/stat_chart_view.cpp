#include <livemon/ui/widgets/stat_chart_view.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <set>
#include <utility>

#include <QEvent>
#include <QGraphicsLayout>
#include <QtCharts/QChart>
#include <QtCharts/QLegend>
#include <QtCharts/QLineSeries>

#include <livemon/ui/model/chart_axes.h>
#include <livemon/ui/model/chart_sections.h>
#include <livemon/ui/model/chart_view_options.h>
#include <livemon/ui/model/run_display.h>
#include <livemon/ui/widgets/chart_band.h>
#include <livemon/ui/widgets/chart_gestures.h>
#include <livemon/ui/widgets/chart_nan_regions.h>
#include <livemon/ui/widgets/chart_legend.h>
#include <livemon/ui/widgets/chart_step_note.h>
#include <livemon/ui/widgets/chart_tooltip.h>
#include <livemon/ui/widgets/chart_x_axis.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

namespace {
// Points are decimated to columns this many pixels wide: at most four points (first, min, max,
// last) per column, two per pixel. A line is two pixels wide, so narrower columns add points
// (and Qt's per-point cost of working out a line's shape and painting it) that cannot be seen.
constexpr int kPixelsPerColumn = 2;
}  // namespace

StatChartView::StatChartView(const QString& statName, const StatRegistry& registry, TimeAxisMode mode,
                             QWidget* parent)
    : QChartView(new QChart(), parent), statName_(statName), registry_(registry), mode_(mode), yAxes_(chart()) {
  QChart* chart = this->chart();
  chart->setTitle(statName_);
  styleChart(chart);
  chart->legend()->hide();  // ChartLegend's rows below the plot instead
  setRenderHint(QPainter::Antialiasing);
  setRubberBand(QChartView::NoRubberBand);
  setMouseTracking(true);
  setFrameShape(QFrame::NoFrame);
  setBackgroundBrush(QColor(colours::window()));
  setMinimumSize(320, 240);

  installXAxis(mode_);
  stepNote_ = std::make_unique<ChartStepNote>(chart);
  nanRegions_ = std::make_unique<ChartNanRegions>(chart);

  legend_ = std::make_unique<ChartLegend>(chart, [this](int64_t key) { legendClicked(key); });
  hover_ = std::make_unique<ChartHover>(*this, [this](QPoint pos) { return tooltipAt(pos); });
  gestures_ = std::make_unique<ChartGestures>(*this);
}

void StatChartView::changeEvent(QEvent* event) {
  QChartView::changeEvent(event);
  if (event->type() != QEvent::PaletteChange) return;
  restyleChartColours(chart());
  setBackgroundBrush(QColor(colours::window()));
  styleLines();
  updateLegend();
  viewport()->update();
}

StatChartView::~StatChartView() {
  // The areas refer to their edge series, which this view owns: remove the chart's series first.
  chart()->removeAllSeries();
}

bool StatChartView::addSeries(SeriesId id) {
  // Both searches are short: a chart holds at most maxLines_ lines.
  for (const auto& line : lines_) {
    if (line->id == id) return true;
  }
  if (std::find(pendingSeries_.begin(), pendingSeries_.end(), id) != pendingSeries_.end()) return true;
  if (lineCount() >= maxLines_) return false;
  pendingSeries_.push_back(id);
  return true;
}

void StatChartView::removeSeries(const std::vector<SeriesId>& ids) {
  const auto removed = [&ids](SeriesId id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); };
  std::erase_if(pendingSeries_, removed);
  const auto goes = [&removed](const Line* line) { return line != nullptr && removed(line->id); };
  if (std::none_of(lines_.begin(), lines_.end(), [&goes](const auto& line) { return goes(line.get()); })) return;
  hover_->hide();  // its text may name a line that goes
  // A band loses its area with either edge; one left with no edge at all goes too.
  for (Band& band : bands_) {
    if (!goes(band.min) && !goes(band.max)) continue;
    if (band.area != nullptr) {
      band.area->destroy();
      band.area.reset();
    }
    if (goes(band.min)) band.min = nullptr;
    if (goes(band.max)) band.max = nullptr;
  }
  std::erase_if(bands_, [](const Band& band) { return band.min == nullptr && band.max == nullptr; });
  std::erase_if(lines_, [&](const std::unique_ptr<Line>& line) {
    if (!removed(line->id)) return false;
    line->raw->destroy();
    line->smooth->destroy();
    return true;
  });
  configureYAxes();
  // Fewer sources may mean one: the lines take their aggregations' colours and names again.
  styleLines();
  updateLegend();
  ++layoutVersion_;
}

// Re-adds every series in legend order (bands first, so lines draw over them).
void StatChartView::rebuildSeries() {
  QChart* chart = this->chart();
  for (const auto& line : lines_) {
    line->raw->takeOff();
    line->smooth->takeOff();
  }
  for (const Band& band : bands_) {
    if (band.area != nullptr) band.area->takeOff();  // a max without a min has no area
  }

  for (SeriesId id : pendingSeries_) {
    const SeriesEntry* entry = registry_.series(id);
    if (entry == nullptr) continue;
    auto line = std::make_unique<Line>();
    line->id = id;
    line->entry = entry;
    line->count = isCountAxis(entry->aggregation);
    line->hidden = lineHiddenAtFirst(statName_, entry->aggregation);
    line->raw = std::make_unique<ChartTrace>(chart);
    line->smooth = std::make_unique<ChartTrace>(chart);
    lines_.push_back(std::move(line));
  }
  pendingSeries_.clear();
  std::stable_sort(lines_.begin(), lines_.end(), [](const auto& a, const auto& b) {
    const int orderA = aggregationOrder(a->entry->aggregation);
    const int orderB = aggregationOrder(b->entry->aggregation);
    if (orderA != orderB) return orderA < orderB;
    if (a->entry->aggregation != b->entry->aggregation) return a->entry->aggregation < b->entry->aggregation;
    return a->entry->source < b->entry->source;
  });

  pairBands();
  for (Band& band : bands_) {
    if (band.area == nullptr && band.min != nullptr && band.max != nullptr) band.area = std::make_unique<ChartBand>(chart);
  }

  configureYAxes();
  for (const Band& band : bands_) {
    if (band.area != nullptr) band.area->putOn(xAxis_, yAxes_.values());
  }
  // The raw lines first (their legend entries in order), so every smoothed line draws over them.
  for (const auto& line : lines_) line->raw->putOn(xAxis_, yAxes_.axisFor(line->count));
  for (const auto& line : lines_) line->smooth->putOn(xAxis_, yAxes_.axisFor(line->count));
  styleLines();
  updateLegend();
  ++layoutVersion_;
}

void StatChartView::installXAxis(TimeAxisMode mode) {
  QChart* chart = this->chart();
  if (xAxis_ != nullptr) {
    chart->removeAxis(xAxis_);
    delete xAxis_;
  }
  xAxis_ = makeTimeAxis(mode);
  chart->addAxis(xAxis_, Qt::AlignBottom);
  for (const auto& line : lines_) {
    line->raw->attachX(xAxis_);
    line->smooth->attachX(xAxis_);
  }
  for (const Band& band : bands_) {
    if (band.area != nullptr) band.area->attachX(xAxis_);
  }
  mode_ = mode;
}

void StatChartView::setViewOptions(ChartViewOptions* options) {
  options_ = options;
  ++layoutVersion_;
}

// The left axis titled with the values' unit, and `count` on its own axis when it shares the
// chart with other aggregations.
void StatChartView::configureYAxes() {
  QStringList aggregations;
  bool counts = false;
  bool others = false;
  for (const auto& line : lines_) {
    aggregations << line->entry->aggregation;
    // A hidden count (a range chart's, at first) takes no axis of its own.
    if (line->count) counts = counts || isShown(*line);
    else others = true;
  }
  const bool log = options_ != nullptr && options_->logScale(statName_);
  if (log && !yAxes_.isLog()) {
    // Points a log axis cannot take would be plotted against it until the next draw: empty first.
    for (const auto& line : lines_) {
      line->raw->clear();
      line->smooth->clear();
    }
    for (const Band& band : bands_) {
      if (band.area != nullptr) band.area->clear();
    }
  }
  if (yAxes_.configure(counts && others, log, valueUnit(statName_, aggregations))) attachAll();
  // A scale of its own (kept from an earlier session, say) would otherwise go unnoticed.
  const bool own = options_ != nullptr && log != options_->logScaleAll();
  yAxes_.setBadge(!own ? QString() : log ? QStringLiteral("log") : QStringLiteral("linear"));
}

// The y axes were replaced: every series on the chart attaches to the new ones.
void StatChartView::attachAll() {
  for (const Band& band : bands_) {
    if (band.area != nullptr) band.area->attachY(yAxes_.values());
  }
  for (const auto& line : lines_) {
    line->raw->attachY(yAxes_.axisFor(line->count));
    line->smooth->attachY(yAxes_.axisFor(line->count));
  }
  ++layoutVersion_;
}

void StatChartView::setTimeAxisMode(TimeAxisMode mode) {
  if (mode == mode_) return;
  installXAxis(mode);
  ++layoutVersion_;
}

// The viewport's region: the view's own is empty, as the viewport is an opaque child covering it.
bool StatChartView::isOnScreen() const { return isVisible() && !viewport()->visibleRegion().isEmpty(); }

uint64_t StatChartView::dataVersion() const {
  uint64_t version = 0;
  for (const auto& line : lines_) version += line->entry->store.version();
  return version;
}

QRect StatChartView::plotRect() const {
  const QRectF inScene = chart()->mapRectToScene(chart()->plotArea());
  return mapFromScene(inScene).boundingRect();
}

StatChartView::RenderKey StatChartView::keyFor(const ChartRenderContext& context) const {
  const QRectF plot = chart()->plotArea();
  RenderKey key;
  key.mode = context.mode;
  key.x = context.x;
  key.window = context.window;
  key.columns = std::max(16, static_cast<int>(plot.width() > 0 ? plot.width() : width() - 80) / kPixelsPerColumn);
  key.rows = std::max(16, static_cast<int>(plot.height() > 0 ? plot.height() : height() - 80));
  key.data = context.frozen && lastKey_ ? frozenData_ : dataVersion();
  key.layout = layoutVersion_ + pendingSeries_.size() + (context.mode != mode_ ? 1 : 0);
  key.manualY = manualY_;
  key.options = options_ != nullptr ? options_->version() : 0;
  key.runs = runs_.display != nullptr ? runs_.display->version() : 0;
  key.following = context.following;
  return key;
}

bool StatChartView::needsRender(const ChartRenderContext& context) const {
  return isOnScreen() && (!lastKey_ || !(*lastKey_ == keyFor(context)));
}

bool StatChartView::render(const ChartRenderContext& context, bool force) {
  if (!force && !isOnScreen()) return false;
  if (!pendingSeries_.empty()) rebuildSeries();
  if (context.mode != mode_) setTimeAxisMode(context.mode);

  RenderKey key = keyFor(context);
  if (!force && lastKey_ && *lastKey_ == key) return false;
  // New axis labels may resize the plot: then it draws again at once for its new width, rather
  // than on the next refresh (which would cost a second paint).
  if (!draw(context, key, true)) draw(context, keyFor(context), false);
  nanRegions_->place(lines_.empty() ? nullptr : lines_.front()->series());
  emit rendered();
  // All of it: the scene repaints a moved item where it was last painted, worked out later; a
  // partial paint before then (another widget's update) records the new places and leaves old
  // tick labels and plot edges on screen. A redraw changes most of the chart anyway.
  viewport()->update();
  return true;
}

bool StatChartView::draw(const ChartRenderContext& context, const RenderKey& key, bool settle) {
  const double smoothing = effectiveSmoothing();
  const bool runsChanged = runs_.display != nullptr && runs_.display->version() != runs_.version;
  if (smoothing != smoothing_ || runsChanged) {
    smoothing_ = smoothing;
    styleLines();  // the smoothed lines come or go, the raw ones fade or return; runs shown or hidden
  }
  configureYAxes();  // the log scale may have been switched
  lastKey_ = key;
  frozenData_ = key.data;
  const bool log = yAxes_.isLog();

  const bool steps = context.mode == TimeAxisMode::Step;
  TraceRequest plot;
  plot.xMin = context.x.min;
  plot.xMax = context.x.max;
  plot.columns = key.columns;
  // With the Step axis the cutoff is a time: the window ends there already.
  plot.cutoff = steps ? std::numeric_limits<double>::infinity()
                      : context.cutoff.value_or(std::numeric_limits<double>::infinity());
  plot.smoothing = smoothing;
  plot.positiveOnly = log;
  shownWindow_ = context.window;
  YExtent values;
  YExtent counts;
  std::size_t nonPositive = 0;
  std::vector<double> fitted;  // the values' points in view, for a linear axis to leave out outliers
  QStringList stepless;  // shown lines with no step at all
  bool stepped = false;
  std::vector<ChartNanRegions::LineRuns> nonFinite;
  for (const auto& line : lines_) {
    TraceRequest request = plot;
    request.transform = registry_.transform(*line->entry, context.mode);
    if (isRankEdge(*line)) request.smoothing = 0.0;  // drawn as its band only, which is never smoothed
    traceSeries(line->entry->store, context.mode, context.window, line->steps, request, line->trace);
    // Its p99 comes first in lines_, so it is traced already.
    if (const Line* p99 = p99Under(*line); p99 != nullptr || line->onP99) {
      bool hid = p99 != nullptr && hideWhereEqual(line->trace.raw, p99->trace.raw, request.maxStretches);
      hid = (p99 != nullptr && hideWhereEqual(line->trace.smoothed, p99->trace.smoothed, request.maxStretches)) || hid;
      if (hid != line->onP99) {
        line->onP99 = hid;  // the legend says where the max is not drawn
        line->raw->setName(lineName(*line));
        line->smooth->setName(lineName(*line));
      }
    }
    if (!isShown(*line)) continue;
    nonFinite.push_back({lineName(*line), nonFiniteStretches(line->entry->store, context.mode, request.transform,
                                                             context.window, plot.cutoff)});
    if (line->entry->store.hasSteps()) stepped = true;
    else stepless.append(lineName(*line));
    const bool onCounts = line->count && yAxes_.hasCountAxis();
    YExtent& extent = onCounts ? counts : values;
    extent.add(line->trace.raw.summary);
    extent.add(line->trace.smoothed.summary);
    if (!log && !onCounts) pointsInView(line->trace, plot, fitted);
    nonPositive += line->trace.nonPositive;
  }
  // After the lines: a band breaks where they do.
  std::vector<std::vector<BandStretch>> bandStretches(bands_.size());
  for (std::size_t b = 0; b < bands_.size(); ++b) {
    const Band& band = bands_[b];
    if (band.area == nullptr) continue;
    const Line& min = *band.min;
    const Line& max = *band.max;
    bandStretches[b] =
        steps ? traceBandStretches(min.steps, {}, min.trace.raw, max.steps, {}, max.trace.raw, plot)
              : traceBandStretches(min.entry->store, registry_.transform(*min.entry, context.mode), min.trace.raw,
                                   max.entry->store, registry_.transform(*max.entry, context.mode), max.trace.raw, plot);
  }
  updateLegend();  // after the traces: a line drawn nowhere in view is not listed
  stepNote_->update(steps, stepless, stepped);
  nanRegions_->setRuns(nonFinite, context.mode);
  // A few values orders of magnitude beyond the rest (a diverged loss) would flatten it.
  const FittedExtent fit = !log && values.any() ? fitExtent(fitted) : FittedExtent{};
  if (fit.above + fit.below > 0) {
    values.low = fit.low;
    values.high = fit.high;
  }
  yAxes_.setOffScale(manualY_ ? FittedExtent{} : fit);
  const auto pad = [log](const YExtent& extent) { return log ? paddedLogY(extent.low, extent.high) : paddedY(extent.low, extent.high); };
  XRange y = values.any() ? pad(values) : shownY_;
  if (log && !(y.min > 0.0)) y = paddedLogY(0.0, 0.0);  // left from a linear axis
  if (manualY_ && (!log || manualY_->min > 0.0)) y = *manualY_;
  const std::optional<XRange> countRange = counts.any() ? std::optional<XRange>(pad(counts)) : std::nullopt;
  antialias(y, countRange, key);
  // The series get their points after the axes their ranges: a new range makes every series work
  // out its shape again (Qt's stroker over all its points), which for points about to be replaced
  // is wasted. Emptied first, they are shaped once, with their new points.
  for (const auto& line : lines_) {
    line->raw->empty();
    line->smooth->empty();
  }
  for (Band& band : bands_) {
    if (band.area != nullptr) band.area->empty();
  }
  const bool relabelled = updateAxes(context, y, countRange);
  yAxes_.setLeftOut(log ? nonPositive : 0);
  gestures_->showZoomed(!context.following || manualY_.has_value());
  // Lay the chart out now (new axis labels change the plot area): left to the event loop, it
  // would happen after the first paint and cost a second one. Qt does not always see that new
  // labels need another width: they would be cut to "...".
  if (relabelled) chart()->layout()->invalidate();
  chart()->layout()->activate();
  // A plot of another size wants other columns: the points traced for this one would be shaped by
  // Qt (a stroke of every point) only to be replaced at once.
  if (settle && !(keyFor(context) == key)) return false;
  const int plotWidth = plot.columns * kPixelsPerColumn;
  for (const auto& line : lines_) {
    line->raw->setPoints(line->trace.raw.points, line->trace.raw.breaks, plotWidth);
    if (smoothing > 0.0) line->smooth->setPoints(line->trace.smoothed.points, line->trace.smoothed.breaks, plotWidth);
    else if (line->smooth->stretchCount() > 0) line->smooth->clear();
  }
  for (std::size_t b = 0; b < bands_.size(); ++b) {
    if (bands_[b].area != nullptr) bands_[b].area->setStretches(bandStretches[b]);
  }
  return true;
}

void StatChartView::antialias(XRange y, std::optional<XRange> counts, const RenderKey& key) {
  const bool log = yAxes_.isLog();
  double travel = 0.0;  // in plot heights
  for (const auto& line : lines_) {
    if (!isShown(*line)) continue;
    const XRange range = line->count && yAxes_.hasCountAxis() && counts ? *counts : y;
    travel += verticalTravel(line->trace.raw.points, range, log);
    if (smoothing_ > 0.0) travel += verticalTravel(line->trace.smoothed.points, range, log);
  }
  const bool wasDense = !renderHints().testFlag(QPainter::Antialiasing);
  const bool dense = drawsDense(travel * key.rows, static_cast<double>(key.columns) * kPixelsPerColumn, wasDense);
  if (dense != wasDense) setRenderHint(QPainter::Antialiasing, !dense);
}

void StatChartView::pointsInView(const TraceResult& trace, const TraceRequest& request, std::vector<double>& values) {
  for (const TracedLine* traced : {&trace.raw, &trace.smoothed}) {
    for (const QPointF& point : traced->points) {
      if (point.x() >= request.xMin && point.x() <= request.xMax && std::isfinite(point.y())) values.push_back(point.y());
    }
  }
}

bool StatChartView::updateAxes(const ChartRenderContext& context, XRange y, std::optional<XRange> counts) {
  const QRectF plot = chart()->plotArea();
  const double width = plot.width() > 0 ? plot.width() : 400.0;
  const double height = plot.height() > 0 ? plot.height() : 160.0;
  shownX_ = context.x;
  shownY_ = y;
  setTimeAxisRange(xAxis_, context.x, width);
  return yAxes_.setRanges(y, counts, height);
}

}  // namespace livemon::ui
