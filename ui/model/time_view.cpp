#include <livemon/ui/model/time_view.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <limits>

namespace livemon::ui {

QString timeAxisModeKey(TimeAxisMode mode) {
  switch (mode) {
    case TimeAxisMode::WallClock:
      return QStringLiteral("wall");
    case TimeAxisMode::SinceRunStart:
      return QStringLiteral("run");
    case TimeAxisMode::Step:
      break;
  }
  return QStringLiteral("step");
}

std::optional<TimeAxisMode> timeAxisModeFromKey(const QString& key) {
  for (TimeAxisMode mode : {TimeAxisMode::WallClock, TimeAxisMode::SinceRunStart, TimeAxisMode::Step}) {
    if (key == timeAxisModeKey(mode)) return mode;
  }
  return std::nullopt;
}

QString timeRangeKey(TimeRange range) {
  switch (range) {
    case TimeRange::LastMinute:
      return QStringLiteral("1min");
    case TimeRange::Last5Minutes:
      return QStringLiteral("5min");
    case TimeRange::Last30Minutes:
      return QStringLiteral("30min");
    case TimeRange::All:
      break;
  }
  return QStringLiteral("all");
}

std::optional<TimeRange> timeRangeFromKey(const QString& key) {
  for (TimeRange range : {TimeRange::LastMinute, TimeRange::Last5Minutes, TimeRange::Last30Minutes, TimeRange::All}) {
    if (key == timeRangeKey(range)) return range;
  }
  return std::nullopt;
}

std::optional<double> timeRangeSeconds(TimeRange range) {
  switch (range) {
    case TimeRange::LastMinute:
      return 60.0;
    case TimeRange::Last5Minutes:
      return 300.0;
    case TimeRange::Last30Minutes:
      return 1800.0;
    case TimeRange::All:
      break;
  }
  return std::nullopt;
}

double TimeView::unitsPerSecond(TimeAxisMode mode) noexcept { return mode == TimeAxisMode::WallClock ? 1000.0 : 1.0; }

void TimeView::setMode(TimeAxisMode mode) {
  mode_ = mode;
  fixed_.reset();
  // A frozen edge is in the old mode's units.
  pausedEdge_.reset();
}

void TimeView::setRange(TimeRange range) {
  range_ = range;
  fixed_.reset();
}

void TimeView::followLive() { fixed_.reset(); }

void TimeView::showFixed(XRange range) {
  if (range.min < range.max) fixed_ = range;
}

void TimeView::setPaused(bool paused, std::optional<double> edge) {
  paused_ = paused;
  pausedEdge_ = paused ? edge : std::nullopt;
}

XRange TimeView::visible(std::optional<XRange> data) const {
  if (fixed_) return *fixed_;
  if (mode_ != TimeAxisMode::Step) return live(mode_, data);
  if (!data) return XRange{0.0, 1.0};
  // A single step sits in the middle of a range one step wide.
  if (data->max - data->min < 1.0) {
    const double middle = (data->min + data->max) / 2.0;
    return XRange{middle - 0.5, middle + 0.5};
  }
  return *data;
}

XRange TimeView::window(std::optional<XRange> wallData) const {
  if (!fixed_) return live(TimeAxisMode::WallClock, wallData);
  const double end = paused_ && pausedEdge_ ? *pausedEdge_ : std::numeric_limits<double>::infinity();
  return XRange{-std::numeric_limits<double>::infinity(), end};
}

XRange TimeView::live(TimeAxisMode mode, std::optional<XRange> data) const {
  const double perSecond = unitsPerSecond(mode);
  const std::optional<double> span = timeRangeSeconds(range_);
  double edge = 0.0;
  if (paused_ && pausedEdge_) {
    edge = *pausedEdge_;
  } else if (data) {
    edge = data->max;
  } else if (mode == TimeAxisMode::WallClock) {
    edge = std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count();
  } else {
    edge = span.value_or(60.0);
  }
  const double width = span ? *span * perSecond : perSecond;
  if (!data || data->min > edge) return XRange{edge - width, edge};
  if (span && edge - data->min >= width) return XRange{edge - width, edge};
  // From the first sample while the data is younger than the range (and always for All), at
  // least a second wide: the data fills the chart from its start.
  return XRange{std::min(data->min, edge - perSecond), edge};
}

XRange snapLiveEdge(XRange x) {
  constexpr double kStepsPerWidth = 64.0;
  const double width = x.max - x.min;
  if (!std::isfinite(width) || !(width > 0.0)) return x;
  const double quantum = std::exp2(std::floor(std::log2(width / kStepsPerWidth)));
  // Outwards at both ends: the first and the newest points stay in view.
  return XRange{std::floor(x.min / quantum) * quantum, std::ceil(x.max / quantum) * quantum};
}

}  // namespace livemon::ui
