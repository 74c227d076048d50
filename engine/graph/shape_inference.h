// SPDX-License-Identifier: MIT
/// @brief Output-shape rules of every layer kind (PyTorch semantics), with errors that name the
/// layer, the shape it expected and the shape it got.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/layer.h"
#include "graph/shape.h"

namespace swapscope {

struct InputShape {
  const std::string* producer;  ///< name of the layer that made this input
  const Shape* shape;
};

/// Infers the per-sample output shape of `layer` from its input shapes; throws Error(BadInput).
Shape inferOutputShape(const Layer& layer, const std::vector<InputShape>& inputs);

/// Output extent of a convolution or pooling window along one axis (PyTorch's formula, with
/// ceil_mode's rule that the last window must start inside the input or its left padding).
std::int64_t windowedExtent(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                            std::int64_t pad, bool ceil_mode);

/// Start and end (exclusive) of adaptive pooling window i along an axis of `in` -> `out`.
inline std::int64_t adaptiveStart(std::int64_t i, std::int64_t in, std::int64_t out) {
  return (i * in) / out;
}
inline std::int64_t adaptiveEnd(std::int64_t i, std::int64_t in, std::int64_t out) {
  return ((i + 1) * in + out - 1) / out;
}

}  // namespace swapscope
