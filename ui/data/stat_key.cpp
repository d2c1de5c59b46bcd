#include <livemon/ui/data/stat_key.h>

#include <livemon/event.h>

namespace livemon::ui {

std::optional<StatKeyParts> splitStatKey(std::string_view key) noexcept {
  const std::size_t dot = key.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == key.size()) return std::nullopt;
  return StatKeyParts{key.substr(0, dot), key.substr(dot + 1)};
}

bool isCumulativeCounter(std::string_view stat, std::string_view aggregation) noexcept {
  if (aggregation != "value" || !stat.starts_with("livemon.")) return false;
  return stat.ends_with(".published") || stat.ends_with(".dropped");
}

bool isChartedEventField(std::string_view field) noexcept { return field != "step" && field != "epoch"; }

bool isStatEventName(std::string_view eventName) noexcept {
  return eventName == kStatEventName || eventName == kTorchStatEventName;
}

}  // namespace livemon::ui
