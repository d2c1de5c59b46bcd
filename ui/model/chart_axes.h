#pragma once

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

// A printf format that shows values `step` apart without noise digits; %.3g for values of a
// million and more or steps below 1e-4.
QString labelFormatFor(double step, double largest);

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

// The unit of a Stat's values, for its axis title: "ms" for durations, empty when unknown.
// Durations are the Stats of profiler ranges ("range/<name>", in ms by the core's contract) and
// of WaitCounters, recognised by the aggregations a WaitCounter's Stat logs (exactly count, mean,
// max, p50 and p99) as their names are the user's own. `count` has none (see isCountAxis).
QString valueUnit(const QString& statName, const QStringList& aggregations);

// Whether an aggregation is drawn against an axis of its own: `count` (a number of samples per
// window) beside durations or values would flatten them, whatever their unit.
bool isCountAxis(const QString& aggregation);

// An x value as a tooltip shows it: local time with milliseconds, seconds since the run's start, or
// "step N".
QString formatX(double x, TimeAxisMode mode);

}  // namespace livemon::ui
