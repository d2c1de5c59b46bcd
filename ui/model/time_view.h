#pragma once

#include <cstdint>
#include <optional>

#include <QString>

namespace livemon::ui {

// What the charts' x axis shows.
enum class TimeAxisMode {
  WallClock,      // x in milliseconds since the Unix epoch, labelled as local time
  SinceRunStart,  // x in seconds since the source's publisher started
  // x is the step each point's event stated (points without one are not drawn). The time range
  // still picks the points, by their time: see TimeView::window().
  Step,
};

// How much of the recent past the charts show while following live data.
enum class TimeRange { LastMinute, Last5Minutes, Last30Minutes, All };

// Stable names, used in settings: "wall" "run" "step"; "1min" "5min" "30min" "all".
QString timeAxisModeKey(TimeAxisMode mode);
std::optional<TimeAxisMode> timeAxisModeFromKey(const QString& key);
QString timeRangeKey(TimeRange range);
std::optional<TimeRange> timeRangeFromKey(const QString& key);
// Seconds covered by a range; std::nullopt for All.
std::optional<double> timeRangeSeconds(TimeRange range);

// Thread-safety: a plain value type.
// A visible x range, in the units of the current TimeAxisMode.
struct XRange {
  double min = 0.0;
  double max = 0.0;
  friend bool operator==(const XRange&, const XRange&) = default;
};

// Thread-compatible: used on the GUI thread.
// The x range every chart shows: either following the newest data (optionally frozen while
// paused) over the chosen TimeRange, or a fixed range the user zoomed or panned to. While the data
// is shorter than the range, the range runs from the first sample to the newest, so a young run
// fills the chart instead of huddling in its left part.
//
// With the Step axis the time range still says which points are shown, by their time: window()
// is that span in milliseconds since the Unix epoch (the paused edge is a time too), and the x
// range is the steps of the points in it (or the steps zoomed to).
// A live range widened outwards to multiples of a power of two near 1/64 of its width: its ends
// then move every few pixels instead of every GUI tick. Every
// move makes Qt Charts lay out the labels of every chart's axis again, which cost more than the
// rest of a tick at 100 charts. An empty or non-finite range is returned as it is.
XRange snapLiveEdge(XRange x);

// Not thread-safe: one owner at a time (each chart grid keeps its own).
// What the charts' x axis shows: the mode, the time range, following live data or a range the
// user zoomed or panned to, and the paused edge.
class TimeView {
 public:
  TimeAxisMode mode() const noexcept { return mode_; }
  TimeRange range() const noexcept { return range_; }
  bool followsLive() const noexcept { return !fixed_.has_value(); }
  bool paused() const noexcept { return paused_; }
  // The newest x when paused (in the current mode's units; a time in ms for Step).
  std::optional<double> pausedEdge() const noexcept { return paused_ ? pausedEdge_ : std::nullopt; }

  // Each returns to following live data.
  void setMode(TimeAxisMode mode);
  void setRange(TimeRange range);
  void followLive();
  // A zoom or pan: shows exactly [min, max] (ignored unless min < max).
  void showFixed(XRange range);
  // While paused the live edge stays at `edge` (the newest x when pausing).
  void setPaused(bool paused, std::optional<double> edge);

  // The range to draw, given the extent of the data in the current mode's units (or nothing when
  // there is no data yet). For Step, `data` is the steps of the points in window(): the range is
  // theirs (at least one step wide).
  XRange visible(std::optional<XRange> data) const;
  // For Step: the points shown, by their time (ms since the Unix epoch), given the extent of the
  // data's times. Following live data it is the time range's span (as visible() would give for the
  // wall clock); zoomed, every time up to the paused edge, as a zoom is a range of steps.
  XRange window(std::optional<XRange> wallData) const;

  // Units of x per second in a time mode: 1000 for WallClock, 1 for SinceRunStart (and Step,
  // which has none).
  static double unitsPerSecond(TimeAxisMode mode) noexcept;
  // The mode whose units say when a point happened: WallClock for Step, else the mode itself.
  static TimeAxisMode timeMode(TimeAxisMode mode) noexcept {
    return mode == TimeAxisMode::Step ? TimeAxisMode::WallClock : mode;
  }

 private:
  TimeAxisMode mode_ = TimeAxisMode::WallClock;
  TimeRange range_ = TimeRange::All;
  XRange live(TimeAxisMode mode, std::optional<XRange> data) const;

  std::optional<XRange> fixed_;
  bool paused_ = false;
  std::optional<double> pausedEdge_;
};

}  // namespace livemon::ui
