#pragma once

#include <cstddef>
#include <vector>

#include <QString>
#include <QStringList>

#include <livemon/ui/model/time_view.h>

namespace livemon::ui {

// Thread-safety: pure functions of their arguments; callable from any thread.
// Where a chart's axes put their ticks and how they label them, apart from the chart widget so
// that the arithmetic is tested on its own: round steps (1, 2 or 5 times a power of ten) for
// values, round local times for the wall clock, and a little room above and below the data.

// 1, 2 or 5 times a power of ten, at least `raw`; 1 for a step that is not positive and finite.
double niceStep(double raw);

// The round step for an axis `span` long drawn over `lengthPixels`, with about one tick per
// `pixelsPerTick` (at least two ticks).
double tickStep(double span, double lengthPixels, double pixelsPerTick);

// Thread-safety: a plain value type.
// Wall-clock ticks: the step, and a label format that shows what changes between ticks.
struct WallClockTicks {
  double stepMs = 0.0;
  QString format;
};

// The smallest step from a second to a week that leaves about 90 pixels per label over
// `widthPixels` for `spanMs`; labels with seconds below a minute's step, with the date past a
// day's span, and the date alone for steps of a day or more.
WallClockTicks wallClockTicks(double spanMs, double widthPixels);

// Thread-safety: a plain value type.
struct WallClockTick {
  double ms = 0.0;  // since the Unix epoch
  QString label;
};

// The ticks inside `x` (ms since the Unix epoch, exclusive of x.min), at round times of the local
// clock (a minute tick falls on :00 local time), ascending.
std::vector<WallClockTick> wallClockTickMarks(XRange x, double widthPixels);

// The y range to show for data from `low` to `high`: 8 % of the span above and below; a flat
// line (within a billionth of its value) gets ±10 % of its value (±1 at zero); no data (low >
// high or NaN) gets 0..1.
XRange paddedY(double low, double high);

// The y range to show on a log axis for positive data from `low` to `high`: 8 % of the span in
// decades above and below; a flat line gets a factor 1.5 either way; no positive data gets 1..10.
XRange paddedLogY(double low, double high);

// The unit of a Stat's values, from its name: "ms" for durations, "B" for a name ending in
// `_bytes`, "%" for `_percent` or `_pct`, "ms" for `_ms`, "s" for `_s` or `_seconds` (not
// `_per_s`, a rate: "/s"), "GB" and "MB" for `_gb` and `_mb`; empty when unknown. Durations are
// also the Stats of profiler ranges ("range/<name>", in ms by the core's contract) and of
// WaitCounters, recognised by the aggregations a WaitCounter's Stat logs (exactly count, mean,
// max, p50 and p99) as their names are the user's own. `count` has none (see isCountAxis).
QString valueUnit(const QString& statName, const QStringList& aggregations);

// Thread-safety: a plain value type.
// How an axis shows values of a unit: in `unit` (its title), each value divided by `factor`
// first. Bytes go up in binary steps (KiB, MiB, GiB, TiB), milliseconds become seconds from 10 s.
struct AxisScale {
  QString unit;
  double factor = 1.0;
};

// The scale for values of `unit` (valueUnit) up to `largest` in size.
AxisScale axisScale(const QString& unit, double largest);

// Thread-safety: a plain value type.
struct AxisTick {
  double value = 0.0;  // in the values' own unit, where the tick stands
  QString label;
};

// Thread-safety: a plain value type.
// A value axis's ticks and its title.
struct AxisTicks {
  QString title;
  std::vector<AxisTick> ticks;  // ascending, every label different
};

// The ticks of a linear axis over `range` (values in `unit`), `lengthPixels` long: round steps
// (1, 2, 2.5 or 5 times a power of ten, in the scaled unit), at least four ticks and about 20
// pixels apart at the closest, labels with the digits the step needs so that neighbours differ, and one notation for
// the axis: plain decimals, thousands as k, M, G and T from 10 000 on, and the same power of ten
// on every label where a step needs more than six decimals (2.941e-7).
AxisTicks linearTicks(XRange range, double lengthPixels, const QString& unit);

// The ticks of a log axis over `range` (positive, values in `unit`), `lengthPixels` long: the
// powers of ten (every other one and so on over many decades), with 3, or 2 and 5, or 2, 3 and 5
// times them between where there is room, the coarsest that gives four ticks; a range
// under a factor of 3 is ticked like a linear one.
AxisTicks logTicks(XRange range, double lengthPixels, const QString& unit);

// A value for a note or tooltip: up to four significant digits, thousands as k, M, G and T.
QString formatValue(double value);

// Thread-safety: a plain value type.
// The values a linear axis fits: all of them but a few far beyond the rest (fitExtent).
struct FittedExtent {
  double low = 0.0;
  double high = 0.0;
  std::size_t above = 0;  // values left out above `high`
  std::size_t below = 0;  // and below `low`
  double highest = 0.0;   // the largest left out above, the smallest below (when any)
  double lowest = 0.0;
};

// The extent of `values` (reordered) leaving out outliers, as TensorBoard's "ignore outliers in
// chart scaling" does, but only where a value lies orders of magnitude away: with at least 20
// values whose quartiles differ, when the largest is more than 50 times the quartiles' size above
// the upper one (a loss that diverged to 600 after falling from 2.3 to 0.5), the values more than
// ten interquartile ranges above it are left out; the same below. A loss that started at 10 and
// fell to 0.5 keeps its start, a step time its spikes, a constant its one spike.
FittedExtent fitExtent(std::vector<double>& values);

// Whether an aggregation is drawn against an axis of its own: `count` (a number of samples per
// window) beside durations or values would flatten them, whatever their unit.
bool isCountAxis(const QString& aggregation);

// An x value as a tooltip shows it: local time with milliseconds, seconds since the run's start, or
// "step N".
QString formatX(double x, TimeAxisMode mode);

}  // namespace livemon::ui
