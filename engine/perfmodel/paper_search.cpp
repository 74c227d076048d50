// SPDX-License-Identifier: MIT
// Paper mode: AccUDNN §4's Algorithm 2, the largest k whose stall-free timeline meets
// constraint (6) after pinning (Algorithm 1, perfmodel/paper.h).
#include <map>
#include <string>
#include <vector>

#include "common/format.h"
#include "perfmodel/plan_context.h"

namespace swapscope::perf::planning {
namespace {

/// Algorithm 2's descent over k: the largest k in 1..top for which `feasible` gives a plan.
/// With `scanAll`, every k from top down, as written. Otherwise the descent steps down the
/// geometric grid to the first feasible grid point and bisects between it and the infeasible
/// point above: the same k as the full scan wherever feasibility is monotone in k between two
/// grid points, with O(log top) checks instead of O(top).
template <typename Feasible>
std::optional<Evaluation> largestFeasibleK(std::int64_t top, bool scanAll, Feasible&& feasible) {
  if (scanAll) {
    for (std::int64_t k = top; k >= 1; --k) {
      if (auto e = feasible(k)) return e;
    }
    return std::nullopt;
  }
  const auto ks = grid(top);
  std::int64_t above = top + 1;  // the smallest k known infeasible
  std::optional<Evaluation> found;
  for (auto it = ks.rbegin(); it != ks.rend() && !found; ++it) {
    found = feasible(*it);
    if (!found) above = *it;
  }
  if (!found) return std::nullopt;
  std::int64_t lo = found->k;  // feasible
  std::int64_t hi = above;     // infeasible (or past top)
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (auto e = feasible(mid)) {
      lo = mid;
      found = std::move(e);
    } else {
      hi = mid;
    }
  }
  return found;
}

/// Why a k fails constraint (6) after pinning: the first violating step, what made it late, and
/// why no pin moves it.
struct Infeasible {
  const Context& ctx;
  const PlanRequest& req;
  const Gmap& g;  ///< the pool's GMAP
  std::int64_t k, peak;
  bool fixed;

  std::string stepName(int s) const {
    return "step " + std::to_string(s) + " (" +
           ctx.net.layer(g.step_layer[static_cast<std::size_t>(s)]).name + ", " +
           (g.isBackwardStep(s) ? "bwd" : "fwd") + ")";
  }

  std::string why(const PaperResult& pr, const PaperInput& pin,
                  const std::vector<std::vector<int>>& prefetchedAt, const SwapSet& set,
                  std::int64_t area) const {
    const int j = pr.violations.front();
    const auto js = static_cast<std::size_t>(j);
    std::string why = "at k = " + std::to_string(k) + ", " + stepName(j) + " is ready at " +
                      formatMilliseconds(pr.t_ready[js]) + " ms, after " + stepName(j - 1) +
                      " ends at " + formatMilliseconds(pr.finish[js - 1]) +
                      " ms on the stall-free timeline: ";
    if (pr.waited_for[js] > 0) {
      why += "its " + formatBytes(pin.allocate[js]) + " do not fit the active area of " +
             formatBytes(peak) + " (M_peak(k)) until " + stepName(pr.waited_for[js]) +
             " releases memory";
    } else {
      why += "the swap-in stream reaches it at " + formatMilliseconds(pr.t_ready[js - 1]) + " ms";
    }
    if (pin.prefetch[js] > 0) {
      why += ", and its prefetches take " + formatMilliseconds(pin.prefetch[js]) + " ms";
    }
    std::string blocked;
    for (const int b : prefetchedAt[js]) {
      const GmapBuffer& buf = g.buffers[static_cast<std::size_t>(b)];
      if (buf.layer >= 0 && !set[static_cast<std::size_t>(buf.layer)]) continue;  // pinned
      blocked += (blocked.empty() ? "" : "; ") + buf.name + " needs " + formatBytes(buf.size.at(k));
    }
    if (fixed) {
      why += "; " + std::string(policyName(req.policy)) + " pins nothing";
    } else if (!blocked.empty()) {
      why += "; no pin fits the pinned area (budget - M_peak(k)), " +
             formatBytes(std::max<std::int64_t>(0, area)) + " left: " + blocked;
    } else if (pin.prefetch[js] <= 0) {
      why += "; it prefetches nothing, so no pin can move it";
    }
    return why;
  }
};

}  // namespace

std::optional<Evaluation> paperSearch(const Context& ctx, const PlanRequest& req,
                                      const Prepared* fixed, std::int64_t top, PlanResult& out) {
  // Algorithm 2: the largest k whose t_ready meets (6) after pinning. Fixed policies run
  // Algorithm 1 on their own GMAP without pinning. Every k uses the split of Algorithm 2: an
  // active area of M_peak(k) and a pinned area of the rest of the budget; where the budget
  // holds keep-all at k, every FM can stay (keep-all's exact peak fits), and the area is no
  // limit.
  const Prepared& base = fixed ? *fixed : ctx.swapAll;
  const Gmap& g = base.pool();  // the bytes the pool holds; copy times are simInput's
  const int n = g.forward_steps;
  const auto steps = static_cast<std::size_t>(2 * n + 1);
  // Per buffer: the backward step it is prefetched for (0: none).
  std::vector<int> prefetchStep(g.buffers.size(), 0);
  std::vector<std::vector<int>> prefetchedAt(steps);
  for (const GmapOp& op : g.ops) {
    if (op.kind != GmapOpKind::Prefetch || op.step <= n || op.step > 2 * n) continue;
    prefetchStep[static_cast<std::size_t>(op.buffer)] = op.step;
    prefetchedAt[static_cast<std::size_t>(op.step)].push_back(op.buffer);
  }
  std::map<std::int64_t, std::pair<PaperResult, std::int64_t>> timelines;  // feasible k
  std::string failure;   // the last infeasible k: its first violation and the cause
  bool packing = false;  // the last infeasible k met (6) but did not run
  auto paperAt = [&](std::int64_t k) -> std::optional<Evaluation> {
    const std::int64_t peak = base.curve.peak(k);
    const StepTimes& times = *ctx.timesAt(k);
    const SimInput in = simInput(ctx, base, times, *ctx.scheduleAt(base, times.k), 0);
    PaperInput pin;
    pin.budget = peak;
    pin.resident = base.curve.persistent.at(k);
    pin.allocate.assign(steps, 0);
    pin.release.assign(steps, 0);
    pin.prefetch.assign(steps, 0.0);
    pin.compute = in.step_seconds;
    for (const GmapOp& op : g.ops) {
      if (op.step < 1 || op.step > 2 * n) continue;
      const auto s = static_cast<std::size_t>(op.step);
      const auto b = static_cast<std::size_t>(op.buffer < 0 ? 0 : op.buffer);
      if (op.kind == GmapOpKind::Allocate) pin.allocate[s] += g.buffers[b].size.at(k);
      if (op.kind == GmapOpKind::Release) pin.release[s] += g.buffers[b].size.at(k);
      if (op.kind == GmapOpKind::Prefetch) pin.prefetch[s] += in.prefetch_seconds[b];
    }
    PaperResult pr = algorithm1(pin);
    ++out.evaluated;
    const bool keepAllFits = !fixed && ctx.keepAll.curve.peak(k) <= req.budget;
    std::int64_t area = fixed ? 0 : req.budget - peak;
    SwapSet set = base.set;
    auto bytesOf = [&](int b) { return g.buffers[static_cast<std::size_t>(b)].size.at(k); };
    auto pinnable = [&](int b) {
      const int layer = g.buffers[static_cast<std::size_t>(b)].layer;
      return !fixed && layer >= 0 && set[static_cast<std::size_t>(layer)] &&
             (keepAllFits || bytesOf(b) <= area);
    };
    auto pinBuffer = [&](int b) {
      const auto bb = static_cast<std::size_t>(b);
      area -= bytesOf(b);
      set[static_cast<std::size_t>(g.buffers[bb].layer)] = false;
      pin.prefetch[static_cast<std::size_t>(prefetchStep[bb])] -= in.prefetch_seconds[bb];
    };
    // Pin FMs prefetched for violating steps, largest time saved per byte first (G15).
    while (!pr.violations.empty()) {
      int bestBuf = -1;
      double bestScore = 0;
      for (const int j : pr.violations) {
        for (const int b : prefetchedAt[static_cast<std::size_t>(j)]) {
          if (!pinnable(b)) continue;
          const double score = in.prefetch_seconds[static_cast<std::size_t>(b)] /
                               static_cast<double>(std::max<std::int64_t>(1, bytesOf(b)));
          if (score > bestScore) {
            bestScore = score;
            bestBuf = b;
          }
        }
      }
      if (bestBuf < 0) break;
      pinBuffer(bestBuf);
      pr = algorithm1(pin);
      ++out.evaluated;
    }
    if (!pr.violations.empty()) {
      packing = false;
      failure =
          Infeasible{ctx, req, g, k, peak, fixed != nullptr}.why(pr, pin, prefetchedAt, set, area);
      return std::nullopt;
    }
    if (!fixed) {
      // Fill the rest of the pinned area, largest FM first: of the plans that meet (6), the
      // one that moves the fewest bytes (t_ready only falls as prefetches go).
      std::vector<int> rest;
      for (std::size_t b = 0; b < g.buffers.size(); ++b) {
        if (prefetchStep[b] > 0 && pinnable(static_cast<int>(b))) {
          rest.push_back(static_cast<int>(b));
        }
      }
      std::sort(rest.begin(), rest.end(), [&](int x, int y) {
        return bytesOf(x) != bytesOf(y) ? bytesOf(x) > bytesOf(y) : x < y;
      });
      for (const int b : rest) {
        if (pinnable(b)) pinBuffer(b);
      }
      if (keepAllFits) set = ctx.keepAll.set;
      if (!rest.empty()) {
        pr = algorithm1(pin);
        ++out.evaluated;
      }
    }
    ++out.evaluated;
    // A fixed policy's own plan: its recompute set is not in `set`.
    BudgetWindow window(req.budget);
    const Prepared& plan = fixed ? *fixed : *ctx.prepared(set);
    auto e = evaluatePrepared(ctx, plan, times, window, req.reuse_delay);
    // Beyond Algorithm 2: a plan whose buffers pack neither ahead of time nor at run time does
    // not run (the executor refuses it), whatever (6) says.
    if (e && req.reuse_delay < 0 && !executorSchedule(ctx, plan, req.budget, *e)->runs) {
      failure = "k = " + std::to_string(k) + " meets (6), but its buffers pack neither ahead of " +
                "time nor at run time in " + formatBytes(req.budget) +
                " (alignment and fragmentation)";
      packing = true;
      return std::nullopt;
    }
    if (e) timelines[k] = {std::move(pr), fixed ? 0 : req.budget - peak};
    return e;
  };
  std::optional<Evaluation> best = largestFeasibleK(top, req.paper_scan_all, paperAt);
  if (best) {
    auto& [timeline, area] = timelines.at(best->k);
    out.paper = std::move(timeline);
    out.pinned_area = area;
  } else if (packing) {
    // The k values that meet (6) do not run: not a stall the model predicts, the pool's packing.
    out.does_not_pack = true;
    out.reason = "Algorithm 2 found no k that runs in " + formatBytes(req.budget) + ": " + failure;
  } else {
    out.infeasible = true;
    out.reason =
        "Algorithm 2 found no feasible k: " +
        (top == 1
             ? std::string("k = 1, the only k that fits,") + " does not satisfy constraint (6) in "
             : "no k from " + std::to_string(top) + " down to 1 satisfies constraint (6) in ") +
        formatBytes(req.budget) + "; " + failure;
  }
  return best;
}

}  // namespace swapscope::perf::planning
