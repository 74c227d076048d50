// SPDX-License-Identifier: MIT
// ito (Ito et al. §4.4.3): recompute instead of swap where it costs less.
#include <algorithm>
#include <map>

#include "perfmodel/plan_context.h"

namespace swapscope::perf::planning {

/// ito's stage 2 (Ito et al. §4.4.3) on its stage-1 plan, a keep/swap plan at k: which swapped
/// FMs to recompute instead. r(X) = recompute overhead / swap overhead, where the recompute
/// overhead is the forward time of X's layer plus that of the inputs it must re-make (those no
/// backward step reads, released in forward), and the swap overhead is the time of X's offload and
/// prefetch at k (the paper leaves both to "the overhead with everything else fixed"; these are
/// what the simulator charges). r does not change as other FMs become recomputed (a recomputed FM
/// is still read in backward, so it is a source, not re-made again), so the paper's loop, which
/// takes the least r < 1 and repeats, is one pass in ascending r. Each candidate is taken only
/// where the exact GMAP of the sets with it (buildGmap refuses a re-make that needs a heavy layer
/// or the minibatch; it is then skipped) fits the budget and the simulation is no slower than
/// the plan so far: the answer is never slower than stage 1's. Not kept across budgets: every
/// comparison with the budget here uses its own window. The GMAPs of the sets it tries, and
/// buildGmap's refusals, are kept in the prepared cache with accudnn's, so a plan made again
/// (another budget at the same k, the app's next drag) builds none of them again.
Evaluation itoStage2(const Context& ctx, Evaluation stage1, std::int64_t budget, int reuseDelay,
                     int* evaluated) {
  const Network& net = ctx.net;
  const std::int64_t k = stage1.k;
  const StepTimes& times = *ctx.timesAt(k);
  const Gmap& g = ctx.swapAll.gmap;
  const auto layers = static_cast<std::size_t>(net.size());
  std::vector<double> forward(layers, 0.0);
  for (int s = 1; s <= g.forward_steps; ++s)
    forward[static_cast<std::size_t>(g.step_layer[static_cast<std::size_t>(s)])] =
        times.step_seconds[static_cast<std::size_t>(s)];
  std::vector<std::int64_t> fmBytes(layers, 0);
  for (const GmapBuffer& b : g.buffers) {
    if (b.kind == BufferKind::FeatureMap && b.layer >= 0)
      fmBytes[static_cast<std::size_t>(b.layer)] = b.size.at(k);
  }
  const std::vector<bool> read = swappableFms(net, ctx.costs);
  std::vector<double> remade(layers, -1.0);  // memo: a layer's forward and its released inputs'
  auto remake = [&](auto&& self, int i) -> double {
    double& t = remade[static_cast<std::size_t>(i)];
    if (t >= 0) return t;
    double sum = forward[static_cast<std::size_t>(i)];
    for (const int src : net.inputsOf(i)) {
      if (!read[static_cast<std::size_t>(src)] && src != net.inputLayer()) sum += self(self, src);
    }
    return t = sum;
  };
  std::vector<std::pair<double, int>> candidates;  // (r, layer), r < 1
  for (int i = 0; i < net.size(); ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (!stage1.swapped[u] || i == net.inputLayer() || !isLightLayer(net.layer(i).kind) ||
        net.consumersOf(i).empty()) {
      continue;
    }
    const double copy =
        ctx.model.transfer(fmBytes[u], true) + ctx.model.transfer(fmBytes[u], false);
    if (!(copy > 0)) continue;  // no swap overhead: r is undefined, X stays swapped
    const double r = remake(remake, i) / copy;
    if (r < 1.0) candidates.emplace_back(r, i);
  }
  std::sort(candidates.begin(), candidates.end());
  Evaluation best = std::move(stage1);
  RecomputeSet recomputed(layers, false);
  int count = 0;
  for (const auto& [r, i] : candidates) {
    SwapSet set = best.swapped;
    RecomputeSet remakes = recomputed;
    set[static_cast<std::size_t>(i)] = false;
    remakes[static_cast<std::size_t>(i)] = true;
    const auto p = ctx.prepared(set, remakes);
    if (!p) continue;  // this FM cannot be re-made from resident ones
    ++count;
    BudgetWindow window(budget);
    auto e = evaluatePrepared(ctx, *p, times, window, reuseDelay);
    if (!e || !noWorse(e->sim.t_iter, best.sim.t_iter)) continue;
    best = std::move(*e);
    recomputed = std::move(remakes);
  }
  if (evaluated) *evaluated += count;
  return best;
}

}  // namespace swapscope::perf::planning
