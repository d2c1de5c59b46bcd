#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace livemon {

// What a Stat reports for each closed window. The numeric values are part of the
// wire format (transport) and only ever grow.
enum class Aggregation {
  Value,   // the last value added in the window
  Mean,    // arithmetic mean
  Count,   // number of samples
  Sum,     // sum of samples
  Max,     // largest sample
  Min,     // smallest sample
  Stddev,  // population standard deviation
  P50,     // median, from a quantile sketch (see quantile_sketch.h for the error bound)
  P90,     // 90th percentile, from the same sketch
  P99,     // 99th percentile, from the same sketch
};

inline constexpr std::array<Aggregation, 10> kAllAggregations = {
    Aggregation::Value, Aggregation::Mean, Aggregation::Count, Aggregation::Sum,  Aggregation::Max,
    Aggregation::Min,   Aggregation::Stddev, Aggregation::P50, Aggregation::P90, Aggregation::P99};

// "value" "mean" "count" "sum" "max" "min" "stddev" "p50" "p90" "p99"; "unknown" for a value
// outside the enum.
std::string_view aggregationName(Aggregation aggregation) noexcept;

// The inverse of aggregationName; std::nullopt for a name that is not one of the above.
std::optional<Aggregation> aggregationFromName(std::string_view name) noexcept;

// True for P50, P90 and P99, the aggregations served by the quantile sketch.
constexpr bool isQuantile(Aggregation aggregation) noexcept {
  return aggregation == Aggregation::P50 || aggregation == Aggregation::P90 ||
         aggregation == Aggregation::P99;
}

}  // namespace livemon
