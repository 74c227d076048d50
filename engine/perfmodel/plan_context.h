// SPDX-License-Identifier: MIT
/// @brief The planner's shared state and the pieces its searches are made of: a swap set's GMAP
/// and curve (Prepared), the budgets a computation cannot tell apart (BudgetWindow), the caches
/// one network's plans share (Context), and one evaluation of a set at k. Internal to
/// engine/perfmodel: the searches live in accudnn_search.cpp, ito_search.cpp, argmin_search.cpp
/// and paper_search.cpp; planner.cpp dispatches to them.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/placement.h"
#include "common/error.h"
#include "perfmodel/bounded_cache.h"
#include "perfmodel/planner.h"

namespace swapscope::perf::planning {

/// A swap set's GMAP and memory curve (with the FMs a fixed policy recomputes, if any).
struct Prepared {
  SwapSet set;
  Gmap gmap;  ///< the bytes copies move
  /// The GMAP with the sizes the profiled device's pool holds (analysis/gmap.h's padGmap); empty
  /// where its pool pads nothing (then `gmap`'s).
  std::optional<Gmap> padded;
  MemoryCurve curve;  ///< of pool()
  bool recomputes = false;
  /// The GMAP whose sizes the pool holds: what peaks, placements and k_max count.
  const Gmap& pool() const { return padded ? *padded : gmap; }
};

Prepared prepare(const Network& net, const std::vector<LayerCost>& costs, const SwapSet& set,
                 const RecomputeSet& recomputed = {}, const PoolPadding& padding = {});

/// Every fixed policy's plan (analysis/policy.h), in table order.
std::vector<std::pair<Policy, Prepared>> prepareFixed(const Network& net,
                                                      const std::vector<LayerCost>& costs,
                                                      const PoolPadding& padding);

struct StepTimes;

/// The budgets that a computation for `budget` compares the same way: [lo, hi]. Where every test
/// of the budget a computation makes goes through fits(), its result for `budget` is its result
/// for every budget of the window, so the planner keeps a k's plan across budgets (a drag of the
/// app's budget, a sweep) and reuses it wherever the window holds the new budget.
struct BudgetWindow {
  explicit BudgetWindow(std::int64_t b) : budget(b) {}
  std::int64_t budget;
  std::int64_t lo = std::numeric_limits<std::int64_t>::min();
  std::int64_t hi = std::numeric_limits<std::int64_t>::max();
  /// bytes <= budget, narrowing the window to the budgets for which the answer is the same.
  bool fits(std::int64_t bytes) {
    if (bytes <= budget) {
      lo = std::max(lo, bytes);
      return true;
    }
    hi = std::min(hi, bytes - 1);
    return false;
  }
  bool holds(std::int64_t b) const { return lo <= b && b <= hi; }
};

/// One schedule the swap executor can run a plan with, and the plan's iteration time under it.
struct ScheduleTime {
  int delay = 0;       ///< the reuse delay (analysis/reuse_delay.h)
  bool moved = false;  ///< whether the moved prefetches open at their new step
  double t_iter = 0;
};

/// What every plan of one network shares; owned by Planner::Impl, never moved (the bound
/// model points into `costs`).
struct Context {
  Context(const PerfModel& m, const Network& n)
      : model(m),
        net(n),
        costs(computeLayerCosts(net)),
        bound(m.bind(net, costs)),
        fixedPlans(prepareFixed(net, costs, m.poolPadding())),
        swapAll(fixedPlan(Policy::SwapAll)),
        keepAll(fixedPlan(Policy::KeepAll)) {
    for (const auto& c : costs) {
      paramBytes += c.params * kFloatBytes;
      updateTasks += c.params > 0 ? 1 : 0;  // the executor's SGD task per layer with weights
    }
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  const PerfModel& model;
  const Network net;
  const std::vector<LayerCost> costs;
  const BoundModel bound;
  /// Every fixed policy's plan (analysis/policy.h), in table order.
  const std::vector<std::pair<Policy, Prepared>> fixedPlans;
  const Prepared &swapAll, &keepAll;
  std::int64_t paramBytes = 0;
  int updateTasks = 0;

  const Prepared& fixedPlan(Policy policy) const {
    for (const auto& [p, prepared] : fixedPlans) {
      if (p == policy) return prepared;
    }
    throw Error(ErrorKind::Runtime,
                "policy " + std::string(policyName(policy)) + " has no fixed swap set");
  }

  /// Compute times at k (the same for every swap set), kept like prepared plans: the k search of
  /// each budget meets many of the k values of the budgets before it.
  std::shared_ptr<const StepTimes> timesAt(std::int64_t k) const;

  /// What the executor's schedule of a set at k needs, none of it depending on the budget: the
  /// prefetches moved earlier (analysis/prefetch_schedule.h) and the pool high-water mark under
  /// each non-zero reuse delay (analysis/reuse_delay.h). Kept like step times: an evaluation
  /// then costs the budget comparison only, where it recomputed all of it every time.
  struct Schedule {
    std::vector<int> move_to;
    std::vector<std::pair<int, std::int64_t>> delayed_peaks;  ///< analysis/reuse_delay.h
    /// The placements the plans of this set at this k needed (placeAsTheExecutor).
    mutable PlacementMemo placements;
  };
  std::shared_ptr<const Schedule> scheduleAt(const Prepared& p, std::int64_t k) const;

  /// accudnn's phase 1 at one k (accudnn_search.cpp), round by round: each round's comparisons
  /// of bytes with the budget and the FM it pinned. Phase 1 at another budget makes the same
  /// rounds as long as those comparisons come out the same there (the pins, and with them every
  /// simulation, depend on the budget through them alone), so it replays them without
  /// simulating and goes on from the first round where one differs. The traces of the last few
  /// budgets are kept, and a budget replays the one that holds for the most rounds: the app's
  /// budget jumps back and forth, and the trace of the budget before is often not the nearest.
  struct PinTrace {
    struct Round {
      std::vector<std::pair<std::int64_t, bool>> compared;  ///< bytes, and whether they fitted
      int pin = -1;         ///< the FM pinned; -1: none, phase 1 ended
      int simulations = 0;  ///< what the round took
    };
    std::vector<Round> rounds;
  };
  /// The traces kept for phase 1 at k under reuse delay `delay` (the one its simulations ran
  /// with), the latest first.
  struct PinTraces {
    static constexpr std::size_t kKept = 8;
    std::vector<std::shared_ptr<const PinTrace>> latest;
  };
  /// Null where none are kept.
  std::shared_ptr<const PinTraces> pinTraces(std::int64_t k, int delay) const {
    return pinTraceCache.get({k, delay});
  }
  /// Keeps `trace` first, and up to kKept - 1 of those kept before.
  void keepPinTrace(std::int64_t k, int delay, PinTrace trace) const {
    auto kept = std::make_shared<PinTraces>();
    kept->latest.push_back(std::make_shared<const PinTrace>(std::move(trace)));
    if (const auto before = pinTraceCache.get({k, delay})) {
      for (const auto& t : before->latest) {
        if (kept->latest.size() == PinTraces::kKept) break;
        kept->latest.push_back(t);
      }
    }
    pinTraceCache.put({k, delay}, std::move(kept));
  }

  /// accudnn's plan at one k, at one of the stages the search makes it in: phase 1 (the k
  /// search), phase 2 on a phase-1 plan (the chosen k), or both (a fixed k).
  enum class Stage : std::uint8_t { Phase1, FromPhase1, Whole };
  struct KPlan {
    std::shared_ptr<const Evaluation> plan;  ///< null: swap-all does not fit at k
    BudgetWindow window{0};                  ///< the budgets it is the plan for
    int simulations = 0;                     ///< what making it took
    /// The plan's iteration time under each schedule the executor's placement decision can run
    /// it with (scheduleTimes); empty where the request fixes the reuse delay (no decision).
    std::vector<ScheduleTime> schedules;
  };
  /// A plan made before at (k, requested reuse delay, stage) whose window holds `budget`.
  std::optional<KPlan> keptPlan(std::int64_t k, int delay, Stage stage, std::int64_t budget) const;
  void keepPlan(std::int64_t k, int delay, Stage stage, const KPlan& plan) const;

  /// The prepared plan of a swap set and a recompute set (empty or all false: none): a fixed
  /// policy's as it is, else the one built for the same sets before (by any call, on any
  /// thread), else built now and kept. The GMAP and memory curve of the sets do not depend on k
  /// or the budget, and the k search meets the same pinned sets again and again (across k, and
  /// across budgets while the app's budget is dragged), as ito's stage 2 meets the same
  /// recompute sets on every plan at its k, so building each once is most of the planner's
  /// speed. Null where buildGmap refuses the recompute set (an FM it cannot re-make, BadInput);
  /// the refusal is kept too.
  std::shared_ptr<const Prepared> prepared(const SwapSet& set,
                                           const RecomputeSet& recomputed = {}) const {
    const bool remakes = std::find(recomputed.begin(), recomputed.end(), true) != recomputed.end();
    for (const auto& [policy, p] : fixedPlans) {
      if (p.set == set && p.recomputes == remakes && (!remakes || p.gmap.recomputed == recomputed))
        return {std::shared_ptr<const Prepared>(), &p};  // not owned
    }
    const PreparedKey key{set, remakes ? recomputed : RecomputeSet{}};
    return preparedCache.getOrMake(key, [&]() -> std::shared_ptr<const Prepared> {
      ++gmapsBuilt;
      try {
        return std::make_shared<const Prepared>(
            prepare(net, costs, set, key.recomputed, model.poolPadding()));
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::BadInput || !remakes) throw;
        return nullptr;  // the refusal is kept
      }
    });
  }

  /// GMAPs (with their memory curves) built since construction, the fixed policies' aside.
  mutable std::atomic<std::uint64_t> gmapsBuilt{0};
  /// Rounds of accudnn's phase 1 replayed from a kept PinTrace instead of simulated.
  mutable std::atomic<std::uint64_t> pinRoundsReplayed{0};

 private:
  struct PreparedKey {
    SwapSet set;
    RecomputeSet recomputed;  ///< empty: none
    bool operator==(const PreparedKey&) const = default;
  };
  struct PreparedKeyHash {
    std::size_t operator()(const PreparedKey& key) const {
      const std::size_t h = std::hash<SwapSet>()(key.set);
      return key.recomputed.empty() ? h
                                    : h ^ (std::hash<RecomputeSet>()(key.recomputed) +
                                           0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
    }
  };
  /// Enough for every set of a k search and of the budgets around the current one; a Prepared
  /// of ResNet-152 takes a few hundred KiB. Null: the recompute set is refused.
  BoundedCache<PreparedKey, Prepared, PreparedKeyHash> preparedCache{64};
  /// 2N + 1 doubles each: 8 KiB for ResNet-152.
  BoundedCache<std::int64_t, StepTimes> timesCache{1024};
  /// A recomputing plan's GMAP differs from the plain one of the same swap set, and from that
  /// of another recompute set with it (ito tries many).
  struct ScheduleKey {
    SwapSet set;
    std::int64_t k = 0;
    RecomputeSet recomputed;  ///< empty: none
    bool operator==(const ScheduleKey&) const = default;
  };
  struct ScheduleKeyHash {
    std::size_t operator()(const ScheduleKey& key) const {
      const std::size_t h = std::hash<SwapSet>()(key.set) ^
                            (std::hash<RecomputeSet>()(key.recomputed) * 0x100000001b3ULL);
      return h ^ (std::hash<std::int64_t>()(key.k * 2 + !key.recomputed.empty()) +
                  0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
    }
  };
  /// A few KiB each (a move-to entry per buffer).
  BoundedCache<ScheduleKey, Schedule, ScheduleKeyHash> scheduleCache{4096};
  struct TraceKeyHash {
    std::size_t operator()(const std::pair<std::int64_t, int>& key) const {
      return std::hash<std::int64_t>()(key.first * 64 + key.second);
    }
  };
  /// Every k of a search and of the searches around it, up to 8 traces each, a few KiB a trace:
  /// 1.8 MiB in all after 200 budgets of ResNet-152 in the app's order (at most 138 KiB a key).
  BoundedCache<std::pair<std::int64_t, int>, PinTraces, TraceKeyHash> pinTraceCache{1024};
  /// Plans of ResNet-152 take about 100 KiB each (the simulation's per-step times): 256 hold
  /// every k of a search and its neighbours at the budgets around the current one.
  static constexpr std::size_t kPlanEntries = 256;
  struct PlanKey {
    std::int64_t k = 0;
    int delay = 0;
    Stage stage = Stage::Phase1;
    bool operator==(const PlanKey&) const = default;
  };
  struct PlanKeyHash {
    std::size_t operator()(const PlanKey& key) const {
      return std::hash<std::int64_t>()(key.k * 64 + (key.delay + 8) * 4 +
                                       static_cast<int>(key.stage));
    }
  };
  struct KeptPlan {
    KPlan plan;
    std::uint64_t last_use = 0;
  };
  mutable std::mutex planMutex;
  mutable std::unordered_map<PlanKey, std::vector<KeptPlan>, PlanKeyHash> plans;
  mutable std::size_t planCount = 0;
  mutable std::uint64_t planTick = 0;
};

/// Compute times at one k. They do not depend on the swap set (step j is the same layer in
/// every GMAP of a network), so one k's times serve every set tried at that k.
struct StepTimes {
  std::int64_t k = 0;
  std::vector<double> step_seconds;
  double update_seconds = 0;
  bool extrapolated = false, transferred = false;
  int missing = 0;
};

StepTimes stepTimes(const Context& ctx, const Gmap& g, std::int64_t k);

/// Predicted times equal up to rounding: `t` is no worse than `reference`.
inline bool noWorse(double t, double reference) {
  return t <= reference * (1 + 1e-9) + 1e-12;
}

/// The reuse delay the executor will run with (analysis/reuse_delay.h's rule on the set's cached
/// peaks), unless the request fixes one. The peaks the rule compared narrow `window`.
int chooseDelay(int requested, const Context::Schedule& schedule, BudgetWindow& window);

/// The simulator's inputs for set `p` at the k of `times`, with `schedule`'s moved prefetches.
SimInput simInput(const Context& ctx, const Prepared& p, const StepTimes& times,
                  const Context::Schedule& schedule, int delay);

/// `p` at the k of `times`, simulated; none where its peak exceeds the window's budget.
std::optional<Evaluation> evaluatePrepared(const Context& ctx, const Prepared& p,
                                           const StepTimes& times, BudgetWindow& window,
                                           int reuseDelay);

/// The swap executor's placement decision for a plan: the schedule it runs, or that it does not.
struct ExecutorDecision {
  bool runs = true;  ///< false: nothing packs ahead, and neither run-time placement fits
  int delay = 0;
  bool moved = false;
};

/// The swap executor's placement decision (analysis/placement.h's placeAhead) for `e` at
/// `budget`: its own schedule (e.reuse_delay, its moved prefetches) where that packs, else the
/// first of the fallbacks that does (no moves, delay 0), else delay 0 placed at run time where
/// that fits, else that it does not run. With `matters`, none where no outcome still possible is
/// one it asks for (placeAhead).
std::optional<ExecutorDecision> executorSchedule(
    const Context& ctx, const Prepared& p, std::int64_t budget, const Evaluation& e,
    const std::function<bool(int delay, bool moved)>& matters = {});

/// `e` simulated again on the schedule the swap executor's placement decision runs; false (and
/// `e` unchanged) where the plan does not run.
bool placeAsTheExecutor(const Context& ctx, const Prepared& p, std::int64_t budget, Evaluation& e);

/// `e`'s iteration time under every schedule executorSchedule can choose for it: its own, and
/// those without the moves and with delay 0 where they differ from it (one simulation each, added
/// to `*simulations`). The least and the most bound the time of the schedule that will run; the
/// one the decision picks is its exact time.
std::vector<ScheduleTime> scheduleTimes(const Context& ctx, const Evaluation& e, int* simulations);

/// The time of `e` under the schedule the executor picks at `budget`, from `schedules`
/// (scheduleTimes of `e`); e's own where `schedules` is empty (a fixed reuse delay: no
/// decision). Infinity where the plan does not run. None where it is above `limit`: the decision
/// stops placing once every outcome still possible would be. With `knownOnly`, nothing is placed:
/// none where the decision needs a placement that its memo cannot answer.
std::optional<double> placedTime(const Context& ctx, const Evaluation& e,
                                 const std::vector<ScheduleTime>& schedules, std::int64_t budget,
                                 double limit = std::numeric_limits<double>::infinity(),
                                 bool knownOnly = false);

// accudnn_search.cpp

/// accudnn at k, phase 1 (remove stall) and, with `keepWhatFits`, phase 2 (keep what fits).
std::optional<Evaluation> accudnnPrepared(const Context& ctx, const Prepared& swapAll,
                                          const StepTimes& times, BudgetWindow& window,
                                          int reuseDelay, int* evaluated, bool keepWhatFits,
                                          const Evaluation* phase1Plan = nullptr);

/// accudnn at k at one stage, kept across budgets by its window.
Context::KPlan accudnnKept(const Context& ctx, const StepTimes& times, std::int64_t budget,
                           int reuseDelay, Context::Stage stage, const Context::KPlan* phase1,
                           bool* reused);

/// `phase2` where the schedule the executor places for it at `budget` is no slower than the one
/// it places for `phase1` (phase 2 fills the budget, where the pool may no longer pack the
/// schedule phase 1 was valued on), else `phase1`.
Context::KPlan noSlowerPlaced(const Context& ctx, std::int64_t budget, const Context::KPlan& phase1,
                              const Context::KPlan& phase2);

// ito_search.cpp

/// ito's stage 2 on its stage-1 plan: which swapped FMs to recompute instead.
Evaluation itoStage2(const Context& ctx, Evaluation stage1, std::int64_t budget, int reuseDelay,
                     int* evaluated);

// argmin_search.cpp

/// One k's plan under the request's policy (a fixed set's, or accudnn's at `stage`); its
/// simulations are added to `*evaluated`, and `*reused` counts it when it was kept from an
/// earlier plan.
Context::KPlan kPlanAt(const Context& ctx, const PlanRequest& req, const Prepared* fixed,
                       const StepTimes& times, Context::Stage stage, const Context::KPlan* phase1,
                       int* evaluated, int* reused);

/// k values to try up to kMax: all of them when few, else one geometric grid below kMax, and kMax.
std::vector<std::int64_t> grid(std::int64_t kMax);

/// The argmin search over k in 1..top: the plan of least objective, or none.
std::optional<Evaluation> argminSearch(const Context& ctx, const PlanRequest& req,
                                       const Prepared* fixed, std::int64_t top, PlanResult& out);

// paper_search.cpp

/// Algorithm 2 (AccUDNN §4): the largest k in 1..top that meets constraint (6) after pinning.
/// Where none does, sets `out.infeasible` and `out.reason` and returns none.
std::optional<Evaluation> paperSearch(const Context& ctx, const PlanRequest& req,
                                      const Prepared* fixed, std::int64_t top, PlanResult& out);

}  // namespace swapscope::perf::planning
