#pragma once

#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include <QList>
#include <QPointF>

#include <livemon/ui/model/column_decimator.h>
#include <livemon/ui/model/series_store.h>
#include <livemon/ui/model/step_points.h>
#include <livemon/ui/model/time_view.h>

namespace livemon::ui {

// Thread-safety: a plain value type.
// What to draw of one series on a chart.
struct TraceRequest {
  double xMin = 0.0;  // the visible range, in plot units (the chart's x)
  double xMax = 0.0;
  int columns = 1;  // the plot's width in pixels (see ColumnDecimator)
  PlotTransform transform;  // the store's x (ms since the Unix epoch) to plot units
  double cutoff = std::numeric_limits<double>::infinity();  // plot x after which nothing is drawn (paused)
  double smoothing = 0.0;  // ExponentialSmoother's weight; 0 draws no smoothed line
  bool positiveOnly = false;  // a log axis: values <= 0 are left out, and the line breaks there
  // Two samples further apart than gapFactor times the series' usual interval are not joined: a
  // stall is drawn as a gap, not a slope across it. 0 joins everything. A spacing of two columns
  // or less is joined all the same: no gap that narrow would show.
  double gapFactor = 2.0;
  // A line breaks into at most this many stretches (each is a series on the chart); later gaps
  // are bridged, so data with gaps everywhere cannot make a chart build thousands of series.
  std::size_t maxStretches = 32;
};

// Thread-safety: a plain value type.
// A line's points (plot units) and where it breaks.
struct TracedLine {
  QList<QPointF> points;
  std::vector<qsizetype> breaks;  // ascending indices of the points that start a new stretch
  DecimationSummary summary;      // of the points in the visible range
};

// Thread-safety: a plain value type.
struct TraceResult {
  TracedLine raw;
  TracedLine smoothed;  // empty without smoothing
  std::size_t nonPositive = 0;  // with positiveOnly: the values <= 0 in the visible range left out
};

// Decimates a series for drawing (ColumnDecimator), and with smoothing also its debiased EMA
// (ExponentialSmoother, started smoothingWarmup() samples before the visible range and decimated
// the same way), and finds where both lines break: gaps longer than gapFactor usual intervals
// and two columns, and, with positiveOnly, the values a log axis cannot show. `result`'s lists
// are reused.
void traceSeries(const SeriesStore& store, const TraceRequest& request, TraceResult& result);
// The same for the Step axis: x is the step (the request's transform and cutoff still apply).
void traceSeries(const StepPoints& points, const TraceRequest& request, TraceResult& result);
// A store's line on the `mode` axis: the store itself on a time axis; on the Step axis, its points
// timed in `window`, built into `steps` (kept for the band, traceBandStretches).
void traceSeries(const SeriesStore& store, TimeAxisMode mode, XRange window, StepPoints& steps,
                 const TraceRequest& request, TraceResult& result);

// A min–max band's edges for the same view: `lower` from the min series' lowest point per
// column, `upper` from the max series' highest. With positiveOnly the points <= 0 are left out.
// `minTransform` and `maxTransform` map each store's x (the request's transform is not used).
void traceBand(const SeriesStore& min, PlotTransform minTransform, const SeriesStore& max, PlotTransform maxTransform,
               const TraceRequest& request, QList<QPointF>& lower, QList<QPointF>& upper);
void traceBand(const StepPoints& min, PlotTransform minTransform, const StepPoints& max, PlotTransform maxTransform,
               const TraceRequest& request, QList<QPointF>& lower, QList<QPointF>& upper);

// Leaves out of `line` where it lies on `under` (a point of the same x and y): a max line over
// its p99 in windows of under 100 samples, where the two are equal and one would hide the other.
// A point stays when it or a neighbour differs, so the line still leaves `under` and rejoins it
// where they part; a stretch of one point does not stay. Both are as traceSeries made them for
// the same request (ascending x). Were that more than `maxStretches` stretches, the line stays whole.
// Returns whether it left anything out.
bool hideWhereEqual(TracedLine& line, const TracedLine& under, std::size_t maxStretches);

// Thread-safety: a plain value type.
// One unbroken stretch of a band: its edges over the same span.
struct BandStretch {
  QList<QPointF> lower;
  QList<QPointF> upper;
};

// Where a traced line leaves off: from the point before each break to the point after it (plot
// units, ascending).
std::vector<std::pair<double, double>> gapsOf(const TracedLine& line);

// Cuts a band's edges (ascending x) into the stretches between `gaps` (the gaps of both edge
// lines, see gapsOf; any order), so a band breaks where its lines do instead of bridging a stall.
// Stretches where either edge has no point are left out; beyond `maxStretches` later gaps are
// bridged.
std::vector<BandStretch> splitBand(const QList<QPointF>& lower, const QList<QPointF>& upper,
                                   std::vector<std::pair<double, double>> gaps, std::size_t maxStretches);

// traceBand, then splitBand at the gaps of the band's min and max lines as traced (traceSeries)
// for the same request.
std::vector<BandStretch> traceBandStretches(const SeriesStore& min, PlotTransform minTransform, const TracedLine& minLine,
                                            const SeriesStore& max, PlotTransform maxTransform, const TracedLine& maxLine,
                                            const TraceRequest& request);
std::vector<BandStretch> traceBandStretches(const StepPoints& min, PlotTransform minTransform, const TracedLine& minLine,
                                            const StepPoints& max, PlotTransform maxTransform, const TracedLine& maxLine,
                                            const TraceRequest& request);

// Thread-safety: a plain value type.
// A run of non-finite values on a chart (plot units): from where the series became NaN or
// infinite to where it became finite again, or, while it still is, to its newest such value.
struct NonFiniteStretch {
  double from = 0.0;
  double to = 0.0;
  bool nan = false;   // NaN in it; otherwise infinities only
  bool open = false;  // still not finite at the newest value
};

// A store's runs of non-finite values (SeriesStore::nonFiniteSpans) on the `mode` axis: at their
// times through `transform`, or on the Step axis at their steps (runs timed outside `window`, or
// starting without a step, are left out). On a time axis a run starting after `cutoff` (plot x,
// a paused view) is left out and one over it ends there. Ascending.
std::vector<NonFiniteStretch> nonFiniteStretches(const SeriesStore& store, TimeAxisMode mode, PlotTransform transform,
                                                 XRange window, double cutoff);

// Not thread-safe: one owner at a time.
// The lowest and highest values of the lines an axis fits.
struct YExtent {
  double low = std::numeric_limits<double>::infinity();
  double high = -std::numeric_limits<double>::infinity();
  void add(const DecimationSummary& summary) noexcept;
  bool any() const noexcept { return low <= high; }
};

// Thread-safety: pure functions of their arguments; callable from any thread.
// How far a line goes up and down on a plot whose y axis spans `y`: the sum of its rises and
// falls between consecutive points, in plot heights (on a log axis, measured in its decades).
// A noisy series, decimated to columns, crosses much of the plot in every column; a smooth one
// crosses it a few times in all. Points outside `y` count as far as its edge.
double verticalTravel(const QList<QPointF>& points, XRange y, bool log);

// Whether a chart whose lines travel `travelPixels` up and down (verticalTravel times the plot's
// height) over a plot `widthPixels` wide is dense: more than kDenseTravel pixels for each pixel
// of width. Once dense, it stays so until under kSparseTravel, so that a chart near the line
// does not switch at every redraw. Such lines fill their columns: antialiasing their edges does
// not show, yet it costs most of their paint.
inline constexpr double kDenseTravel = 32.0;
inline constexpr double kSparseTravel = 24.0;
bool drawsDense(double travelPixels, double widthPixels, bool wasDense);

// The indices of `points` (ascending x) that start a new stretch, given `gaps` (ascending pairs
// of the x before and after each gap, in the points' units): a point starts a stretch when a gap
// lies between it and the point before it.
std::vector<qsizetype> breaksAt(const QList<QPointF>& points, const std::vector<std::pair<double, double>>& gaps);

}  // namespace livemon::ui
