// What the benchmarks share.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

namespace livemon::bench {

// The median of `values` (the mean of the middle two for an even count); NaN when there are none.
inline double median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace livemon::bench
