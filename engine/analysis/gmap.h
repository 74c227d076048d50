// SPDX-License-Identifier: MIT
/// @brief The GMAP: the ordered allocate / release / offload / prefetch operations of one training
/// iteration, for a network, a swap set and (optionally) per-step workspaces. The runtime executes
/// exactly this list; the analyzer's memory curve is computed from it. See docs/gmap.md.
///
/// Steps: 0 is setup (persistent buffers), 1..N run the N non-input layers forward in topological
/// order, N+1..2N run them backward in reverse order, 2N+1 is teardown. Within a step the ops are:
/// allocations and prefetches, then Compute, then releases and offloads.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/layer_cost.h"
#include "analysis/swap_policy.h"
#include "common/bytes.h"
#include "graph/network.h"

namespace swapscope {

enum class BufferKind {
  Weights,       ///< persistent: a layer's learnable parameters
  WeightGrad,    ///< persistent: their gradients
  Momentum,      ///< persistent: SGD momentum
  RunningStats,  ///< persistent: batch norm running mean and variance
  Labels,        ///< the minibatch's int32 labels, from step 1 to the loss's backward step
  FeatureMap,    ///< a layer's output (the input layer's is the minibatch)
  FmGrad,        ///< the gradient of a feature map
  Saved,         ///< forward state a backward step needs (bn statistics, dropout mask)
  LossValue,     ///< the scalar loss
  Workspace,     ///< scratch memory of one step
};
std::string_view bufferKindName(BufferKind kind);
inline bool isPersistent(BufferKind k) {
  return k == BufferKind::Weights || k == BufferKind::WeightGrad || k == BufferKind::Momentum ||
         k == BufferKind::RunningStats;
}

struct GmapBuffer {
  std::string name;  ///< FMs: the layer name; others: "<layer>.<what>" ("conv1.grad", "labels")
  BufferKind kind;
  int layer;         ///< the layer it belongs to, or -1 (labels, workspaces)
  LinearBytes size;  ///< exact size at minibatch k: size.at(k)
};

enum class GmapOpKind {
  Allocate,  ///< reserve the buffer in the pool
  Release,   ///< return it; for an offloaded FM, only once its offload has completed
  Offload,   ///< copy device -> host (swap-out stream); the device copy stays until Release
  Prefetch,  ///< copy host -> device into the buffer just allocated (swap-in stream)
  Compute,   ///< run the step's kernels (compute stream); `buffer` is -1
  /// Re-make a feature map in a backward step: its layer's forward kernel runs again on the
  /// compute stream, writing `buffer` (just allocated) from inputs that are resident.
  Recompute,
};
std::string_view gmapOpKindName(GmapOpKind kind);

struct GmapOp {
  GmapOpKind kind;
  int step;
  int buffer;  ///< index into Gmap::buffers, -1 for Compute
};

struct Gmap {
  int forward_steps = 0;  ///< N
  std::vector<GmapBuffer> buffers;
  std::vector<GmapOp> ops;      ///< in execution order
  std::vector<int> step_layer;  ///< layer id of steps 1..2N; -1 at 0 and 2N+1
  /// Per step: non-persistent buffers it reads or writes (workspace excluded), its re-makes'
  /// included, but for the FMs re-made only to re-make others where they go before its compute.
  std::vector<std::vector<int>> step_touches;
  SwapSet swapped;          ///< the swap set it was built for
  RecomputeSet recomputed;  ///< the recompute set it was built for

  int steps() const { return 2 * forward_steps; }
  bool isBackwardStep(int step) const { return step > forward_steps; }
};

/// Builds the GMAP. `workspace`, when given, holds one size per step 0..2N+1 (entries 0 and 2N+1
/// must be zero); without it every step runs without workspace (the zero-workspace baseline).
Gmap buildGmap(const Network& net, const std::vector<LayerCost>& costs, const SwapSet& swapped,
               const std::vector<LinearBytes>* workspace = nullptr);
/// The same with FMs recomputed (docs/analysis.md, "Recompute"): each FM in `recomputed` is
/// released after its last forward reader and re-made before the first backward step that
/// reads it, from its nearest resident ancestors, re-running the light forward layers between.
/// Error(BadInput) naming the FM where that is impossible.
Gmap buildGmap(const Network& net, const std::vector<LayerCost>& costs, const SwapSet& swapped,
               const RecomputeSet& recomputed, const std::vector<LinearBytes>* workspace = nullptr);

/// The kernel workspaces a backend adds to its pool beyond the GMAP's buffers (the CUDA backend's
/// convolutions under --conv-algo, as a profile recorded them): per layer id, the bytes of the
/// scratch its forward and its backward step hold, as functions of k, for the network whose
/// structure hash is `network_hash`. Each step's workspace is allocated before the step's
/// compute and released after it, as the executor's GMAP holds it (buildGmap's `workspace`).
struct KernelWorkspaces {
  std::string network_hash;
  std::vector<LinearBytes> forward, backward;  ///< per layer id; {} where none
};
/// The workspace table buildGmap takes (one entry per step 0..2N+1) for the steps of `gmap`,
/// whose network has structure hash `networkHash`: empty where that is not the network the
/// workspaces were recorded for, or where no step holds one.
std::vector<LinearBytes> workspaceSteps(const Gmap& gmap, const std::string& networkHash,
                                        const KernelWorkspaces& workspaces);

/// How a backend rounds buffers in its pool. A buffer of a + b·k bytes takes
/// round_up(a, m) + round_up(b, m)·k bytes, m = `buffer` (`workspace` for kernel workspaces), and
/// starts at a multiple of m: the memory curve stays exact in k, and the curve of the padded GMAP
/// (padGmap) is the pool's measured high-water mark to the byte. 1 and 1: no padding (the CPU
/// backend); the CUDA backend pads every buffer to 16 bytes and workspaces to 256.
struct PoolPadding {
  std::int64_t buffer = 1;
  std::int64_t workspace = 1;
  /// The kernel workspaces the pool holds beside the GMAP's buffers, where the planner knows
  /// them (a profile that recorded them; owned by the perf model); nullptr: none. padGmap does
  /// not add them: a GMAP built with them (buildGmap's `workspace`) holds them.
  const KernelWorkspaces* workspaces = nullptr;
  friend constexpr bool operator==(const PoolPadding&, const PoolPadding&) = default;
};
/// `size` rounded as `padding` rounds a buffer of `kind`. Error(BadInput) naming the bytes when
/// the rounded size does not fit in 64 bits; Error(Runtime) for a multiple that is not positive.
LinearBytes paddedSize(const LinearBytes& size, BufferKind kind, const PoolPadding& padding);
/// `gmap` with every buffer's size rounded by `padding`: the sizes the pool holds. Copies move the
/// unpadded sizes, so executors keep both.
Gmap padGmap(const Gmap& gmap, const PoolPadding& padding);

/// Where a swapped FM leaves and re-enters the device: the forward step whose end releases it
/// and the backward step it is prefetched for. Both 0 for a buffer that is not swapped.
struct SwapSteps {
  int release = 0;
  int prefetch = 0;
};
/// Per GMAP buffer.
std::vector<SwapSteps> swapSteps(const Gmap& gmap);

/// Where a recomputed FM leaves the device and is re-made: the forward step whose end releases it
/// and the first backward step that re-makes it (its first Recompute op; an ancestor re-made for
/// a later FM may be re-made again there). Both 0 for a buffer whose layer the GMAP's recompute
/// set does not hold.
struct RecomputeSteps {
  int release = 0;
  int recompute = 0;
};
/// Per GMAP buffer.
std::vector<RecomputeSteps> recomputeSteps(const Gmap& gmap);

}  // namespace swapscope
