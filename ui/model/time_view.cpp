#include <livemon/ui/model/time_view.h>

#include <algorithm>
#include <chrono>

namespace livemon::ui {

QString timeAxisModeKey(TimeAxisMode mode) {
  return mode == TimeAxisMode::WallClock ? QStringLiteral("wall") : QStringLiteral("run");
}

std::optional<TimeAxisMode> timeAxisModeFromKey(const QString& key) {
  if (key == QLatin1String("wall")) return TimeAxisMode::WallClock;
  if (key == QLatin1String("run")) return TimeAxisMode::SinceRunStart;
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
  const double perSecond = unitsPerSecond(mode_);
  const std::optional<double> span = timeRangeSeconds(range_);
  double edge = 0.0;
  if (paused_ && pausedEdge_) {
    edge = *pausedEdge_;
  } else if (data) {
    edge = data->max;
  } else if (mode_ == TimeAxisMode::WallClock) {
    edge = std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count();
  } else {
    edge = span.value_or(60.0);
  }
  if (span) {
    const double width = *span * perSecond;
    // Until the data spans the range it fills it from the left, like a chart recorder's paper,
    // instead of huddling at the right edge.
    if (data && data->min <= edge && edge - data->min < width) return XRange{data->min, data->min + width};
    return XRange{edge - width, edge};
  }
  // All: from the first sample to the edge, at least a second wide.
  const double first = data ? data->min : edge - perSecond;
  return XRange{std::min(first, edge - perSecond), edge};
}

}  // namespace livemon::ui
