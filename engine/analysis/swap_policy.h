// SPDX-License-Identifier: MIT
/// @brief Swap sets and the policies that build them. A swap set marks, per layer id, whether that
/// layer's output feature map is offloaded to host memory after its forward use and prefetched
/// before its backward use. Only FMs that some backward step reads can be swapped.
#pragma once

#include <string>
#include <vector>

#include "analysis/layer_cost.h"
#include "analysis/policy.h"
#include "graph/network.h"

namespace swapscope {

/// The former name of Policy, and of policyName(); new code uses those.
using SwapPolicy = Policy;
inline std::string_view swapPolicyName(Policy p) {
  return policyName(p);
}

/// One flag per layer id: true where the layer's output FM is swapped.
using SwapSet = std::vector<bool>;

/// True where layer i's output FM is read by some backward step (so swapping it can save memory).
std::vector<bool> swappableFms(const Network& net, const std::vector<LayerCost>& costs);

/// The swap set of a fixed policy (policyInfo(policy).fixed()); Error(Runtime) for a searched one.
SwapSet makeSwapSet(Policy policy, const Network& net, const std::vector<LayerCost>& costs);

/// A swap set from FM (layer) names; every name must exist and be swappable, else Error(BadInput)
/// naming the entry as `where`[i]`field` ("plan.json: swap_set[0].fm"), the name and the network.
SwapSet swapSetFromNames(const Network& net, const std::vector<LayerCost>& costs,
                         const std::vector<std::string>& names,
                         const std::string& where = "swap set", const std::string& field = "");

}  // namespace swapscope
