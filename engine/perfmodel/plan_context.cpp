// SPDX-License-Identifier: MIT
#include "perfmodel/plan_context.h"

#include "analysis/prefetch_schedule.h"
#include "analysis/reuse_delay.h"
#include "common/bytes.h"

namespace swapscope::perf::planning {

Prepared prepare(const Network& net, const std::vector<LayerCost>& costs, const SwapSet& set,
                 const RecomputeSet& recomputed, const PoolPadding& padding) {
  const RecomputeSet none(set.size(), false);
  const RecomputeSet& r = recomputed.empty() ? none : recomputed;
  Prepared p{set, buildGmap(net, costs, set, r), std::nullopt, {}, r != none};
  if (padding != PoolPadding{}) {
    // The pool's GMAP holds each step's kernel workspace as the executor's does (allocated
    // before the step's compute, released after it), where the profile recorded them for this
    // network; the workspace buffers follow the others, whose indices stay `gmap`'s.
    const std::vector<LinearBytes> workspace =
        padding.workspaces ? workspaceSteps(p.gmap, net.structureHash(), *padding.workspaces)
                           : std::vector<LinearBytes>{};
    p.padded =
        padGmap(workspace.empty() ? p.gmap : buildGmap(net, costs, set, r, &workspace), padding);
  }
  p.curve = computeMemoryCurve(p.pool());
  return p;
}

std::vector<std::pair<Policy, Prepared>> prepareFixed(const Network& net,
                                                      const std::vector<LayerCost>& costs,
                                                      const PoolPadding& padding) {
  std::vector<std::pair<Policy, Prepared>> plans;
  for (const PolicyInfo& info : policyTable()) {
    if (info.fixed()) {
      plans.emplace_back(info.id, prepare(net, costs, makeSwapSet(info.id, net, costs),
                                          makeRecomputeSet(info.id, net, costs), padding));
    }
  }
  return plans;
}

std::optional<Context::KPlan> Context::keptPlan(std::int64_t k, int delay, Stage stage,
                                                std::int64_t budget) const {
  const std::lock_guard<std::mutex> lock(planMutex);
  const auto it = plans.find({k, delay, stage});
  if (it == plans.end()) return std::nullopt;
  for (KeptPlan& kept : it->second) {
    if (kept.plan.window.holds(budget)) {
      kept.last_use = ++planTick;
      return kept.plan;
    }
  }
  return std::nullopt;
}

void Context::keepPlan(std::int64_t k, int delay, Stage stage, const KPlan& plan) const {
  const std::lock_guard<std::mutex> lock(planMutex);
  auto& list = plans[{k, delay, stage}];
  for (const KeptPlan& kept : list) {
    // Another thread made it meanwhile (windows of one key never overlap otherwise: each is the
    // set of budgets a computation cannot tell apart).
    if (kept.plan.window.holds(plan.window.budget)) return;
  }
  list.push_back({plan, ++planTick});
  if (++planCount <= kPlanEntries) return;
  auto oldestList = plans.end();
  std::size_t oldest = 0;
  for (auto i = plans.begin(); i != plans.end(); ++i) {
    for (std::size_t j = 0; j < i->second.size(); ++j) {
      if (oldestList == plans.end() ||
          i->second[j].last_use < oldestList->second[oldest].last_use) {
        oldestList = i;
        oldest = j;
      }
    }
  }
  oldestList->second.erase(oldestList->second.begin() + static_cast<std::ptrdiff_t>(oldest));
  if (oldestList->second.empty()) plans.erase(oldestList);
  --planCount;
}

int chooseDelay(int requested, const Context::Schedule& schedule, BudgetWindow& window) {
  if (requested >= 0) return requested;
  const int delay = firstFittingDelay(schedule.delayed_peaks, window.budget);
  for (const auto& [d, peak] : schedule.delayed_peaks) {
    window.fits(peak);  // the rule's comparisons, in its order, up to the delay it chose
    if (d == delay) break;
  }
  return delay;
}

StepTimes stepTimes(const Context& ctx, const Gmap& g, std::int64_t k) {
  StepTimes t;
  t.k = k;
  const int n = g.forward_steps;
  t.step_seconds.assign(static_cast<std::size_t>(2 * n + 1), 0.0);
  for (int j = 1; j <= 2 * n; ++j) {
    const int layer = g.step_layer[static_cast<std::size_t>(j)];
    const Estimate e =
        ctx.bound.step(layer, g.isBackwardStep(j) ? StepKind::Backward : StepKind::Forward, k);
    t.step_seconds[static_cast<std::size_t>(j)] = e.seconds;
    t.extrapolated = t.extrapolated || e.extrapolated;
    t.transferred = t.transferred || e.transferred;
    t.missing += e.missing;
  }
  for (int i = 0; i < ctx.net.size(); ++i) {
    if (ctx.costs[static_cast<std::size_t>(i)].params > 0) {
      const Estimate e = ctx.bound.step(i, StepKind::Update, k);
      t.update_seconds += e.seconds;
      t.extrapolated = t.extrapolated || e.extrapolated;
      t.transferred = t.transferred || e.transferred;
      t.missing += e.missing;
    }
  }
  return t;
}

std::shared_ptr<const StepTimes> Context::timesAt(std::int64_t k) const {
  return timesCache.getOrMake(
      k, [&] { return std::make_shared<const StepTimes>(stepTimes(*this, swapAll.gmap, k)); });
}

std::shared_ptr<const Context::Schedule> Context::scheduleAt(const Prepared& p,
                                                             std::int64_t k) const {
  const ScheduleKey key{p.set, k, p.recomputes ? p.gmap.recomputed : RecomputeSet{}};
  return scheduleCache.getOrMake(key, [&] {
    auto s = std::make_shared<Schedule>();
    s->move_to = movePrefetches(p.pool(), p.curve, k, p.curve.peak(k)).move_to;
    s->delayed_peaks =
        delayedPeaks(p.pool(), executionOrder(p.pool(), s->move_to), k, model.poolAlignment());
    return std::shared_ptr<const Schedule>(std::move(s));
  });
}

SimInput simInput(const Context& ctx, const Prepared& p, const StepTimes& times,
                  const Context::Schedule& schedule, int delay) {
  SimInput in;
  in.gmap = &p.gmap;
  in.curve = &p.curve;
  in.k = times.k;
  in.step_seconds = times.step_seconds;
  in.update_seconds = times.update_seconds;
  if (p.recomputes) {
    // A recomputed FM's layer runs forward again in the backward step that re-makes it.
    const int n = p.gmap.forward_steps;
    std::vector<int> forwardStep(p.gmap.recomputed.size(), 0);
    for (int s = 1; s <= n; ++s)
      forwardStep[static_cast<std::size_t>(p.gmap.step_layer[static_cast<std::size_t>(s)])] = s;
    for (const GmapOp& op : p.gmap.ops) {
      if (op.kind != GmapOpKind::Recompute) continue;
      const auto layer =
          static_cast<std::size_t>(p.gmap.buffers[static_cast<std::size_t>(op.buffer)].layer);
      in.step_seconds[static_cast<std::size_t>(op.step)] +=
          times.step_seconds[static_cast<std::size_t>(forwardStep[layer])];
    }
  }
  const std::size_t buffers = p.gmap.buffers.size();
  for (auto* v : {&in.offload_seconds, &in.prefetch_seconds, &in.offload_beside_seconds,
                  &in.prefetch_beside_seconds})
    v->resize(buffers);
  // Only the buffers the GMAP moves: the simulator reads no other's copy time.
  for (const GmapOp& op : p.gmap.ops) {
    if ((op.kind != GmapOpKind::Offload && op.kind != GmapOpKind::Prefetch) || op.buffer < 0)
      continue;
    const auto b = static_cast<std::size_t>(op.buffer);
    const std::int64_t bytes = p.gmap.buffers[b].size.at(times.k);
    in.offload_seconds[b] = ctx.model.transfer(bytes, true);
    in.prefetch_seconds[b] = ctx.model.transfer(bytes, false);
    in.offload_beside_seconds[b] = ctx.model.transfer(bytes, true, true);
    in.prefetch_beside_seconds[b] = ctx.model.transfer(bytes, false, true);
  }
  in.duplex_factor = ctx.model.duplexFactor();
  in.dispatch_seconds = ctx.model.dispatch().seconds;
  in.dispatch_woken_seconds = ctx.model.dispatch().woken_seconds;
  in.update_tasks = ctx.updateTasks;
  in.start_block = ctx.model.contention().start_block.slope;
  in.copy_start_block = ctx.model.contention().copy_start_block.slope;
  in.copy_start_wait = ctx.model.contention().copy_start_block.intercept;
  in.slowdown = ctx.model.contention().slowdown.slope;
  in.prefetch_issue = schedule.move_to;
  in.reuse_delay = delay;
  return in;
}

std::optional<Evaluation> evaluatePrepared(const Context& ctx, const Prepared& p,
                                           const StepTimes& times, BudgetWindow& window,
                                           int reuseDelay) {
  const std::int64_t peak = p.curve.peak(times.k);
  if (!window.fits(peak)) return std::nullopt;
  Evaluation e;
  e.k = times.k;
  e.swapped = p.set;
  if (p.recomputes) e.recomputed = p.gmap.recomputed;
  e.peak = peak;
  const auto schedule = ctx.scheduleAt(p, times.k);
  e.reuse_delay = chooseDelay(reuseDelay, *schedule, window);
  const SimInput in = simInput(ctx, p, times, *schedule, e.reuse_delay);
  e.sim = simulate(in);
  const int n = p.gmap.forward_steps;
  for (const GmapOp& op : p.gmap.ops) {
    if (op.kind == GmapOpKind::Offload) {
      e.offload_bytes += p.gmap.buffers[static_cast<std::size_t>(op.buffer)].size.at(e.k);
    } else if (op.kind == GmapOpKind::Prefetch && op.step > n) {
      e.prefetch_bytes += p.gmap.buffers[static_cast<std::size_t>(op.buffer)].size.at(e.k);
    }
  }
  for (int v : in.prefetch_issue)
    e.prefetches_moved += v > 0;
  e.extrapolated = times.extrapolated;
  e.transferred = times.transferred;
  e.missing = times.missing;
  return e;
}

std::optional<ExecutorDecision> executorSchedule(
    const Context& ctx, const Prepared& p, std::int64_t budget, const Evaluation& e,
    const std::function<bool(int delay, bool moved)>& matters) {
  const auto schedule = ctx.scheduleAt(p, e.k);
  const std::vector<int> none;
  // As the executor places: buffers never below fp32's alignment or the pool's padding.
  const PoolPadding padding = ctx.model.poolPadding();
  const std::int64_t minAlign = std::max<std::int64_t>(kFloatBytes, padding.buffer);
  const AheadOfTime ahead = placeAhead(
      p.pool(), e.prefetches_moved > 0 ? schedule->move_to : none, e.k, budget, e.reuse_delay,
      {ctx.model.poolAlignment(), minAlign}, padding.workspace, &schedule->placements, matters);
  if (ahead.undecided) return std::nullopt;
  // The planner places its own GMAP padded as the profiled pool pads, at that pool's alignment
  // and then fp32's (or the padding's): the executor's inputs on the CPU. It holds the kernel
  // workspaces the CUDA backend adds to the pool (per convolution, under --conv-algo) where the
  // profile recorded them (a line per layer over the profiled k values, at or above each);
  // where it did not, the decisions can differ, and `run` warns where they do.
  if (ahead.placed) return ExecutorDecision{true, ahead.placed->delay, ahead.placed->moved};
  if (ahead.run_time_moved) return ExecutorDecision{true, 0, *ahead.run_time_moved};
  return ExecutorDecision{false, 0, false};
}

bool placeAsTheExecutor(const Context& ctx, const Prepared& p, std::int64_t budget, Evaluation& e) {
  const ExecutorDecision runs = *executorSchedule(ctx, p, budget, e);
  if (!runs.runs) return false;
  if (runs.delay == e.reuse_delay && runs.moved == (e.prefetches_moved > 0)) return true;
  const auto schedule = ctx.scheduleAt(p, e.k);
  Context::Schedule placed;
  if (runs.moved) placed.move_to = schedule->move_to;
  e.sim = simulate(simInput(ctx, p, *ctx.timesAt(e.k), placed, runs.delay));
  e.reuse_delay = runs.delay;
  if (!runs.moved) e.prefetches_moved = 0;
  return true;
}

namespace {
std::shared_ptr<const Prepared> preparedOf(const Context& ctx, const Evaluation& e) {
  return ctx.prepared(e.swapped, e.recomputed);
}
}  // namespace

std::vector<ScheduleTime> scheduleTimes(const Context& ctx, const Evaluation& e, int* simulations) {
  std::vector<ScheduleTime> out{{e.reuse_delay, e.prefetches_moved > 0, e.sim.t_iter}};
  const auto p = preparedOf(ctx, e);
  const auto schedule = ctx.scheduleAt(*p, e.k);
  const auto times = ctx.timesAt(e.k);
  for (const int delay : {e.reuse_delay, 0}) {
    for (const bool moved : {e.prefetches_moved > 0, false}) {
      const bool seen = std::any_of(out.begin(), out.end(), [&](const ScheduleTime& s) {
        return s.delay == delay && s.moved == moved;
      });
      if (seen) continue;
      Context::Schedule placed;
      if (moved) placed.move_to = schedule->move_to;
      out.push_back({delay, moved, simulate(simInput(ctx, *p, *times, placed, delay)).t_iter});
      if (simulations) ++*simulations;
    }
  }
  return out;
}

std::optional<double> placedTime(const Context& ctx, const Evaluation& e,
                                 const std::vector<ScheduleTime>& schedules, std::int64_t budget,
                                 double limit, bool knownOnly) {
  if (schedules.empty()) return e.sim.t_iter;
  const auto timeOf = [&](int delay, bool moved) {
    for (const ScheduleTime& s : schedules) {
      if (s.delay == delay && s.moved == moved) return s.t_iter;
    }
    throw Error(ErrorKind::Runtime, "placedTime: the executor's schedule was not simulated");
  };
  // Where every schedule takes the same time, the decision changes only whether the plan runs.
  // No outcome matters to a caller that asks for what is known: placeAhead then stops before
  // it would place.
  const bool same = std::all_of(schedules.begin(), schedules.end(), [&](const ScheduleTime& s) {
    return s.t_iter == schedules.front().t_iter;
  });
  if (same && schedules.front().t_iter > limit) return std::nullopt;
  const auto runs = executorSchedule(
      ctx, *preparedOf(ctx, e), budget, e,
      [&](int delay, bool moved) { return !knownOnly && timeOf(delay, moved) <= limit; });
  if (!runs) return std::nullopt;
  if (!runs->runs) return std::numeric_limits<double>::infinity();
  return timeOf(runs->delay, runs->moved);
}

}  // namespace swapscope::perf::planning
