// SPDX-License-Identifier: MIT
#include "analysis/network_analysis.h"

#include "common/error.h"

namespace swapscope {

MemoryPlan planMemory(const Network& net, const std::vector<LayerCost>& costs,
                      const SwapSet& swapped) {
  MemoryPlan plan;
  plan.gmap = buildGmap(net, costs, swapped);
  plan.curve = computeMemoryCurve(plan.gmap);
  return plan;
}

MemoryPlan planMemory(const Network& net, const std::vector<LayerCost>& costs, Policy policy) {
  MemoryPlan plan;
  plan.gmap =
      buildGmap(net, costs, makeSwapSet(policy, net, costs), makeRecomputeSet(policy, net, costs));
  plan.curve = computeMemoryCurve(plan.gmap);
  return plan;
}

NetworkAnalysis analyzeNetwork(const Network& net) {
  NetworkAnalysis a;
  a.costs = computeLayerCosts(net);
  a.totals = sumCosts(a.costs);
  a.keep_all = planMemory(net, a.costs, makeSwapSet(Policy::KeepAll, net, a.costs));
  a.swap_all = planMemory(net, a.costs, makeSwapSet(Policy::SwapAll, net, a.costs));
  a.lower_bound = memoryLowerBound(a.swap_all.gmap);
  for (const PolicyInfo& info : policyTable()) {
    if (info.fixed() && info.id != Policy::KeepAll && info.id != Policy::SwapAll) {
      a.other_fixed.emplace_back(info.id, planMemory(net, a.costs, info.id));
    }
  }
  a.lower_bound_recompute = memoryLowerBound(a.plan(Policy::RecomputeLight).gmap);
  return a;
}

const MemoryPlan& NetworkAnalysis::plan(Policy p) const {
  if (p == Policy::KeepAll) return keep_all;
  if (p == Policy::SwapAll) return swap_all;
  for (const auto& [policy, plan] : other_fixed) {
    if (policy == p) return plan;
  }
  throw Error(ErrorKind::Runtime,
              "policy " + std::string(policyName(p)) +
                  " is searched by the planner; the analyzer has no plan for it");
}

}  // namespace swapscope
