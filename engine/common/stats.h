// SPDX-License-Identifier: MIT
/// @brief Small statistics shared by the collectors, the model and the CLI.
#pragma once

#include <algorithm>
#include <vector>

namespace swapscope {

/// The median (the mean of the middle two for an even count); T{} for none.
template <typename T>
T median(std::vector<T> v) {
  if (v.empty()) return T{};
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// The q-quantile of `v` (0 <= q <= 1), interpolated between neighbours; T{} for none.
template <typename T>
T quantile(std::vector<T> v, double q) {
  if (v.empty()) return T{};
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * static_cast<T>(pos - static_cast<double>(lo));
}

/// Tukey's fences of `v`: the first quartile less, and the third quartile plus, `k` times the
/// interquartile range (k = 1.5 for outliers, 3 for far-out ones).
struct Fences {
  double below = 0, above = 0;
};
inline Fences tukeyFences(const std::vector<double>& v, double k) {
  const double q1 = quantile(v, 0.25), q3 = quantile(v, 0.75);
  return {q1 - k * (q3 - q1), q3 + k * (q3 - q1)};
}

}  // namespace swapscope
