#pragma once

#include <optional>
#include <string_view>

namespace livemon::ui {

// Thread-safety: a plain value type; the views point into the key they were split from.
// The two halves of a Stat event key: "<stat name>.<aggregation>".
struct StatKeyParts {
  std::string_view stat;         // may itself contain dots: "train.step_ms"
  std::string_view aggregation;  // "mean", "p99", ...
};

// Splits a Stat key at its last dot, so dotted stat names survive ("train.step_ms.p99" is stat
// "train.step_ms", aggregation "p99"). std::nullopt when there is no dot or either half is empty.
std::optional<StatKeyParts> splitStatKey(std::string_view key) noexcept;

// True for the names Stat events carry: livemon's "livemon.Stat" and torch.monitor's
// "torch.monitor.Stat".
bool isStatEventName(std::string_view eventName) noexcept;

}  // namespace livemon::ui
