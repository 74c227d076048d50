// SPDX-License-Identifier: MIT
/// @brief Swap sets and the policies that build them. A swap set marks, per layer id, whether that
/// layer's output feature map is offloaded to host memory after its forward use and prefetched
/// before its backward use. Only FMs that some backward step reads can be swapped.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/layer_cost.h"
#include "graph/network.h"

namespace swapscope {

enum class SwapPolicy {
  KeepAll,   ///< nothing is swapped: the framework baseline
  SwapAll,   ///< every swappable FM is swapped: the layer-wise ("naive swap") peak
  VdnnConv,  ///< vDNN's conv policy: swap the FMs that convolutions read
};

std::string_view swapPolicyName(SwapPolicy p);
std::optional<SwapPolicy> swapPolicyFromName(std::string_view name);

/// One flag per layer id: true where the layer's output FM is swapped.
using SwapSet = std::vector<bool>;

/// True where layer i's output FM is read by some backward step (so swapping it can save memory).
std::vector<bool> swappableFms(const Network& net, const std::vector<LayerCost>& costs);

SwapSet makeSwapSet(SwapPolicy policy, const Network& net, const std::vector<LayerCost>& costs);

/// A swap set from FM (layer) names; every name must exist and be swappable, else Error(BadInput)
/// naming the entry as `where`[i]`field` ("plan.json: swap_set[0].fm"), the name and the network.
SwapSet swapSetFromNames(const Network& net, const std::vector<LayerCost>& costs,
                         const std::vector<std::string>& names,
                         const std::string& where = "swap set", const std::string& field = "");

}  // namespace swapscope
