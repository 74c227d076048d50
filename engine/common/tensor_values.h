// SPDX-License-Identifier: MIT
/// @brief What makes a tensor's stored values no weights: the check weight files and ONNX
/// initializers share.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "common/format.h"

namespace swapscope {

/// Why `values` cannot be a tensor's: a NaN or an infinity anywhere (training would carry it on
/// unseen where a ReLU hides it, and save it again), or a value below 0 from index
/// `variancesFrom` on, where batch norm keeps its running variances (a negative one turns its
/// inference outputs into NaN). Empty where they can be. The message follows the tensor's name.
inline std::string badTensorValues(const std::vector<float>& values,
                                   std::size_t variancesFrom = static_cast<std::size_t>(-1)) {
  const std::string of = " of " + std::to_string(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float x = values[i];
    if (!std::isfinite(x)) {
      return "holds " + numberText(x) + " at value " + std::to_string(i) + of +
             " (weights and running statistics must be finite numbers)";
    }
    if (i >= variancesFrom && x < 0) {
      return "holds " + numberText(x) + " at value " + std::to_string(i) + of +
             ", a running variance (a variance cannot be negative)";
    }
  }
  return "";
}

}  // namespace swapscope
