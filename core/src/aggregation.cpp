#include <livemon/aggregation.h>

namespace livemon {

std::string_view aggregationName(Aggregation aggregation) noexcept {
  switch (aggregation) {
    case Aggregation::Value: return "value";
    case Aggregation::Mean: return "mean";
    case Aggregation::Count: return "count";
    case Aggregation::Sum: return "sum";
    case Aggregation::Max: return "max";
    case Aggregation::Min: return "min";
    case Aggregation::Stddev: return "stddev";
    case Aggregation::P50: return "p50";
    case Aggregation::P90: return "p90";
    case Aggregation::P99: return "p99";
  }
  return "unknown";
}

std::optional<Aggregation> aggregationFromName(std::string_view name) noexcept {
  for (Aggregation aggregation : kAllAggregations) {
    if (aggregationName(aggregation) == name) return aggregation;
  }
  return std::nullopt;
}

}  // namespace livemon
