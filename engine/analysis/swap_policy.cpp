// SPDX-License-Identifier: MIT
#include "analysis/swap_policy.h"

#include "common/error.h"
#include "graph/json_guard.h"

namespace swapscope {

std::string_view swapPolicyName(SwapPolicy p) {
  switch (p) {
    case SwapPolicy::KeepAll:
      return "keep-all";
    case SwapPolicy::SwapAll:
      return "swap-all";
    case SwapPolicy::VdnnConv:
      return "vdnn-conv";
  }
  return "?";
}

std::optional<SwapPolicy> swapPolicyFromName(std::string_view name) {
  for (SwapPolicy p : {SwapPolicy::KeepAll, SwapPolicy::SwapAll, SwapPolicy::VdnnConv}) {
    if (swapPolicyName(p) == name) return p;
  }
  return std::nullopt;
}

std::vector<bool> swappableFms(const Network& net, const std::vector<LayerCost>& costs) {
  std::vector<bool> swappable(net.size(), false);
  for (int i = 0; i < net.size(); ++i) {
    if (costs[i].reads.output) swappable[i] = true;
    if (costs[i].reads.inputs) {
      for (int src : net.inputsOf(i))
        swappable[src] = true;
    }
  }
  return swappable;
}

SwapSet makeSwapSet(SwapPolicy policy, const Network& net, const std::vector<LayerCost>& costs) {
  SwapSet set(net.size(), false);
  if (policy == SwapPolicy::KeepAll) return set;
  const std::vector<bool> swappable = swappableFms(net, costs);
  if (policy == SwapPolicy::SwapAll) return swappable;
  for (int i = 0; i < net.size(); ++i) {
    if (net.layer(i).kind != LayerKind::Conv2d) continue;
    for (int src : net.inputsOf(i))
      set[src] = swappable[src];
  }
  return set;
}

SwapSet swapSetFromNames(const Network& net, const std::vector<LayerCost>& costs,
                         const std::vector<std::string>& names, const std::string& where,
                         const std::string& field) {
  SwapSet set(net.size(), false);
  const std::vector<bool> swappable = swappableFms(net, costs);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string entry =
        where + "[" + std::to_string(i) + "]" + field + ": '" + echoText(names[i]) + "'";
    const int id = net.indexOf(names[i]);
    if (id < 0) throwBadInput(entry + " does not name a layer of '" + net.name() + "'");
    if (!swappable[id]) {
      throwBadInput(entry + ": its feature map is not read by any backward step, so it cannot " +
                    "be swapped");
    }
    set[id] = true;
  }
  return set;
}

}  // namespace swapscope
