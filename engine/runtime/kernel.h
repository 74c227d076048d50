// SPDX-License-Identifier: MIT
/// @brief The kernels of one layer at a fixed count of samples: the minibatch k, or one pass's
/// k/S samples where the minibatch runs in S sub-batches (their k below). Every pointer is device
/// memory inside the pool, laid out NCHW (flat features: NC) in fp32; labels are int32.
///
/// Parameter layout in a layer's weights buffer (and its gradient and momentum):
/// conv2d: weight [out, in/groups, kh, kw] then bias [out]; linear: weight [out, in] then bias
/// [out]; batchnorm2d: gamma [C] then beta [C]. Running stats: mean [C] then variance [C].
/// Saved state of batchnorm2d: batch mean [C] then batch variance [C]; of dropout: a byte mask.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace swapscope::rt {

struct KernelArgs {
  std::vector<const float*> in;  ///< the layer's input FMs, in the layer's input order
  float* out = nullptr;          ///< its output FM (softmax_cross_entropy: the scalar loss)
  float* weights = nullptr;
  float* weight_grad = nullptr;
  float* running_stats = nullptr;
  void* saved = nullptr;
  const std::int32_t* labels = nullptr;
  void* workspace = nullptr;  ///< the step's scratch in the pool (see LayerKernel::workspaceBytes)
  bool training = true;       ///< forward: batch statistics and dropout; false: inference
  std::uint64_t seed = 0;     ///< dropout: the mask's seed for this iteration and layer
  /// Forward run again in backward to re-make a recomputed FM: the same outputs and saved state,
  /// but batch norm leaves its running statistics alone (they were updated once already).
  bool recompute = false;
  /// The loss (softmax_cross_entropy): its value and gradient are means over this many samples,
  /// 0: over the kernel's k. A minibatch split into sub-batches passes the whole minibatch's
  /// size, so that the sub-batches' losses and gradients add up to the minibatch's mean.
  std::int64_t loss_samples = 0;

  // Backward only.
  const float* out_grad = nullptr;  ///< gradient of the output (null for the loss)
  std::vector<float*> in_grad;      ///< per input: where its gradient goes, or null if none
  std::vector<bool> accumulate;     ///< per input: add to in_grad instead of overwriting it
  /// Add the weight gradient to weight_grad instead of overwriting it: the sub-batches after a
  /// minibatch's first accumulate into the first one's gradient.
  bool accumulate_weight_grad = false;
};

class LayerKernel {
 public:
  virtual ~LayerKernel() = default;
  virtual void forward(const KernelArgs& a) = 0;
  /// Writes in_grad (where not null) and, for layers with parameters, the weight gradient.
  virtual void backward(const KernelArgs& a) = 0;
  /// Bytes of pool scratch the forward (or backward) step needs in KernelArgs::workspace. The
  /// executor puts them into the GMAP, so that every workspace counts against the budget.
  virtual std::int64_t workspaceBytes(bool backward) const {
    (void)backward;
    return 0;
  }
  /// The algorithms the kernel chose ("fwd IMPLICIT_GEMM 0 B; ..."), or empty where it had no
  /// choice to make.
  virtual std::string algorithms() const { return {}; }
  /// Asks for what adding into the weight gradient (KernelArgs::accumulate_weight_grad) needs
  /// beyond the pool, so that the run's host-memory check counts it: the CPU backend's
  /// temporary. Called once, before the run, when its minibatch is split into sub-batches.
  virtual void prepareWeightGradAccumulation() {}
};

}  // namespace swapscope::rt
