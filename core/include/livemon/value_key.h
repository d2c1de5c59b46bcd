#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <livemon/event.h>

// How the numbers an event carries are named, wherever they are charted or watched (the
// dashboard, alert rules, `livemonctl watch`): one naming, so a rule set from a chart matches the
// same values headless. Thread-safe: pure functions.
namespace livemon {

// True for the names Stat events carry: livemon's kStatEventName and torch.monitor's
// kTorchStatEventName.
bool isStatEventName(std::string_view eventName) noexcept;

// The key of one data field: a Stat event's own key, "<stat name>.<aggregation>"
// ("train.loss.mean"), or "<event name>.<field>" for any other event ("eval.accuracy").
std::string valueKey(std::string_view eventName, std::string_view field);

// A field's number: a double as it is (NaN and ±Inf included), an integer converted to double;
// nothing for strings and bools, which are not charted.
std::optional<double> numericValue(const DataValue& value) noexcept;

}  // namespace livemon
