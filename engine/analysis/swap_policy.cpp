// SPDX-License-Identifier: MIT
#include "analysis/swap_policy.h"

#include "common/error.h"
#include "graph/json_guard.h"

namespace swapscope {

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

SwapSet makeSwapSet(Policy policy, const Network& net, const std::vector<LayerCost>& costs) {
  SwapSet set(net.size(), false);
  switch (policy) {
    case Policy::KeepAll:
      return set;
    case Policy::SwapAll:
      return swappableFms(net, costs);
    case Policy::VdnnConv: {
      const std::vector<bool> swappable = swappableFms(net, costs);
      for (int i = 0; i < net.size(); ++i) {
        if (net.layer(i).kind != LayerKind::Conv2d) continue;
        for (int src : net.inputsOf(i))
          set[src] = swappable[src];
      }
      return set;
    }
    case Policy::AccUdnn:
      break;
  }
  throw Error(ErrorKind::Runtime, "policy " + std::string(policyName(policy)) +
                                      " is searched by the planner; its swap set does not " +
                                      "follow from the network alone");
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
