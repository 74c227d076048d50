// SPDX-License-Identifier: MIT
#include "analysis/network_analysis.h"

#include <algorithm>
#include <array>

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
  const FixedSets sets = fixedSets(policy, net, costs);
  MemoryPlan plan;
  plan.gmap = buildGmap(net, costs, sets.swapped, sets.recomputed);
  plan.curve = computeMemoryCurve(plan.gmap);
  return plan;
}

namespace {

/// The policies every analysis holds by name, with their members.
constexpr std::array kBaselines{
    std::pair{Policy::KeepAll, &NetworkAnalysis::keep_all},
    std::pair{Policy::SwapAll, &NetworkAnalysis::swap_all},
};

}  // namespace

bool isBaselinePolicy(Policy p) {
  return std::any_of(kBaselines.begin(), kBaselines.end(),
                     [p](const auto& baseline) { return baseline.first == p; });
}

NetworkAnalysis analyzeNetwork(const Network& net) {
  NetworkAnalysis a;
  a.costs = computeLayerCosts(net);
  a.totals = sumCosts(a.costs);
  for (const auto& [policy, member] : kBaselines)
    a.*member = planMemory(net, a.costs, makeSwapSet(policy, net, a.costs));
  a.lower_bound = memoryLowerBound(a.swap_all.gmap);
  for (const PolicyInfo& info : policyTable()) {
    if (info.fixed() && !isBaselinePolicy(info.id)) {
      a.other_fixed.emplace_back(info.id, planMemory(net, a.costs, info.id));
    }
  }
  a.lower_bound_recompute = memoryLowerBound(a.plan(Policy::RecomputeLight).gmap);
  return a;
}

const MemoryPlan& NetworkAnalysis::plan(Policy p) const {
  for (const auto& [policy, member] : kBaselines) {
    if (policy == p) return this->*member;
  }
  for (const auto& [policy, plan] : other_fixed) {
    if (policy == p) return plan;
  }
  throw Error(ErrorKind::Runtime,
              "policy " + std::string(policyName(p)) +
                  " is searched by the planner; the analyzer has no plan for it");
}

}  // namespace swapscope
