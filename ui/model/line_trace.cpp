#include <livemon/ui/model/line_trace.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <livemon/ui/model/smoothing.h>

namespace livemon::ui {

namespace {

// The fewest decimator columns a gap must span to break a line (see traceSeriesOf).
constexpr double kMinGapColumns = 2.0;

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

double verticalTravel(const QList<QPointF>& points, XRange y, bool log) {
  const auto scaled = [log](double v) { return log ? std::log10(v) : v; };
  const double low = scaled(y.min);
  const double high = scaled(y.max);
  if (!(high > low) || !std::isfinite(high - low)) return 0.0;
  double travel = 0.0;
  std::optional<double> previous;
  for (const QPointF& point : points) {
    if (log && !(point.y() > 0.0)) continue;
    const double at = std::clamp(scaled(point.y()), low, high);
    if (!std::isfinite(at)) continue;
    if (previous) travel += std::abs(at - *previous);
    previous = at;
  }
  return travel / (high - low);
}

bool drawsDense(double travelPixels, double widthPixels, bool wasDense) {
  if (!(widthPixels > 0.0)) return wasDense;
  const double perPixel = travelPixels / widthPixels;
  return wasDense ? !(perPixel < kSparseTravel) : perPixel > kDenseTravel;
}

void YExtent::add(const DecimationSummary& summary) noexcept {
  if (summary.empty()) return;
  low = std::min(low, summary.yMin);
  high = std::max(high, summary.yMax);
}

namespace {

template <typename Points>
void traceBandOf(const Points& min, PlotTransform minTransform, const Points& max, PlotTransform maxTransform,
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

template <typename Points>
void traceSeriesOf(const Points& store, const TraceRequest& plotRequest, TraceResult& result) {
  TraceRequest request = plotRequest;  // in the store's units
  request.xMin = toStore(plotRequest.xMin, plotRequest.transform);
  request.xMax = toStore(plotRequest.xMax, plotRequest.transform);
  request.cutoff = toStore(plotRequest.cutoff, plotRequest.transform);
  result.nonPositive = 0;
  const bool smooth = request.smoothing > 0.0;
  ColumnDecimator raw(request.xMin, request.xMax, request.columns, request.transform, result.raw.points);
  std::optional<ColumnDecimator> smoothed;
  if (smooth) smoothed.emplace(request.xMin, request.xMax, request.columns, request.transform, result.smoothed.points);
  ExponentialSmoother ema(request.smoothing);

  const double typical = store.typicalInterval();
  // A spacing breaks the line only where the break can be seen: a gap within a couple of columns
  // is covered by the line's own width and caps, and breaking there only cuts the line into dots
  // (windows of a few milliseconds, each closing a little late on a loaded machine).
  const double columnWidth = (request.xMax - request.xMin) / std::max(request.columns, 1);
  const double gapLimit = request.gapFactor > 0.0 && typical > 0.0
                              ? std::max(request.gapFactor * typical, kMinGapColumns * columnWidth)
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
    result.smoothed.points.clear();
    result.smoothed.summary = DecimationSummary{};
    result.smoothed.breaks.clear();
  }
}

template <typename Points>
std::vector<BandStretch> traceBandStretchesOf(const Points& min, PlotTransform minTransform, const TracedLine& minLine,
                                              const Points& max, PlotTransform maxTransform, const TracedLine& maxLine,
                                              const TraceRequest& request) {
  QList<QPointF> lower;
  QList<QPointF> upper;
  traceBandOf(min, minTransform, max, maxTransform, request, lower, upper);
  std::vector<std::pair<double, double>> gaps = gapsOf(minLine);
  const std::vector<std::pair<double, double>> maxGaps = gapsOf(maxLine);
  gaps.insert(gaps.end(), maxGaps.begin(), maxGaps.end());
  return splitBand(lower, upper, std::move(gaps), request.maxStretches);
}

}  // namespace

std::vector<BandStretch> traceBandStretches(const SeriesStore& min, PlotTransform minTransform, const TracedLine& minLine,
                                            const SeriesStore& max, PlotTransform maxTransform, const TracedLine& maxLine,
                                            const TraceRequest& request) {
  return traceBandStretchesOf(min, minTransform, minLine, max, maxTransform, maxLine, request);
}

std::vector<BandStretch> traceBandStretches(const StepPoints& min, PlotTransform minTransform, const TracedLine& minLine,
                                            const StepPoints& max, PlotTransform maxTransform, const TracedLine& maxLine,
                                            const TraceRequest& request) {
  return traceBandStretchesOf(min, minTransform, minLine, max, maxTransform, maxLine, request);
}

void traceSeries(const SeriesStore& store, const TraceRequest& request, TraceResult& result) {
  traceSeriesOf(store, request, result);
}

void traceSeries(const StepPoints& points, const TraceRequest& request, TraceResult& result) {
  traceSeriesOf(points, request, result);
}

void traceSeries(const SeriesStore& store, TimeAxisMode mode, XRange window, StepPoints& steps,
                 const TraceRequest& request, TraceResult& result) {
  if (mode != TimeAxisMode::Step) {
    traceSeries(store, request, result);
    return;
  }
  steps.build(store, window);
  traceSeries(steps, request, result);
}

void traceBand(const SeriesStore& min, PlotTransform minTransform, const SeriesStore& max, PlotTransform maxTransform,
               const TraceRequest& request, QList<QPointF>& lower, QList<QPointF>& upper) {
  traceBandOf(min, minTransform, max, maxTransform, request, lower, upper);
}

void traceBand(const StepPoints& min, PlotTransform minTransform, const StepPoints& max, PlotTransform maxTransform,
               const TraceRequest& request, QList<QPointF>& lower, QList<QPointF>& upper) {
  traceBandOf(min, minTransform, max, maxTransform, request, lower, upper);
}

bool hideWhereEqual(TracedLine& line, const TracedLine& under, std::size_t maxStretches) {
  const QList<QPointF>& points = line.points;
  const qsizetype n = points.size();
  if (n == 0 || under.points.isEmpty()) return false;
  // Which points lie on `under`: one pass over both, by x.
  std::vector<char> equal(static_cast<std::size_t>(n), 0);
  qsizetype u = 0;
  for (qsizetype i = 0; i < n; ++i) {
    while (u < under.points.size() && under.points[u].x() < points[i].x()) ++u;
    equal[static_cast<std::size_t>(i)] = u < under.points.size() && under.points[u] == points[i] ? 1 : 0;
  }
  const auto stretchStart = [&](qsizetype i) {
    return i == 0 || std::binary_search(line.breaks.begin(), line.breaks.end(), i);
  };
  // Kept: differs, or next to one that does within the same stretch.
  std::vector<char> keep(static_cast<std::size_t>(n), 0);
  for (qsizetype i = 0; i < n; ++i) {
    if (equal[static_cast<std::size_t>(i)] == 0) {
      keep[static_cast<std::size_t>(i)] = 1;
      if (i > 0 && !stretchStart(i)) keep[static_cast<std::size_t>(i - 1)] = 1;
      if (i + 1 < n && !stretchStart(i + 1)) keep[static_cast<std::size_t>(i + 1)] = 1;
    }
  }
  QList<QPointF> kept;
  std::vector<qsizetype> breaks;
  kept.reserve(n);
  qsizetype open = -1;  // where the stretch being built starts in `kept`
  const auto close = [&] {
    // A single point draws nothing: it goes.
    if (open >= 0 && kept.size() - open < 2) {
      kept.resize(open);
      if (!breaks.empty() && breaks.back() == open) breaks.pop_back();
    }
    open = -1;
  };
  for (qsizetype i = 0; i < n; ++i) {
    if (keep[static_cast<std::size_t>(i)] == 0) {
      close();
      continue;
    }
    if (open >= 0 && stretchStart(i)) close();
    if (open < 0) {
      open = kept.size();
      if (!kept.isEmpty()) breaks.push_back(open);
    }
    kept.append(points[i]);
  }
  close();
  // Each stretch is a series on the chart: too many, and the line is drawn whole instead.
  if (breaks.size() + 1 > std::max<std::size_t>(maxStretches, 1) || kept.size() == n) return false;
  line.points = std::move(kept);
  line.breaks = std::move(breaks);
  return true;
}

std::vector<NonFiniteStretch> nonFiniteStretches(const SeriesStore& store, TimeAxisMode mode, PlotTransform transform,
                                                 XRange window, double cutoff) {
  std::vector<NonFiniteStretch> stretches;
  for (const SeriesStore::NonFiniteSpan& span : store.nonFiniteSpans()) {
    const SeriesStore::Point& last = span.end ? *span.end : span.last;
    NonFiniteStretch stretch{0.0, 0.0, span.nan, !span.end};
    if (mode == TimeAxisMode::Step) {
      if (!hasStep(span.first.step) || span.first.x > window.max || last.x < window.min) continue;
      stretch.from = span.first.step;
      stretch.to = hasStep(last.step) ? last.step : span.last.step;
      if (!hasStep(stretch.to)) stretch.to = stretch.from;
    } else {
      stretch.from = transform.apply(span.first.x);
      stretch.to = transform.apply(last.x);
      if (stretch.from > cutoff) continue;
      stretch.to = std::min(stretch.to, cutoff);
    }
    stretch.to = std::max(stretch.to, stretch.from);
    stretches.push_back(stretch);
  }
  std::sort(stretches.begin(), stretches.end(),
            [](const NonFiniteStretch& a, const NonFiniteStretch& b) { return a.from < b.from; });
  return stretches;
}

std::vector<std::pair<double, double>> gapsOf(const TracedLine& line) {
  std::vector<std::pair<double, double>> gaps;
  gaps.reserve(line.breaks.size());
  for (qsizetype b : line.breaks) {
    if (b > 0 && b < line.points.size()) gaps.emplace_back(line.points[b - 1].x(), line.points[b].x());
  }
  return gaps;
}

std::vector<BandStretch> splitBand(const QList<QPointF>& lower, const QList<QPointF>& upper,
                                   std::vector<std::pair<double, double>> gaps, std::size_t maxStretches) {
  std::sort(gaps.begin(), gaps.end());
  // A point belongs to the stretch after every gap that ends at or before it.
  const auto stretchOf = [&gaps](double x) {
    std::size_t n = 0;
    while (n < gaps.size() && gaps[n].second <= x) ++n;
    return n;
  };
  std::vector<BandStretch> stretches;
  std::size_t l = 0;
  std::size_t u = 0;
  std::size_t g = 0;
  while (l < static_cast<std::size_t>(lower.size()) && u < static_cast<std::size_t>(upper.size())) {
    // The next stretch holding a point of either edge; its end is the next gap's start.
    g = std::max(g, std::min(stretchOf(lower[static_cast<qsizetype>(l)].x()), stretchOf(upper[static_cast<qsizetype>(u)].x())));
    const bool last = g >= gaps.size() || stretches.size() + 1 >= std::max<std::size_t>(maxStretches, 1);
    const double end = last ? std::numeric_limits<double>::infinity() : gaps[g].second;
    BandStretch stretch;
    for (; l < static_cast<std::size_t>(lower.size()) && lower[static_cast<qsizetype>(l)].x() < end; ++l) {
      stretch.lower.append(lower[static_cast<qsizetype>(l)]);
    }
    for (; u < static_cast<std::size_t>(upper.size()) && upper[static_cast<qsizetype>(u)].x() < end; ++u) {
      stretch.upper.append(upper[static_cast<qsizetype>(u)]);
    }
    if (!stretch.lower.isEmpty() && !stretch.upper.isEmpty()) stretches.push_back(std::move(stretch));
    ++g;
  }
  return stretches;
}

}  // namespace livemon::ui
