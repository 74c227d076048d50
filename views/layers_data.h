// SPDX-License-Identifier: MIT
/// @brief What the layers table shows, without any Qt: one row per layer of the planned network
/// at the plan's k: the output FM's bytes, the FLOPs, the model's forward and backward times
/// with their provenance, what the plan does with the FM (kept, swapped, pinned), where it
/// leaves and re-enters the device, and the stall before its steps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/layer_cost.h"
#include "graph/network.h"
#include "perfmodel/model.h"
#include "perfmodel/planner.h"

namespace swapscope {

/// What the plan does with a layer's output FM.
enum class FmState {
  Kept,     ///< stays on the device: the policy does not swap it, or it cannot be swapped
  Swapped,  ///< offloaded after its forward use and prefetched for its backward step
  Pinned,   ///< accudnn: swap-all would swap it, and the planner kept it on the device
  /// Released after its last forward reader and re-made from an ancestor in a backward step
  Recomputed,
};
const char* fmStateName(FmState s);  ///< "kept", "swapped", "pinned", "recomputed"

struct LayerRowData {
  int layer = 0;
  std::string name, type;
  std::int64_t fm_bytes = 0;                  ///< output FM at k
  std::int64_t fwd_flops = 0, bwd_flops = 0;  ///< at k (backward: data + weight gradients)
  int fwd_step = 0, bwd_step = 0;             ///< 0: the layer has no such step (the input layer)
  perf::Estimate fwd, bwd;                    ///< the model's times at k, with provenance
  FmState state = FmState::Kept;
  bool swappable = false;  ///< some backward step reads the FM
  int release_step = 0;    ///< swapped and recomputed FMs; 0 otherwise
  int prefetch_step = 0;   ///< swapped FMs; 0 otherwise
  int remake_step = 0;     ///< recomputed FMs: the backward step that re-makes it; 0 otherwise
  double fwd_stall = 0, bwd_stall = 0;  ///< seconds before its forward and backward steps
};

struct LayersData {
  std::string network_key;  ///< as networkKey(): the table keeps its sort and scroll while equal
  bool trainable = false;
  std::string reason;
  std::int64_t k = 0;
  std::vector<LayerRowData> rows;  ///< one per layer id, in id order
};

/// The rows of `plan` (made by perf::Planner for `net` with `request`). `costs` are the
/// network's layer costs (perf::Planner::costs()). An untrainable plan gives no rows and its
/// reason.
LayersData makeLayersData(const Network& net, const std::vector<LayerCost>& costs,
                          const perf::PerfModel& model, const perf::PlanRequest& request,
                          const perf::PlanResult& plan);

}  // namespace swapscope
