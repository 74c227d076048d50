// SPDX-License-Identifier: MIT
/// @brief Per-sample tensor shapes. The minibatch dimension k is never part of a Shape: a feature
/// map of Shape [C,H,W] holds k*C*H*W values at minibatch k.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace swapscope {

struct Shape {
  std::vector<std::int64_t> dims;  ///< [C,H,W] for images, [F] for flat features, [] for a scalar

  std::size_t rank() const { return dims.size(); }
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (std::int64_t d : dims)
      n *= d;
    return n;
  }
  std::int64_t channels() const { return dims.at(0); }
  std::int64_t height() const { return dims.at(1); }
  std::int64_t width() const { return dims.at(2); }
  bool isImage() const { return dims.size() == 3; }
  bool isFlat() const { return dims.size() == 1; }

  /// "[3,224,224]", the form used in every message and table.
  std::string toString() const {
    std::string s = "[";
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (i) s += ',';
      s += std::to_string(dims[i]);
    }
    return s + "]";
  }
  friend bool operator==(const Shape&, const Shape&) = default;
};

}  // namespace swapscope
