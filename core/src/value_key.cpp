#include <livemon/value_key.h>

#include <variant>

namespace livemon {

bool isStatEventName(std::string_view eventName) noexcept {
  return eventName == kStatEventName || eventName == kTorchStatEventName;
}

std::string valueKey(std::string_view eventName, std::string_view field) {
  if (isStatEventName(eventName)) return std::string(field);
  std::string key;
  key.reserve(eventName.size() + 1 + field.size());
  key.append(eventName);
  key += '.';
  key.append(field);
  return key;
}

std::optional<double> numericValue(const DataValue& value) noexcept {
  if (const double* d = std::get_if<double>(&value)) return *d;
  if (const int64_t* i = std::get_if<int64_t>(&value)) return static_cast<double>(*i);
  return std::nullopt;
}

}  // namespace livemon
