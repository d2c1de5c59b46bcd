#pragma once

#include <algorithm>
#include <array>
#include <cstddef>

namespace livemon::ui {

// Thread-safety: a pure function.
//
// The median distance between neighbours among the newest 64 of `points` (ascending by `x`):
// the interval a series usually has, which a stall is measured against. 0 with fewer than two.
// The median, so that one stall or one burst does not move it.
template <typename Points, typename X>
double medianSpacing(const Points& points, X x) {
  constexpr std::size_t kNewest = 64;
  const std::size_t n = std::min(kNewest, points.size());
  if (n < 2) return 0.0;
  std::array<double, kNewest> spacing{};
  const std::size_t from = points.size() - n;
  for (std::size_t i = 1; i < n; ++i) spacing[i - 1] = x(points[from + i]) - x(points[from + i - 1]);
  const auto middle = spacing.begin() + static_cast<std::ptrdiff_t>((n - 1) / 2);
  std::nth_element(spacing.begin(), middle, spacing.begin() + static_cast<std::ptrdiff_t>(n - 1));
  return *middle;
}

}  // namespace livemon::ui
