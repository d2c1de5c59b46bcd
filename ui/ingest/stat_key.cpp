#include <livemon/ui/ingest/stat_key.h>

#include <livemon/event.h>

namespace livemon::ui {

std::optional<StatKeyParts> splitStatKey(std::string_view key) noexcept {
  const std::size_t dot = key.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == key.size()) return std::nullopt;
  return StatKeyParts{key.substr(0, dot), key.substr(dot + 1)};
}

bool isStatEventName(std::string_view eventName) noexcept {
  return eventName == kStatEventName || eventName == kTorchStatEventName;
}

}  // namespace livemon::ui
