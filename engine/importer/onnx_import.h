// SPDX-License-Identifier: MIT
/// @brief Imports an ONNX model (as torch.onnx.export writes it) as a Network (docs/onnx.md).
///
/// Every node maps onto a layer kind, folds into its reader (Pad into a convolution or an
/// average pooling; constants into the attributes that read them), or is refused: a node that
/// does not map is Error(BadInput) naming the node, its operator, where it sits and the
/// operators that are supported. Nothing is approximated. The graph's one data input is the
/// input layer; its first dimension is the minibatch. The one graph output becomes the input of
/// a softmax_cross_entropy layer named "loss". The network is named after the file (its stem).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "graph/network.h"

namespace swapscope {

struct OnnxImportOptions {
  /// The per-sample input shape instead of the graph input's ([C,H,W] or [F]).
  std::optional<Shape> input;
};

struct OnnxModel {
  Network net;
  /// The initializers where the file holds every parameter of the network (empty where it holds
  /// none: export_params=False), as SwapExecutor::writeWeights takes them: one tensor per layer
  /// with parameters, in layer order and the kernel layout (runtime/kernel.h), and the running
  /// statistics of each batch norm.
  std::vector<std::vector<float>> weights, running_stats;
  bool hasWeights() const { return !weights.empty(); }
};

/// Reads, checks (onnx::checker), infers shapes (onnx::shape_inference) and maps `path`.
/// Error(BadInput) naming the file and the culprit for anything it cannot map.
OnnxModel importOnnxFile(const std::string& path, const OnnxImportOptions& options = {});

/// The operators the importer maps, comma-separated (for messages and docs).
std::string supportedOnnxOperators();

}  // namespace swapscope
