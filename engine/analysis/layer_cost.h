// SPDX-License-Identifier: MIT
/// @brief Per-layer static costs: parameters, FLOPs forward and backward, feature-map bytes, and
/// what each layer's backward step reads. Everything here is per sample (exactly linear in k).
///
/// FLOP convention (docs/analysis.md): a multiply-accumulate of conv and linear is 2 FLOPs
/// (FLOPs = 2 x MACs), and a bias adds 1 FLOP per output element. Elementwise layers count a fixed
/// number of FLOPs per element (see kFlopsPerElement in layer_cost.cpp). Copies count 0.
#pragma once

#include <cstdint>
#include <vector>

#include "common/bytes.h"
#include "graph/network.h"

namespace swapscope {

inline constexpr std::int64_t kFloatBytes = 4;  ///< fp32 everywhere
inline constexpr std::int64_t kLabelBytes = 4;  ///< one int32 class index per sample
inline constexpr std::int64_t kMaskBytes = 1;   ///< dropout keeps one byte per element
/// FLOPs the SGD update spends per parameter: weight decay (2), momentum (2) and the step (2).
inline constexpr std::int64_t kSgdFlopsPerParam = 6;

/// What a layer's backward step reads besides the gradient of its output.
struct BackwardReads {
  bool inputs = false;  ///< the layer's input feature maps (conv and linear for dW, bn, maxpool)
  bool output = false;  ///< its own output (relu, maxpool)
  LinearBytes saved;    ///< state saved by the forward step (bn statistics, dropout mask)
};

struct LayerCost {
  std::int64_t params = 0;            ///< learnable values (weights and biases)
  std::int64_t running_stats = 0;     ///< persistent values that are not learned (bn mean, var)
  std::int64_t fwd_macs = 0;          ///< multiply-accumulates of conv and linear, per sample
  std::int64_t fwd_flops = 0;         ///< per sample
  std::int64_t bwd_data_flops = 0;    ///< per sample; 0 where no input needs a gradient
  std::int64_t bwd_weight_flops = 0;  ///< per sample
  LinearBytes fm;                     ///< output feature map, fp32 (the loss: one scalar)
  bool needs_grad = false;       ///< the output needs a gradient (a parameter lies at or before it)
  bool backward_active = false;  ///< the backward step does work
  BackwardReads reads;           ///< what the backward step reads (empty when inactive)
};

/// Costs of every layer, indexed by layer id.
std::vector<LayerCost> computeLayerCosts(const Network& net);

struct CostTotals {
  std::int64_t params = 0;
  std::int64_t running_stats = 0;
  std::int64_t fwd_macs = 0;   ///< per sample
  std::int64_t fwd_flops = 0;  ///< per sample
  std::int64_t bwd_flops = 0;  ///< per sample, data + weight gradients
  /// Per sample FLOPs of one training iteration (forward + backward; the SGD update is excluded).
  std::int64_t trainFlops() const { return fwd_flops + bwd_flops; }
};
CostTotals sumCosts(const std::vector<LayerCost>& costs);

}  // namespace swapscope
