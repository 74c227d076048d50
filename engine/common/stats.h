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

}  // namespace swapscope
