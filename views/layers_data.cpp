// SPDX-License-Identifier: MIT
#include "views/layers_data.h"

#include "views/streams_data.h"

namespace swapscope {

const char* fmStateName(FmState s) {
  switch (s) {
    case FmState::Kept:
      return "kept";
    case FmState::Swapped:
      return "swapped";
    case FmState::Pinned:
      return "pinned";
    case FmState::Recomputed:
      return "recomputed";
  }
  return "?";
}

LayersData makeLayersData(const Network& net, const std::vector<LayerCost>& costs,
                          const perf::PerfModel& model, const perf::PlanRequest& request,
                          const perf::PlanResult& plan) {
  LayersData d;
  d.network_key = networkKey(net);
  d.trainable = plan.trainable;
  if (!plan.trainable) {
    d.reason = plan.reason;
    return d;
  }
  const perf::Evaluation& e = plan.best;
  const Gmap& g = plan.gmap;
  const std::int64_t k = e.k;
  d.k = k;
  const std::vector<bool> swappable = swappableFms(net, costs);
  const std::vector<SwapSteps> steps = swapSteps(g);
  d.rows.resize(static_cast<std::size_t>(net.size()));
  for (int i = 0; i < net.size(); ++i) {
    const auto ii = static_cast<std::size_t>(i);
    LayerRowData& r = d.rows[ii];
    const LayerCost& c = costs[ii];
    r.layer = i;
    r.name = net.layer(i).name;
    r.type = std::string(layerKindName(net.layer(i).kind));
    r.fm_bytes = c.fm.at(k);
    r.fwd_flops = c.fwd_flops * k;
    r.bwd_flops = (c.bwd_data_flops + c.bwd_weight_flops) * k;
    r.swappable = swappable[ii];
    const bool swapped = ii < e.swapped.size() && e.swapped[ii];
    const bool recomputed = ii < g.recomputed.size() && g.recomputed[ii];
    r.state = swapped                                              ? FmState::Swapped
              : recomputed                                         ? FmState::Recomputed
              : !policyInfo(request.policy).fixed() && r.swappable ? FmState::Pinned
                                                                   : FmState::Kept;
  }
  for (int j = 1; j <= g.steps(); ++j) {
    const int layer = g.step_layer[static_cast<std::size_t>(j)];
    if (layer < 0 || layer >= net.size()) continue;
    LayerRowData& r = d.rows[static_cast<std::size_t>(layer)];
    // As the plan file counts a stalled step (StepTiming::stalledIdle).
    const double stall = static_cast<std::size_t>(j) < e.sim.steps.size()
                             ? e.sim.steps[static_cast<std::size_t>(j)].stalledIdle()
                             : 0.0;
    if (g.isBackwardStep(j)) {
      r.bwd_step = j;
      r.bwd_stall = stall;
      r.bwd = model.step(net, costs, layer, perf::StepKind::Backward, k);
    } else {
      r.fwd_step = j;
      r.fwd_stall = stall;
      r.fwd = model.step(net, costs, layer, perf::StepKind::Forward, k);
    }
  }
  const std::vector<RecomputeSteps> remakes = recomputeSteps(g);
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    const GmapBuffer& buf = g.buffers[b];
    if (buf.kind != BufferKind::FeatureMap || buf.layer < 0 || buf.layer >= net.size()) continue;
    LayerRowData& r = d.rows[static_cast<std::size_t>(buf.layer)];
    if (steps[b].prefetch > 0) {
      r.release_step = steps[b].release;
      r.prefetch_step = steps[b].prefetch;
    } else if (remakes[b].recompute > 0) {
      r.release_step = remakes[b].release;
      r.remake_step = remakes[b].recompute;
    }
  }
  return d;
}

}  // namespace swapscope
