// SPDX-License-Identifier: MIT
/// @brief Everything the static analyzer knows about a network, computed in one call: per-layer
/// costs, totals, the GMAP and memory curve of every fixed policy, and the lower bound.
#pragma once

#include <utility>
#include <vector>

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
/// A fixed policy's plan: its swap set and its recompute set.
MemoryPlan planMemory(const Network& net, const std::vector<LayerCost>& costs, Policy policy);

struct NetworkAnalysis {
  std::vector<LayerCost> costs;
  CostTotals totals;
  MemoryPlan keep_all;
  MemoryPlan swap_all;
  std::int64_t lower_bound = 0;  ///< moDNN eq. 2 at k = 1
  /// The same bound when the FMs recompute-light recomputes are re-made instead of kept or
  /// prefetched (docs/analysis.md, "Memory curve, peak, k_max and the lower bound"): each step's
  /// set also holds the sources and outputs of the re-makes it runs. At least lower_bound.
  std::int64_t lower_bound_recompute = 0;
  /// Every other fixed policy's plan (analysis/policy.h: vdnn-conv, ...), in table order: each
  /// row's function makes it, so a new fixed policy has its plan here.
  std::vector<std::pair<Policy, MemoryPlan>> other_fixed;

  /// The plan of a fixed policy; Error(Runtime) for a searched one.
  const MemoryPlan& plan(Policy p) const;
};

/// keep-all and swap-all: the policies whose plans every analysis holds by name (keep_all,
/// swap_all) and the analyzer always reports; every other fixed policy's is in other_fixed.
bool isBaselinePolicy(Policy p);

NetworkAnalysis analyzeNetwork(const Network& net);

}  // namespace swapscope
