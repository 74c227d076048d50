// SPDX-License-Identifier: MIT
#include "analysis/network_analysis.h"

namespace swapscope {

MemoryPlan planMemory(const Network& net, const std::vector<LayerCost>& costs,
                      const SwapSet& swapped) {
  MemoryPlan plan;
  plan.gmap = buildGmap(net, costs, swapped);
  plan.curve = computeMemoryCurve(plan.gmap);
  return plan;
}

NetworkAnalysis analyzeNetwork(const Network& net) {
  NetworkAnalysis a;
  a.costs = computeLayerCosts(net);
  a.totals = sumCosts(a.costs);
  a.keep_all = planMemory(net, a.costs, makeSwapSet(SwapPolicy::KeepAll, net, a.costs));
  a.swap_all = planMemory(net, a.costs, makeSwapSet(SwapPolicy::SwapAll, net, a.costs));
  a.lower_bound = memoryLowerBound(a.swap_all.gmap);
  return a;
}

}  // namespace swapscope
