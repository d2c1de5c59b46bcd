#pragma once

#include <optional>
#include <string_view>

namespace livemon::ui {

// Thread-safety: a plain value type. Its views point into the key it was split from.
// The two halves of a Stat event key: "<stat name>.<aggregation>".
struct StatKeyParts {
  std::string_view stat;         // may itself contain dots: "train.step_ms"
  std::string_view aggregation;  // "mean", "p99", ...
};

// Splits a Stat key at its last dot, so dotted stat names survive ("train.step_ms.p99" is stat
// "train.step_ms", aggregation "p99"). std::nullopt when there is no dot or either half is empty.
std::optional<StatKeyParts> splitStatKey(std::string_view key) noexcept;

// The line name of a running total charted as its rate (SeriesKind::CounterRate).
inline constexpr std::string_view kRateAggregation = "rate/s";

// True for the running totals livemon's own diagnostics report as Stats, which are charted as a
// rate per second rather than as an ever-growing line: a publisher's "livemon.<name>.published" and
// "livemon.<name>.dropped" (PublisherOptions::statName, "livemon.publisher" by default), aggregation
// "value".
bool isCumulativeCounter(std::string_view stat, std::string_view aggregation) noexcept;

// Whether a numeric field of an event other than a Stat gets a chart point. "step" and "epoch"
// say where in the run an event was logged, not how the run is going: they stay in the log.
bool isChartedEventField(std::string_view field) noexcept;

// True for the names Stat events carry: livemon's "livemon.Stat" and torch.monitor's
// "torch.monitor.Stat".
bool isStatEventName(std::string_view eventName) noexcept;

}  // namespace livemon::ui
