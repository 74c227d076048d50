// SPDX-License-Identifier: MIT
#include "views/memory_chart_data.h"

#include <algorithm>
#include <map>

#include "analysis/gmap.h"
#include "perfmodel/planner.h"
#include "store/run_db.h"

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
    const std::vector<RecomputeSteps> remade = recomputeSteps(plan.gmap);
    for (std::size_t b = 0; b < plan.gmap.buffers.size(); ++b) {
      if (remade[b].recompute <= 0) continue;  // not recomputed (as the plan file counts)
      const GmapBuffer& buffer = plan.gmap.buffers[b];
      d.spans.push_back({.fm = buffer.name,
                         .layer = buffer.layer,
                         .release_step = remade[b].release,
                         .prefetch_step = remade[b].recompute,
                         .bytes = buffer.size.at(d.k),
                         .recomputed = true});
    }
  }
  // Without a plan the curves are drawn at k = 1, whatever k was asked for: the legend says so.
  const std::string at = plan.trainable ? "" : " at k = 1";
  d.series.push_back(seriesOf("keep-all" + at, analysis.keep_all.curve, steps, d.k, true));
  d.series.push_back(seriesOf("swap-all" + at, analysis.swap_all.curve, steps, d.k, true));
  return d;
}

bool addMeasuredMemory(MemoryChartData& chart, const store::RunData& run, std::int64_t k) {
  // The iteration at k whose pool bytes were recorded, its rows in time order.
  std::map<int, std::vector<const store::MemoryRow*>> memory;
  for (const store::MemoryRow& m : run.memory) {
    if (m.k == k) memory[m.iteration].push_back(&m);
  }
  if (memory.empty()) return false;
  const int iteration = memory.begin()->first;
  std::vector<const store::MemoryRow*>& rows = memory.begin()->second;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto* a, const auto* b) { return a->time_ns < b->time_ns; });
  const std::size_t steps = chart.step_layer.size();
  std::vector<const store::SampleRow*> byStep(steps + 1, nullptr);
  for (const store::SampleRow& s : run.samples) {
    if (s.k != k || s.iteration != iteration || s.direction == store::Direction::Update) continue;
    if (s.step < 1 || static_cast<std::size_t>(s.step) > steps) return false;  // another GMAP
    byStep[static_cast<std::size_t>(s.step)] = &s;
  }
  MemorySeries series;
  series.policy = "measured, iteration " + std::to_string(iteration);
  series.measured = true;
  series.bytes.reserve(steps);
  std::size_t next = 0;    // the first row after the previous step's start
  std::int64_t inUse = 0;  // bytes in use at the current time
  for (std::size_t step = 1; step <= steps; ++step) {
    const store::SampleRow* s = byStep[step];
    if (!s) return false;  // a step without its sample: not a whole iteration
    const std::int64_t end = s->start_ns + s->time_ns;
    // The bytes in use when the step starts, then every change until it ends.
    while (next < rows.size() && rows[next]->time_ns <= s->start_ns)
      inUse = rows[next++]->in_use;
    std::int64_t most = inUse;
    for (std::size_t i = next; i < rows.size() && rows[i]->time_ns <= end; ++i)
      most = std::max(most, rows[i]->in_use);
    series.bytes.push_back(static_cast<double>(most));
  }
  for (const store::BatchRow& b : run.batches) {
    if (b.k == k) series.peak = b.measured_peak;
  }
  if (series.peak == 0) {
    for (const auto* m : rows)
      series.peak = std::max(series.peak, m->in_use);
  }
  chart.series.push_back(std::move(series));
  return true;
}

}  // namespace swapscope
