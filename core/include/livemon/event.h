#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>

namespace livemon {

// One value of an event's data. The alternatives' order is part of the wire format.
using DataValue = std::variant<std::string, double, int64_t, bool>;

// Thread-safety: a plain value type.
//
// A structured, timestamped record. Stat windows are logged as events named kStatEventName
// with one double per "<stat name>.<aggregation name>" key.
struct Event {
  std::string name;
  std::chrono::system_clock::time_point timestamp;
  std::unordered_map<std::string, DataValue> data;
};

// Same name, timestamp and data (values compared with their types: 1.0 != int64_t{1}).
bool operator==(const Event& a, const Event& b);

inline constexpr std::string_view kStatEventName = "livemon.Stat";

// The name torch.monitor gives its Stat events; consumers treat it like kStatEventName.
inline constexpr std::string_view kTorchStatEventName = "torch.monitor.Stat";

// Human-readable forms, for logs and test failure messages.
std::string toString(const DataValue& value);
std::string toString(const Event& event);
std::ostream& operator<<(std::ostream& out, const DataValue& value);
std::ostream& operator<<(std::ostream& out, const Event& event);

}  // namespace livemon
