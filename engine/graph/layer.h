// SPDX-License-Identifier: MIT
/// @brief Layer kinds and their attributes, as a user writes them in network JSON. A Layer names
/// its inputs; Network::build resolves the names, orders the layers and infers shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "graph/shape.h"

namespace swapscope {

enum class LayerKind {
  Input,
  Conv2d,
  BatchNorm2d,
  ReLU,
  MaxPool2d,
  AvgPool2d,
  AdaptiveAvgPool2d,  ///< output size fixed, window derived; 1x1 is global average pooling
  Linear,
  Add,
  Concat,
  Flatten,
  Dropout,
  SoftmaxCrossEntropy,
  Clip,         ///< min(max(x, min), max); ReLU6 is clip 0..6
  Sigmoid,      ///< 1 / (1 + exp(-x))
  HardSigmoid,  ///< max(0, min(1, alpha x + beta))
  HardSwish,    ///< x * max(0, min(1, x / 6 + 1/2))
  Mul,          ///< elementwise product of two inputs, of the same shape or [C,1,1] x [C,H,W]
};

/// The largest value of an integer attribute (sizes, channels, kernel, stride, padding, groups,
/// input dimensions): the 32-bit limit of the libraries that run the layers.
inline constexpr std::int64_t kMaxLayerInteger = 2147483647;

/// The JSON spelling of a kind: "conv2d", "batchnorm2d", "softmax_cross_entropy", ...
std::string_view layerKindName(LayerKind kind);
/// The kind for a JSON spelling, or nullopt.
std::optional<LayerKind> layerKindFromName(std::string_view name);
/// Every kind's spelling, comma-separated, for error messages and --help.
std::string allLayerKindNames();

struct InputAttrs {
  Shape shape;  ///< per-sample shape of the input batch, e.g. [3,224,224]
  friend bool operator==(const InputAttrs&, const InputAttrs&) = default;
};

struct Conv2dAttrs {
  std::int64_t out_channels = 0;
  std::int64_t kernel_h = 1, kernel_w = 1;
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_h = 0, pad_w = 0;
  std::int64_t groups = 1;
  bool bias = true;
  std::optional<std::int64_t> in_channels;  ///< optional check against the inferred input
  friend bool operator==(const Conv2dAttrs&, const Conv2dAttrs&) = default;
};

struct BatchNormAttrs {
  double eps = 1e-5;
  double momentum = 0.1;
  std::optional<std::int64_t> num_features;  ///< optional check against the inferred input
  friend bool operator==(const BatchNormAttrs&, const BatchNormAttrs&) = default;
};

/// Max and average pooling with PyTorch's semantics (ceil_mode, count_include_pad).
struct PoolAttrs {
  std::int64_t kernel_h = 1, kernel_w = 1;
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_h = 0, pad_w = 0;
  bool ceil_mode = false;
  bool count_include_pad = true;  ///< average pooling only
  friend bool operator==(const PoolAttrs&, const PoolAttrs&) = default;
};

struct AdaptivePoolAttrs {
  std::int64_t out_h = 1, out_w = 1;
  friend bool operator==(const AdaptivePoolAttrs&, const AdaptivePoolAttrs&) = default;
};

struct LinearAttrs {
  std::int64_t out_features = 0;
  bool bias = true;
  std::optional<std::int64_t> in_features;  ///< optional check against the inferred input
  friend bool operator==(const LinearAttrs&, const LinearAttrs&) = default;
};

struct DropoutAttrs {
  double p = 0.5;
  friend bool operator==(const DropoutAttrs&, const DropoutAttrs&) = default;
};

/// Bounds of clip; an absent bound does not clip.
struct ClipAttrs {
  std::optional<double> min;
  std::optional<double> max;
  friend bool operator==(const ClipAttrs&, const ClipAttrs&) = default;
};

/// Slope and offset of hardsigmoid; the defaults are PyTorch's (x / 6 + 1/2).
struct HardSigmoidAttrs {
  double alpha = 1.0 / 6.0;
  double beta = 0.5;
  friend bool operator==(const HardSigmoidAttrs&, const HardSigmoidAttrs&) = default;
};

struct NoAttrs {
  friend bool operator==(const NoAttrs&, const NoAttrs&) = default;
};

using LayerAttrs =
    std::variant<NoAttrs, InputAttrs, Conv2dAttrs, BatchNormAttrs, PoolAttrs, AdaptivePoolAttrs,
                 LinearAttrs, DropoutAttrs, ClipAttrs, HardSigmoidAttrs>;

struct Layer {
  std::string name;  ///< unique within the network
  LayerKind kind = LayerKind::Input;
  std::vector<std::string> inputs;  ///< names of the layers whose outputs it reads, in order
  LayerAttrs attrs;

  template <typename T>
  const T& as() const {
    return std::get<T>(attrs);
  }
  friend bool operator==(const Layer&, const Layer&) = default;
};

/// "layer 'name' (kind)" for messages, the name's control characters escaped and a long name
/// cut (graph/json_guard.h's echoText).
std::string describeLayer(const Layer& l);

}  // namespace swapscope
