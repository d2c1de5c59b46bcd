#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <optional>
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
//
// `step` is the training step the event belongs to (see setStep in <livemon/step.h>). An event
// may also state its step in an int64 data field named kStepKey; statedStep() reads either.
// An event that states none belongs to the step current when it was logged: logEvent hands it
// to handlers with that step beside it, which statedStep() reads during the handler call. A
// Stat window carries the step
// current when the window closed. It is the last member so that `Event{name, timestamp, data}`
// still initialises an event without a step.
struct Event {
  std::string name;
  std::chrono::system_clock::time_point timestamp;
  std::unordered_map<std::string, DataValue> data;
  std::optional<int64_t> step{};
};

// Same name, timestamp, data (values compared with their types: 1.0 != int64_t{1}) and step.
bool operator==(const Event& a, const Event& b);

inline constexpr std::string_view kStatEventName = "livemon.Stat";

// An int64 data field of this name states the event's step (an event's own `step` wins).
inline constexpr std::string_view kStepKey = "step";

// The step an event belongs to: its `step`, else an int64 data field named kStepKey, else (in an
// event handler, for the event it was given) the step current when the event was logged, else
// none.
std::optional<int64_t> statedStep(const Event& event) noexcept;

// The name torch.monitor gives its Stat events; consumers treat it like kStatEventName.
inline constexpr std::string_view kTorchStatEventName = "torch.monitor.Stat";

// Human-readable forms, for logs and test failure messages.
std::string toString(const DataValue& value);
std::string toString(const Event& event);
std::ostream& operator<<(std::ostream& out, const DataValue& value);
std::ostream& operator<<(std::ostream& out, const Event& event);

}  // namespace livemon
