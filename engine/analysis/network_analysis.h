// SPDX-License-Identifier: MIT
/// @brief Everything the static analyzer knows about a network, computed in one call: per-layer
/// costs, totals, the keep-all and swap-all GMAPs with their memory curves, and the lower bound.
#pragma once

#include "analysis/gmap.h"
#include "analysis/layer_cost.h"
#include "analysis/memory.h"
#include "analysis/swap_policy.h"
#include "graph/network.h"

namespace swapscope {

/// A GMAP and its memory curve for one swap set.
struct MemoryPlan {
  Gmap gmap;
  MemoryCurve curve;
};

MemoryPlan planMemory(const Network& net, const std::vector<LayerCost>& costs,
                      const SwapSet& swapped);

struct NetworkAnalysis {
  std::vector<LayerCost> costs;
  CostTotals totals;
  MemoryPlan keep_all;
  MemoryPlan swap_all;
  std::int64_t lower_bound = 0;  ///< moDNN eq. 2 at k = 1
};

NetworkAnalysis analyzeNetwork(const Network& net);

}  // namespace swapscope
