// SPDX-License-Identifier: MIT
#include "views/memory_chart_data.h"

#include "analysis/gmap.h"
#include "perfmodel/planner.h"

namespace swapscope {
namespace {

MemorySeries seriesOf(std::string name, const MemoryCurve& curve, int steps, std::int64_t k,
                      bool reference) {
  MemorySeries s;
  s.policy = std::move(name);
  s.reference = reference;
  s.bytes.reserve(static_cast<std::size_t>(steps));
  for (int step = 1; step <= steps; ++step)
    s.bytes.push_back(static_cast<double>(curve.resident[static_cast<std::size_t>(step)].at(k)));
  s.peak = curve.peak(k);
  return s;
}

std::vector<int> stepLayers(const Gmap& gmap) {
  std::vector<int> layers;
  for (int step = 1; step <= gmap.steps(); ++step)
    layers.push_back(gmap.step_layer[static_cast<std::size_t>(step)]);
  return layers;
}

}  // namespace

MemoryChartData makeMemoryChartData(const Network& net, const NetworkAnalysis& analysis,
                                    std::int64_t k, std::int64_t budget) {
  MemoryChartData d;
  d.title = net.name() + " at k = " + std::to_string(k);
  d.k = k;
  d.budget = budget;
  const Gmap& gmap = analysis.keep_all.gmap;
  d.forward_steps = gmap.forward_steps;
  d.step_layer = stepLayers(gmap);
  std::vector<std::pair<Policy, const MemoryPlan*>> plans{{Policy::KeepAll, &analysis.keep_all}};
  for (const auto& [policy, plan] : analysis.other_fixed)
    plans.emplace_back(policy, &plan);
  plans.emplace_back(Policy::SwapAll, &analysis.swap_all);
  for (const auto& [policy, plan] : plans)
    d.series.push_back(
        seriesOf(std::string(policyName(policy)), plan->curve, plan->gmap.steps(), k, false));
  return d;
}

MemoryChartData makePlanMemoryChartData(const Network& net, const NetworkAnalysis& analysis,
                                        const perf::PlanResult& plan, std::string_view policy,
                                        std::int64_t budget) {
  MemoryChartData d;
  d.budget = budget;
  const Gmap& reference = analysis.keep_all.gmap;
  d.forward_steps = reference.forward_steps;
  d.step_layer = stepLayers(reference);
  const int steps = reference.steps();
  if (!plan.trainable) {
    d.k = 1;
    d.untrainable = plan.reason;
    d.title = net.name() + ": no plan trains in this budget";
  } else {
    d.k = plan.best.k;
    d.title = net.name() + " at k = " + std::to_string(d.k) + " (" + std::string(policy) + ")";
    d.series.push_back(
        seriesOf("plan (" + std::string(policy) + ")", plan.curve, plan.gmap.steps(), d.k, false));
    const std::vector<SwapSteps> where = swapSteps(plan.gmap);
    for (std::size_t b = 0; b < plan.gmap.buffers.size(); ++b) {
      const GmapBuffer& buffer = plan.gmap.buffers[b];
      if (where[b].prefetch <= 0) continue;  // not swapped (as the plan file counts)
      SwapSpan span;
      span.fm = buffer.name;
      span.layer = buffer.layer;
      span.release_step = where[b].release;
      span.prefetch_step = where[b].prefetch;
      span.bytes = buffer.size.at(d.k);
      d.spans.push_back(std::move(span));
    }
  }
  d.series.push_back(seriesOf("keep-all", analysis.keep_all.curve, steps, d.k, true));
  d.series.push_back(seriesOf("swap-all", analysis.swap_all.curve, steps, d.k, true));
  return d;
}

}  // namespace swapscope
