#include <livemon/ui/model/line_trace.h>

#include <algorithm>
#include <optional>

#include <livemon/ui/model/smoothing.h>

namespace livemon::ui {

namespace {

// Plot x back to store x: plot = (store - offset) * scale.
double toStore(double x, const PlotTransform& t) noexcept { return x / t.scale + t.offset; }

// Where one line leaves off: spacings over the limit and left-out values between kept points.
class GapTracker {
 public:
  GapTracker(PlotTransform transform, std::size_t maxGaps) : transform_(transform), maxGaps_(maxGaps) {}

  void dropped() noexcept { droppedSinceKept_ = true; }
  // A point is kept; `stalled`: it comes after a spacing over the limit.
  void kept(double x, bool stalled) {
    if (lastKept_ && (stalled || droppedSinceKept_) && gaps_.size() < maxGaps_) {
      gaps_.emplace_back(transform_.apply(*lastKept_), transform_.apply(x));
    }
    lastKept_ = x;
    droppedSinceKept_ = false;
  }
  const std::vector<std::pair<double, double>>& gaps() const noexcept { return gaps_; }

 private:
  PlotTransform transform_;
  std::size_t maxGaps_;
  std::optional<double> lastKept_;
  bool droppedSinceKept_ = false;
  std::vector<std::pair<double, double>> gaps_;
};

}  // namespace

std::vector<qsizetype> breaksAt(const QList<QPointF>& points, const std::vector<std::pair<double, double>>& gaps) {
  std::vector<qsizetype> breaks;
  std::size_t g = 0;
  for (qsizetype i = 1; i < points.size() && g < gaps.size(); ++i) {
    while (g < gaps.size() && gaps[g].first < points[i - 1].x()) ++g;  // between earlier points
    if (g < gaps.size() && gaps[g].second <= points[i].x()) {
      breaks.push_back(i);
      ++g;
    }
  }
  return breaks;
}

void YExtent::add(const DecimationSummary& summary) noexcept {
  if (summary.empty()) return;
  low = std::min(low, summary.yMin);
  high = std::max(high, summary.yMax);
}

void traceBand(const SeriesStore& min, PlotTransform minTransform, const SeriesStore& max, PlotTransform maxTransform,
               const TraceRequest& plotRequest, QList<QPointF>& lower, QList<QPointF>& upper) {
  const auto cutoff = [&](const PlotTransform& t) { return toStore(plotRequest.cutoff, t); };
  QList<QPointF> scratch;
  min.decimate(toStore(plotRequest.xMin, minTransform), toStore(plotRequest.xMax, minTransform), plotRequest.columns,
               minTransform, scratch, &lower, nullptr, cutoff(minTransform));
  max.decimate(toStore(plotRequest.xMin, maxTransform), toStore(plotRequest.xMax, maxTransform), plotRequest.columns,
               maxTransform, scratch, nullptr, &upper, cutoff(maxTransform));
  if (plotRequest.positiveOnly) {
    const auto notShown = [](const QPointF& p) { return !(p.y() > 0.0); };
    lower.removeIf(notShown);
    upper.removeIf(notShown);
  }
}

void traceSeries(const SeriesStore& store, const TraceRequest& plotRequest, TraceResult& result) {
  TraceRequest request = plotRequest;  // in the store's units
  request.xMin = toStore(plotRequest.xMin, plotRequest.transform);
  request.xMax = toStore(plotRequest.xMax, plotRequest.transform);
  request.cutoff = toStore(plotRequest.cutoff, plotRequest.transform);
  result.raw.points.clear();
  result.smoothed.points.clear();
  result.nonPositive = 0;
  const bool smooth = request.smoothing > 0.0;
  ColumnDecimator raw(request.xMin, request.xMax, request.columns, request.transform, result.raw.points);
  std::optional<ColumnDecimator> smoothed;
  if (smooth) smoothed.emplace(request.xMin, request.xMax, request.columns, request.transform, result.smoothed.points);
  ExponentialSmoother ema(request.smoothing);

  const double typical = store.typicalInterval();
  const double gapLimit = request.gapFactor > 0.0 && typical > 0.0 ? request.gapFactor * typical
                                                                      : std::numeric_limits<double>::infinity();
  const std::size_t maxGaps = std::max<std::size_t>(request.maxStretches, 1) - 1;
  GapTracker rawGaps(request.transform, maxGaps);
  GapTracker smoothGaps(request.transform, maxGaps);
  bool rawMore = true;
  bool smoothMore = smooth;
  std::optional<double> previousX;

  // One point of left neighbour for the raw line, the EMA's warm-up for the smoothed one.
  const std::size_t before = std::max<std::size_t>(1, smooth ? smoothingWarmup(request.smoothing) : 1);
  store.visitFrom(request.xMin, before, [&](double x, double y, bool adjacent) {
    if (x > request.cutoff) return false;
    const bool stalled = adjacent && previousX && x - *previousX > gapLimit;
    previousX = x;
    const double s = smooth ? ema.add(y) : 0.0;
    if (rawMore) {
      if (request.positiveOnly && !(y > 0.0)) {
        rawGaps.dropped();
        if (x >= request.xMin && x <= request.xMax) ++result.nonPositive;
      } else {
        rawGaps.kept(x, stalled);
        rawMore = raw.add(x, y);
      }
    }
    if (smoothMore) {
      if (request.positiveOnly && !(s > 0.0)) {
        smoothGaps.dropped();
      } else {
        smoothGaps.kept(x, stalled);
        smoothMore = smoothed->add(x, s);
      }
    }
    return rawMore || smoothMore;
  });
  result.raw.summary = raw.finish();
  result.raw.breaks = breaksAt(result.raw.points, rawGaps.gaps());
  if (smooth) {
    result.smoothed.summary = smoothed->finish();
    result.smoothed.breaks = breaksAt(result.smoothed.points, smoothGaps.gaps());
  } else {
    result.smoothed.summary = DecimationSummary{};
    result.smoothed.breaks.clear();
  }
}

}  // namespace livemon::ui
