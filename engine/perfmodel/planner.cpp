// SPDX-License-Identifier: MIT
#include "perfmodel/planner.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "analysis/placement.h"
#include "analysis/prefetch_schedule.h"
#include "analysis/reuse_delay.h"
#include "common/batch_limit.h"
#include "common/bytes.h"
#include "common/error.h"
#include "common/format.h"
#include "perfmodel/paper.h"

namespace swapscope::perf {

std::string_view planModeName(PlanMode m) {
  return m == PlanMode::Argmin ? "argmin" : "paper";
}

double scaledLearningRate(double lr_base, std::int64_t k_base, double c, std::int64_t k) {
  const double q = static_cast<double>(k) / static_cast<double>(std::max<std::int64_t>(1, k_base));
  if (c <= 0) return lr_base * q;
  if (lr_base * c >= 1) {
    throwBadInput("eq. 9 needs lr_base * c < 1, got " + std::to_string(lr_base * c));
  }
  return (1.0 - std::pow(1.0 - lr_base * c, q)) / c;
}

double allReduceSeconds(std::int64_t param_bytes, int gpus, double bandwidth, double latency) {
  if (gpus <= 1) return 0;
  if (bandwidth <= 0) throwBadInput("--link-bandwidth must be above zero with --gpus > 1");
  return 2.0 * (gpus - 1) / gpus * static_cast<double>(param_bytes) / bandwidth + latency;
}

namespace {

/// A swap set's GMAP and memory curve (with the FMs a fixed policy recomputes, if any).
struct Prepared {
  SwapSet set;
  Gmap gmap;
  MemoryCurve curve;
  bool recomputes = false;
};

Prepared prepare(const Network& net, const std::vector<LayerCost>& costs, const SwapSet& set,
                 const RecomputeSet& recomputed = {}) {
  const RecomputeSet none(set.size(), false);
  const RecomputeSet& r = recomputed.empty() ? none : recomputed;
  Prepared p{set, buildGmap(net, costs, set, r), {}, r != none};
  p.curve = computeMemoryCurve(p.gmap);
  return p;
}

struct StepTimes;

std::vector<std::pair<Policy, Prepared>> prepareFixed(const Network& net,
                                                      const std::vector<LayerCost>& costs) {
  std::vector<std::pair<Policy, Prepared>> plans;
  for (const PolicyInfo& info : policyTable()) {
    if (info.fixed()) {
      plans.emplace_back(info.id, prepare(net, costs, makeSwapSet(info.id, net, costs),
                                          makeRecomputeSet(info.id, net, costs)));
    }
  }
  return plans;
}

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

/// What every plan of one network shares; owned by Planner::Impl, never moved (the bound
/// model points into `costs`).
struct Context {
  Context(const PerfModel& m, const Network& n)
      : model(m),
        net(n),
        costs(computeLayerCosts(net)),
        bound(m.bind(net, costs)),
        fixedPlans(prepareFixed(net, costs)),
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

  /// accudnn's plan at one k, at one of the stages the search makes it in: phase 1 (the k
  /// search), phase 2 on a phase-1 plan (the chosen k), or both (a fixed k).
  enum class Stage : std::uint8_t { Phase1, FromPhase1, Whole };
  struct KPlan {
    std::shared_ptr<const Evaluation> plan;  ///< null: swap-all does not fit at k
    BudgetWindow window{0};                  ///< the budgets it is the plan for
    int simulations = 0;                     ///< what making it took
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
    PreparedKey key{set, remakes ? recomputed : RecomputeSet{}};
    {
      const std::lock_guard<std::mutex> lock(cacheMutex);
      if (auto it = cache.find(key); it != cache.end()) {
        it->second.last_use = ++cacheTick;
        return it->second.prepared;
      }
    }
    std::shared_ptr<const Prepared> built;  // built unlocked
    ++gmapsBuilt;
    try {
      built = std::make_shared<const Prepared>(prepare(net, costs, set, key.recomputed));
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::BadInput || !remakes) throw;
    }
    const std::lock_guard<std::mutex> lock(cacheMutex);
    auto [it, inserted] = cache.try_emplace(std::move(key), CacheEntry{built, ++cacheTick});
    if (!inserted) return it->second.prepared;  // another thread built it meanwhile
    if (cache.size() > kCacheEntries) {
      auto oldest = cache.begin();
      for (auto i = cache.begin(); i != cache.end(); ++i) {
        if (i->second.last_use < oldest->second.last_use) oldest = i;
      }
      cache.erase(oldest);
    }
    return built;
  }

  /// GMAPs (with their memory curves) built since construction, the fixed policies' aside.
  mutable std::atomic<std::uint64_t> gmapsBuilt{0};

 private:
  /// Enough for every set of a k search and of the budgets around the current one; a Prepared
  /// of ResNet-152 takes a few hundred KiB.
  static constexpr std::size_t kCacheEntries = 64;
  struct CacheEntry {
    std::shared_ptr<const Prepared> prepared;  ///< null: the recompute set is refused
    std::uint64_t last_use = 0;
  };
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
  mutable std::mutex cacheMutex;
  mutable std::unordered_map<PreparedKey, CacheEntry, PreparedKeyHash> cache;
  mutable std::uint64_t cacheTick = 0;
  /// 2N + 1 doubles each: 8 KiB for ResNet-152.
  static constexpr std::size_t kTimesEntries = 1024;
  mutable std::mutex timesMutex;
  mutable std::unordered_map<std::int64_t, std::shared_ptr<const StepTimes>> times;
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
  static constexpr std::size_t kScheduleEntries = 4096;
  mutable std::mutex scheduleMutex;
  mutable std::unordered_map<ScheduleKey, std::shared_ptr<const Schedule>, ScheduleKeyHash>
      schedules;
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

/// The reuse delay the executor will run with (analysis/reuse_delay.h's rule on the set's cached
/// peaks), unless the request fixes one. The peaks the rule compared narrow `window`.
int chooseDelay(int requested, const Context::Schedule& schedule, BudgetWindow& window) {
  if (requested >= 0) return requested;
  const int delay = firstFittingDelay(schedule.delayed_peaks, window.budget);
  for (const auto& [d, peak] : schedule.delayed_peaks) {
    window.fits(peak);  // the rule's comparisons, in its order, up to the delay it chose
    if (d == delay) break;
  }
  return delay;
}

/// Compute times at one k. They do not depend on the swap set (step j is the same layer in
/// every GMAP of a network), so one k's times serve every set tried at that k.
struct StepTimes {
  std::int64_t k = 0;
  std::vector<double> step_seconds;
  double update_seconds = 0;
  bool extrapolated = false, transferred = false;
  int missing = 0;
};

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
  {
    const std::lock_guard<std::mutex> lock(timesMutex);
    if (auto it = times.find(k); it != times.end()) return it->second;
  }
  auto t = std::make_shared<const StepTimes>(stepTimes(*this, swapAll.gmap, k));  // unlocked
  const std::lock_guard<std::mutex> lock(timesMutex);
  if (times.size() >= kTimesEntries) times.clear();  // a new network scale: start again
  return times.try_emplace(k, std::move(t)).first->second;
}

std::shared_ptr<const Context::Schedule> Context::scheduleAt(const Prepared& p,
                                                             std::int64_t k) const {
  ScheduleKey key{p.set, k, p.recomputes ? p.gmap.recomputed : RecomputeSet{}};
  {
    const std::lock_guard<std::mutex> lock(scheduleMutex);
    if (auto it = schedules.find(key); it != schedules.end()) return it->second;
  }
  auto s = std::make_shared<Schedule>();  // built unlocked
  s->move_to = hoistPrefetches(p.gmap, p.curve, k, p.curve.peak(k)).move_to;
  s->delayed_peaks =
      delayedPeaks(p.gmap, executionOrder(p.gmap, s->move_to), k, model.poolAlignment());
  const std::lock_guard<std::mutex> lock(scheduleMutex);
  if (schedules.size() >= kScheduleEntries) schedules.clear();
  return schedules.try_emplace(std::move(key), std::move(s)).first->second;
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
    e.hoisted += v > 0;
  e.extrapolated = times.extrapolated;
  e.transferred = times.transferred;
  e.missing = times.missing;
  return e;
}

/// The schedule the swap executor will run `e` with: its placement decision
/// (analysis/placement.h's placeAhead, at the model's pool alignment and then fp32's). Where the
/// pool does not pack the simulated schedule (the moved prefetches, the reuse delay), `e` is
/// simulated again with the one that packs, so that the prediction models the schedule that runs.
void placeAsTheExecutor(const Context& ctx, const Prepared& p, std::int64_t budget, Evaluation& e) {
  const auto schedule = ctx.scheduleAt(p, e.k);
  const std::vector<int> none;
  const AheadOfTime ahead =
      placeAhead(p.gmap, e.hoisted > 0 ? schedule->move_to : none, e.k, budget, e.reuse_delay,
                 {ctx.model.poolAlignment(), kFloatBytes}, 0, &schedule->placements);
  // Where nothing packs ahead, the executor places at run time with delay 0 (moves kept if a
  // dry run fits them, which the planner does not replay: the plan is then returned, and the
  // executor may still refuse it, naming the shortfall). The planner places its own GMAP, at the
  // model's pool alignment and fp32's, without workspaces: the executor's inputs on the CPU;
  // on CUDA, whose pool pads buffers and holds kernel workspaces, the decisions can differ, and
  // `run` warns where they do.
  const int delay = ahead.placed ? ahead.placed->delay : 0;
  const bool hoisted = ahead.placed ? ahead.placed->hoisted : e.hoisted > 0;
  if (delay == e.reuse_delay && hoisted == (e.hoisted > 0)) return;
  Context::Schedule placed;
  if (hoisted) placed.move_to = schedule->move_to;
  e.sim = simulate(simInput(ctx, p, *ctx.timesAt(e.k), placed, delay));
  e.reuse_delay = delay;
  if (!hoisted) e.hoisted = 0;
}

}  // namespace

namespace {

/// Resident bytes per step under pins: range add and range maximum in O(log steps). A segment
/// tree over a power-of-two number of leaves (the ones past the steps hold a value below any
/// step's), so that it is built bottom-up in one pass.
class StepMax {
 public:
  explicit StepMax(const std::vector<std::int64_t>& v)
      : m_n(static_cast<int>(v.size())), m_size(1) {
    while (m_size < m_n)
      m_size *= 2;
    const auto size = static_cast<std::size_t>(m_size);
    m_max.assign(2 * size, kNone);
    m_add.assign(2 * size, 0);
    std::copy(v.begin(), v.end(), m_max.begin() + static_cast<std::ptrdiff_t>(size));
    for (std::size_t node = size; node-- > 1;)
      m_max[node] = std::max(m_max[2 * node], m_max[2 * node + 1]);
  }
  /// Adds d to the steps [lo, hi).
  void add(int lo, int hi, std::int64_t d) {
    lo = std::max(0, lo);
    hi = std::min(m_n, hi);
    if (lo < hi) add(1, 0, m_size, lo, hi, d);
  }
  /// The maximum over [lo, hi); nullopt when empty.
  std::optional<std::int64_t> max(int lo, int hi) const {
    lo = std::max(0, lo);
    hi = std::min(m_n, hi);
    if (lo >= hi) return std::nullopt;
    return query(1, 0, m_size, lo, hi);
  }

 private:
  /// Below any step's bytes, and far enough from the limit that the adds cannot overflow it.
  static constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::min() / 4;
  void add(std::size_t node, int l, int r, int a, int b, std::int64_t d) {
    if (b <= l || r <= a) return;
    if (a <= l && r <= b) {
      m_max[node] += d;
      m_add[node] += d;
      return;
    }
    const int m = l + (r - l) / 2;
    add(2 * node, l, m, a, b, d);
    add(2 * node + 1, m, r, a, b, d);
    m_max[node] = std::max(m_max[2 * node], m_max[2 * node + 1]) + m_add[node];
  }
  /// Requires [a, b) to intersect [l, r).
  std::int64_t query(std::size_t node, int l, int r, int a, int b) const {
    if (a <= l && r <= b) return m_max[node];
    const int m = l + (r - l) / 2;
    std::optional<std::int64_t> best;
    if (a < m) best = query(2 * node, l, m, a, b);
    if (b > m) {
      const std::int64_t right = query(2 * node + 1, m, r, a, b);
      best = best ? std::max(*best, right) : right;
    }
    return *best + m_add[node];
  }
  int m_n, m_size;
  std::vector<std::int64_t> m_max, m_add;
};

/// Predicted times equal up to rounding: `t` is no worse than `reference`.
bool noWorse(double t, double reference) {
  return t <= reference * (1 + 1e-9) + 1e-12;
}

/// accudnn at k from a prepared swap-all plan, in two phases:
/// 1. while the simulation stalls, pin the FM prefetched for a stalled step that removes the most
///    stall per byte (digest G15);
/// 2. then keep pinning, largest FM first, every FM whose bytes fit the budget between its
///    forward release and its backward prefetch, as long as the predicted time does not grow:
///    of the plans with the same predicted time, the one that moves the fewest bytes. A budget
///    that holds keep-all at k ends with nothing swapped.
/// Pins change the simulator's inputs in place (no transfer for a pinned FM) and the resident
/// bytes between its forward release and backward prefetch; the final set is then evaluated
/// exactly, and phase 2's pins are given back where the exact plan would be slower (a kept FM
/// takes headroom that prefetches would have been moved into). Phase 2 never makes the plan
/// slower than phase 1's, so the argmin search runs phase 1 only and phase 2 at the k it picks.
std::optional<Evaluation> accudnnPrepared(const Context& ctx, const Prepared& swapAll,
                                          const StepTimes& times, BudgetWindow& window,
                                          int reuseDelay, int* evaluated, bool keepWhatFits,
                                          const Evaluation* phase1Plan = nullptr) {
  const PerfModel& model = ctx.model;
  const Network& net = ctx.net;
  const std::int64_t k = times.k;
  const std::int64_t peak = swapAll.curve.peak(k);
  if (!window.fits(peak)) return std::nullopt;
  const Gmap& g = swapAll.gmap;
  const int n = g.forward_steps;
  const auto placement = ctx.scheduleAt(swapAll, k);
  const int delay = chooseDelay(reuseDelay, *placement, window);
  SimInput in = simInput(ctx, swapAll, times, *placement, delay);
  const SimSchedule schedule(in);  // pins change durations only
  SimResult sim = simulate(schedule, in);
  int count = 1;

  // Per swapped FM buffer: forward release step, backward prefetch step (0 when it is offloaded
  // but never leaves the device), size. The minibatch is one too: it is loaded at step 1 whatever
  // the set, so only phase 2 keeps it (its backward prefetch is then dropped).
  struct Fm {
    int buffer, layer, release = 0, prefetch = 0;
    std::int64_t bytes;
    bool minibatch = false;
  };
  std::vector<Fm> fms;
  std::vector<int> fmOfBuffer(g.buffers.size(), -1);
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    const GmapBuffer& buf = g.buffers[b];
    if (buf.kind != BufferKind::FeatureMap || buf.layer < 0 ||
        !swapAll.set[static_cast<std::size_t>(buf.layer)]) {
      continue;
    }
    fmOfBuffer[b] = static_cast<int>(fms.size());
    fms.push_back(
        {static_cast<int>(b), buf.layer, 0, 0, buf.size.at(k), buf.layer == net.inputLayer()});
  }
  std::vector<std::vector<int>> readsAt(static_cast<std::size_t>(2 * n + 2));
  for (const GmapOp& op : g.ops) {
    const int f = op.buffer >= 0 ? fmOfBuffer[static_cast<std::size_t>(op.buffer)] : -1;
    if (f < 0) continue;
    Fm& fm = fms[static_cast<std::size_t>(f)];
    if (op.kind == GmapOpKind::Release && op.step <= n) fm.release = op.step;
    if (op.kind == GmapOpKind::Prefetch && op.step > n) {
      fm.prefetch = op.step;
      if (!fm.minibatch) readsAt[static_cast<std::size_t>(op.step)].push_back(f);
    }
  }
  std::vector<std::int64_t> residentAt(static_cast<std::size_t>(2 * n + 2), 0);
  for (int s = 1; s <= 2 * n; ++s)
    residentAt[static_cast<std::size_t>(s)] =
        swapAll.curve.resident[static_cast<std::size_t>(s)].at(k);
  StepMax resident(residentAt);
  // An FM kept on the device occupies its bytes from after its release to before its prefetch.
  auto fits = [&](const Fm& f) {
    if (f.prefetch == 0) return !f.minibatch;  // never leaves: keeping it costs nothing
    const auto m = resident.max(f.release + 1, f.prefetch);
    return !m || window.fits(*m + f.bytes);
  };
  // A pinned FM moves nothing: its copies take no time, beside compute or not.
  auto setPinned = [&](SimInput& x, const Fm& f, bool pinned) {
    if (f.minibatch) return;  // its buffer's time is also the step-1 load
    const auto b = static_cast<std::size_t>(f.buffer);
    x.offload_seconds[b] = pinned ? 0.0 : model.transfer(f.bytes, true);
    x.prefetch_seconds[b] = pinned ? 0.0 : model.transfer(f.bytes, false);
    x.offload_beside_seconds[b] = pinned ? 0.0 : model.transfer(f.bytes, true, true);
    x.prefetch_beside_seconds[b] = pinned ? 0.0 : model.transfer(f.bytes, false, true);
  };

  std::vector<bool> pinned(fms.size(), false);
  std::vector<int> order;
  auto pin = [&](int f) {
    const Fm& fm = fms[static_cast<std::size_t>(f)];
    pinned[static_cast<std::size_t>(f)] = true;
    order.push_back(f);
    setPinned(in, fm, true);
    if (fm.prefetch > 0) resident.add(fm.release + 1, fm.prefetch, fm.bytes);
  };
  auto unpinLast = [&] {
    const int f = order.back();
    const Fm& fm = fms[static_cast<std::size_t>(f)];
    pinned[static_cast<std::size_t>(f)] = false;
    order.pop_back();
    setPinned(in, fm, false);
    if (fm.prefetch > 0) resident.add(fm.release + 1, fm.prefetch, -fm.bytes);
  };

  // Phase 1: remove stall, or take the pins of a phase-1 plan made before at this k.
  SimResult trial, bestSim;  // reused: trials allocate nothing once warm
  constexpr double kEps = 1e-9;
  if (phase1Plan) {
    for (std::size_t f = 0; f < fms.size(); ++f) {
      if (!phase1Plan->swapped[static_cast<std::size_t>(fms[f].layer)]) pin(static_cast<int>(f));
    }
    simulate(schedule, in, sim);
    ++count;
  }
  // A pin must remove more than kMinPinGain of the iteration: the model cannot tell smaller
  // differences apart (a run's t_iter varies by several per cent), and on ResNet-152 a greedy
  // of such pins took 25,000 simulations per plan for 0.25 % of predicted time per sample.
  constexpr double kMinPinGain = 1e-5;
  const double minGain = std::max(kEps, kMinPinGain * sim.t_iter);
  while (!phase1Plan && sim.removableStall() > minGain) {
    // Candidates: FMs prefetched for the stalled steps, the earliest stalls first.
    std::vector<int> candidates;
    for (std::size_t j = 2; j < sim.steps.size() && candidates.size() < 8; ++j) {
      if (sim.steps[j].stall <= kEps) continue;
      for (const int f : readsAt[j]) {
        if (!pinned[static_cast<std::size_t>(f)]) candidates.push_back(f);
      }
      // A prefetch stalls the steps after it too: the swap-in queue ahead of it matters.
      for (std::size_t q = j + 1; q < std::min(sim.steps.size(), j + 3); ++q) {
        for (const int f : readsAt[q]) {
          if (!pinned[static_cast<std::size_t>(f)]) candidates.push_back(f);
        }
      }
    }
    const double before = sim.removableStall();
    int best = -1;
    double bestScore = 0;
    std::set<int> tried;
    for (const int f : candidates) {
      if (!tried.insert(f).second) continue;
      const Fm& fm = fms[static_cast<std::size_t>(f)];
      if (fm.prefetch == 0 || !fits(fm)) continue;
      // No pin removes more than all the stall: skip a candidate that could at best tie.
      if (before / static_cast<double>(std::max<std::int64_t>(1, fm.bytes)) <= bestScore) continue;
      setPinned(in, fm, true);
      // The steps before the pin's first transfer are the current plan's; and once the stall
      // exceeds what could still beat the best pin (with a margin far above rounding), the
      // candidate cannot win.
      const double needed =
          std::max(minGain, bestScore * static_cast<double>(std::max<std::int64_t>(1, fm.bytes)));
      const double limit = before - needed + 1e-12 + 1e-9 * before;
      const bool complete = simulateFrom(
          schedule, in, sim, static_cast<std::size_t>(schedule.firstTransferStep(fm.buffer)), limit,
          trial);
      ++count;
      setPinned(in, fm, false);
      if (!complete) continue;
      const double gain = before - trial.removableStall();
      const double score = gain / static_cast<double>(std::max<std::int64_t>(1, fm.bytes));
      if (gain > minGain && score > bestScore) {
        bestScore = score;
        best = f;
        std::swap(bestSim, trial);
      }
    }
    if (best < 0) break;
    pin(best);
    std::swap(sim, bestSim);
  }

  // Phase 2: keep what fits, largest first (ties: the earlier buffer), while the predicted time
  // stays. Where the budget holds keep-all at k, that is every FM. Usually one simulation checks
  // them all; one at a time only if that one is slower.
  const std::size_t phase1 = order.size();
  const double phase1Time = sim.t_iter;
  std::vector<int> rest;
  for (std::size_t f = 0; f < fms.size(); ++f) {
    if (!pinned[f]) rest.push_back(static_cast<int>(f));
  }
  std::sort(rest.begin(), rest.end(), [&](int x, int y) {
    const Fm& a = fms[static_cast<std::size_t>(x)];
    const Fm& b = fms[static_cast<std::size_t>(y)];
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.buffer < b.buffer;
  });
  for (const int f : rest) {
    if (keepWhatFits && fits(fms[static_cast<std::size_t>(f)])) pin(f);
  }
  if (order.size() > phase1) {
    simulate(schedule, in, trial);
    ++count;
    if (!noWorse(trial.t_iter, phase1Time)) {
      while (order.size() > phase1)
        unpinLast();
      for (const int f : rest) {
        if (!fits(fms[static_cast<std::size_t>(f)])) continue;
        pin(f);
        simulate(schedule, in, trial);
        ++count;
        if (!noWorse(trial.t_iter, phase1Time)) unpinLast();
      }
    }
  }

  // The exact plan of the first `pins` pins.
  auto exact = [&](std::size_t pins) {
    SwapSet set = swapAll.set;
    for (std::size_t i = 0; i < pins; ++i)
      set[static_cast<std::size_t>(fms[static_cast<std::size_t>(order[i])].layer)] = false;
    ++count;
    return evaluatePrepared(ctx, *ctx.prepared(set), times, window, reuseDelay);
  };
  // Pins are dropped, last first, if the exact peak is over.
  std::size_t pins = order.size();
  std::optional<Evaluation> e = exact(pins);
  while (!e && pins > 0)
    e = exact(--pins);
  // Phase 2 must not cost time in the exact plan either (a higher peak can shorten the reuse
  // delay, for one): if it does, the most phase-2 pins that do not, by bisection.
  if (e && pins > phase1) {
    std::optional<Evaluation> base = phase1Plan ? *phase1Plan : exact(phase1);
    if (base && !noWorse(e->sim.t_iter, base->sim.t_iter)) {
      const double reference = base->sim.t_iter;
      std::size_t lo = phase1, hi = pins;
      while (hi - lo > 1) {
        const std::size_t mid = lo + (hi - lo) / 2;
        auto m = exact(mid);
        if (m && noWorse(m->sim.t_iter, reference)) {
          lo = mid;
          base = std::move(m);
        } else {
          hi = mid;
        }
      }
      e = std::move(base);
    }
  }
  if (evaluated) *evaluated += count;
  return e;
}

/// accudnn at k at one stage (phase 1 alone, phase 2 on `phase1`, or both), taken from the plans
/// kept by earlier calls where one's budget window holds `budget` (`*reused` is then set), else
/// made now and kept. The result is the same either way: a plan's window is the set of budgets
/// for which its making compares the same way.
Context::KPlan accudnnKept(const Context& ctx, const StepTimes& times, std::int64_t budget,
                           int reuseDelay, Context::Stage stage, const Context::KPlan* phase1,
                           bool* reused) {
  if (auto kept = ctx.keptPlan(times.k, reuseDelay, stage, budget)) {
    *reused = true;
    return *kept;
  }
  // Phase 2 starts from the phase-1 plan, which holds for its window only.
  BudgetWindow window(budget);
  if (phase1) {
    window.lo = phase1->window.lo;
    window.hi = phase1->window.hi;
  }
  Context::KPlan made;
  auto e = accudnnPrepared(ctx, ctx.swapAll, times, window, reuseDelay, &made.simulations,
                           stage != Context::Stage::Phase1, phase1 ? phase1->plan.get() : nullptr);
  if (e) made.plan = std::make_shared<const Evaluation>(std::move(*e));
  made.window = window;
  ctx.keepPlan(times.k, reuseDelay, stage, made);
  return made;
}

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

/// The argmin objective for an iteration time at k: whole-training time with a dataset size,
/// else time per sample.
double objective(std::int64_t k, double tIter, const PlanRequest& r, double delta) {
  if (r.dataset_size > 0) return wholeTrainingSeconds(k, tIter, delta, r);
  return (tIter + delta) / static_cast<double>(k);
}

/// k values to try up to kMax: all of them when few, else the points of one geometric grid
/// (ratio 2^(1/3)) below kMax, and kMax. The grid does not depend on kMax, so the searches of two
/// budgets share their k values below the smaller kMax, and the k plans kept from one budget
/// serve the other.
std::vector<std::int64_t> grid(std::int64_t kMax) {
  std::vector<std::int64_t> ks;
  if (kMax <= 48) {
    for (std::int64_t k = 1; k <= kMax; ++k)
      ks.push_back(k);
    return ks;
  }
  const double ratio = std::cbrt(2.0);
  for (double v = 1;; v *= ratio) {
    const std::int64_t k = std::llround(v);
    if (k >= kMax) break;
    if (ks.empty() || k > ks.back()) ks.push_back(k);
  }
  ks.push_back(kMax);
  return ks;
}

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

}  // namespace

struct Planner::Impl {
  Impl(const PerfModel& model, const Network& net) : ctx(model, net) {}
  Context ctx;
};

Planner::Planner(const PerfModel& model, const Network& net)
    : m_impl(std::make_unique<const Impl>(model, net)) {}
Planner::~Planner() = default;
Planner::Planner(Planner&&) noexcept = default;
Planner& Planner::operator=(Planner&&) noexcept = default;

std::uint64_t Planner::gmapsBuilt() const {
  return m_impl->ctx.gmapsBuilt.load();
}

std::int64_t Planner::minBudget() const {
  return m_impl->ctx.swapAll.curve.peak(1);
}

const std::vector<LayerCost>& Planner::costs() const {
  return m_impl->ctx.costs;
}

std::optional<Evaluation> Planner::evaluate(std::int64_t k, const SwapSet& swapped,
                                            std::int64_t budget, int reuse_delay) const {
  const Context& ctx = m_impl->ctx;
  const auto p = ctx.prepared(swapped);
  BudgetWindow window(budget);
  std::optional<Evaluation> e = evaluatePrepared(ctx, *p, *ctx.timesAt(k), window, reuse_delay);
  if (e && reuse_delay < 0) placeAsTheExecutor(ctx, *p, budget, *e);
  return e;
}

std::optional<Evaluation> Planner::accudnnAt(std::int64_t k, std::int64_t budget, int reuse_delay,
                                             int* evaluated, bool keep_what_fits) const {
  const Context& ctx = m_impl->ctx;
  bool reused = false;
  const Context::KPlan p = accudnnKept(
      ctx, *ctx.timesAt(k), budget, reuse_delay,
      keep_what_fits ? Context::Stage::Whole : Context::Stage::Phase1, nullptr, &reused);
  if (evaluated) *evaluated += p.simulations;
  if (!p.plan) return std::nullopt;
  return *p.plan;
}

PlanResult plan(const PerfModel& model, const Network& net, const PlanRequest& req) {
  return Planner(model, net).plan(req);
}

PlanResult Planner::plan(const PlanRequest& req) const {
  const Context& ctx = m_impl->ctx;
  const Prepared& swapAll = ctx.swapAll;
  PlanResult out;
  out.min_budget = swapAll.curve.peak(1);
  out.delta = allReduceSeconds(ctx.paramBytes, req.gpus, req.link_bandwidth, req.link_latency);

  const Prepared* fixed = policyInfo(req.policy).fixed() ? &ctx.fixedPlan(req.policy) : nullptr;
  if (req.policy == Policy::Ito && req.mode == PlanMode::Paper && !req.batch) {
    throwBadInput(
        "--policy ito has no paper mode: Algorithm 2 (AccUDNN §4) checks constraint (6) "
        "on a timeline without recompute steps, so it cannot weigh recompute against "
        "swap; use --mode argmin or a fixed --batch");
  }
  const MemoryCurve& limitCurve = fixed ? fixed->curve : swapAll.curve;
  // No k above the limit of every verb (common/batch_limit.h): a plan the run would refuse.
  out.k_max = std::min(limitCurve.kMax(req.budget, kMaxBatch), kMaxBatch);
  if (out.k_max < 1) {
    const std::int64_t need = limitCurve.peak(1);
    out.reason = "untrainable: " + std::string(policyName(req.policy)) + " needs " +
                 formatBytes(need) + " (" + std::to_string(need) +
                 " bytes) at k = 1, the budget is " + formatBytes(req.budget) +
                 "; the minimum for any policy is swap-all's " + formatBytes(out.min_budget);
    return out;
  }
  if (req.batch && *req.batch > out.k_max) {
    try {
      out.batch_need = limitCurve.peak(*req.batch);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::BadInput) throw;
      out.batch_need = PlanResult::kNeedOverflows;
    }
    out.reason = "k = " + std::to_string(*req.batch) +
                 " does not fit: " + std::string(policyName(req.policy)) +
                 " fits at most k = " + std::to_string(out.k_max) + " in " +
                 formatBytes(req.budget);
    return out;
  }
  const std::int64_t top = req.max_batch > 0 ? std::min(out.k_max, req.max_batch) : out.k_max;

  // One k's plan; its simulations are added to `*evaluated`, and `*reused` counts it when it
  // was kept from an earlier plan (a k evaluated on another thread counts into its own).
  using Stage = Context::Stage;
  auto atCounted = [&](const StepTimes& times, Stage stage, const Context::KPlan* phase1,
                       int* evaluated, int* reused) -> Context::KPlan {
    if (fixed) {
      ++*evaluated;
      BudgetWindow window(req.budget);
      auto e = evaluatePrepared(ctx, *fixed, times, window, req.reuse_delay);
      return {e ? std::make_shared<const Evaluation>(std::move(*e)) : nullptr, window, 1};
    }
    bool wasKept = false;
    Context::KPlan p =
        accudnnKept(ctx, times, req.budget, req.reuse_delay, stage, phase1, &wasKept);
    *evaluated += p.simulations;
    *reused += wasKept;
    return p;
  };
  auto at = [&](const StepTimes& times, Stage stage,
                const Context::KPlan* phase1 = nullptr) -> Context::KPlan {
    return atCounted(times, stage, phase1, &out.evaluated, &out.reused);
  };
  const std::size_t lanes = req.threads > 0
                                ? static_cast<std::size_t>(req.threads)
                                : std::max<std::size_t>(1, std::thread::hardware_concurrency());

  std::optional<Evaluation> best;
  // ito: stage 1 is accudnn's plan at k, stage 2 recomputes on it (at the chosen k only: it is
  // never slower than stage 1, as accudnn's phase 2 is never slower than phase 1).
  auto itoAt = [&](std::optional<Evaluation>& e) {
    if (e && req.policy == Policy::Ito)
      e = itoStage2(ctx, std::move(*e), req.budget, req.reuse_delay, &out.evaluated);
  };
  if (req.batch) {
    if (auto p = at(*ctx.timesAt(*req.batch), Stage::Whole); p.plan) best = *p.plan;
    itoAt(best);
  } else if (req.mode == PlanMode::Argmin) {
    // Branch and bound over k: no plan at k beats the minibatch's load followed by its compute
    // time (step 1 waits for the load whatever the swap set, the compute stream then runs every
    // step and the update, and stalls only add), so k values are simulated in order of that
    // bound and the search stops once the bound reaches the best simulated objective. Same
    // answer as simulating every k, in a fraction of the simulations.
    std::vector<std::size_t> loads;  // the buffers loaded before step 1: minibatch, labels
    for (const GmapOp& op : swapAll.gmap.ops) {
      if (op.kind == GmapOpKind::Prefetch && op.step == 1 && op.buffer >= 0) {
        loads.push_back(static_cast<std::size_t>(op.buffer));
      }
    }
    double bestObj = std::numeric_limits<double>::infinity();
    Context::KPlan bestPlan;
    auto search = [&](const std::vector<std::int64_t>& ks) {
      struct Candidate {
        double bound;
        std::shared_ptr<const StepTimes> times;
      };
      std::vector<Candidate> candidates;
      candidates.reserve(ks.size());
      for (const std::int64_t k : ks) {
        std::shared_ptr<const StepTimes> t = ctx.timesAt(k);
        double compute = t->update_seconds;
        for (const double v : t->step_seconds)
          compute += v;
        for (const std::size_t b : loads)
          compute += ctx.model.transfer(swapAll.gmap.buffers[b].size.at(k), false);
        candidates.push_back({objective(k, compute, req, out.delta), std::move(t)});
      }
      std::sort(candidates.begin(), candidates.end(), [](const Candidate& x, const Candidate& y) {
        return std::tie(x.bound, x.times->k) < std::tie(y.bound, y.times->k);
      });
      // `lanes` threads take the k values in bound order. A thread skips k (and so every later
      // one) when its bound exceeds the best objective of the k values before it that are done:
      // one thread would have stopped there too, since that best can only be lower once the rest
      // are done. The results are then taken in order as one thread would have made them, and
      // those it would not have simulated are dropped, counts included: the same plan, and the
      // same count, on any number of threads.
      const std::size_t n = candidates.size();
      std::vector<Context::KPlan> results(n);
      std::vector<int> counts(n, 0), reused(n, 0);
      std::vector<double> objs(n, std::numeric_limits<double>::infinity());
      const auto done = std::make_unique<std::atomic<bool>[]>(n);
      std::atomic<std::size_t> next{0};
      std::atomic<std::size_t> stopAt{n};  // the first index found past the bound
      const double entryBest = bestObj;
      auto work = [&] {
        for (;;) {
          const std::size_t i = next.fetch_add(1);
          // An index below the one that stopped is still evaluated: one thread reaches it.
          if (i >= n || i > stopAt.load()) return;
          double threshold = entryBest;
          for (std::size_t j = 0; j < i; ++j) {
            if (done[j].load(std::memory_order_acquire)) threshold = std::min(threshold, objs[j]);
          }
          if (candidates[i].bound > threshold) {
            std::size_t seen = stopAt.load();
            while (i < seen && !stopAt.compare_exchange_weak(seen, i)) {
            }
            return;
          }
          results[i] =
              atCounted(*candidates[i].times, Stage::Phase1, nullptr, &counts[i], &reused[i]);
          if (const auto& e = results[i].plan)
            objs[i] = objective(e->k, e->sim.t_iter, req, out.delta);
          done[i].store(true, std::memory_order_release);
        }
      };
      std::vector<std::future<void>> others;
      for (std::size_t t = 1; t < std::min(lanes, n); ++t)
        others.push_back(std::async(std::launch::async, work));
      work();
      for (auto& f : others)
        f.get();
      for (std::size_t i = 0; i < n; ++i) {
        if (candidates[i].bound > bestObj || !done[i].load()) break;  // one thread stops here
        out.evaluated += counts[i];
        out.reused += reused[i];
        const auto& e = results[i].plan;
        if (!e) continue;
        const double obj = objs[i];
        if (obj < bestObj || (obj == bestObj && bestPlan.plan && e->k < bestPlan.plan->k)) {
          bestObj = obj;
          bestPlan = std::move(results[i]);
        }
      }
    };
    const auto ks = grid(top);
    search(ks);
    if (bestPlan.plan && ks.size() > 1 && ks.back() > 48) {
      // Refine between the grid neighbours of the best k.
      const std::int64_t bestK = bestPlan.plan->k;
      const auto it = std::find(ks.begin(), ks.end(), bestK);
      const std::int64_t lo = it == ks.begin() ? 1 : *(it - 1) + 1;
      const std::int64_t hi = it + 1 == ks.end() ? top : *(it + 1) - 1;
      const std::int64_t stride = std::max<std::int64_t>(1, (hi - lo + 1) / 12);
      std::vector<std::int64_t> fine;
      for (std::int64_t k = lo; k <= hi; k += stride) {
        if (k != bestK) fine.push_back(k);
      }
      search(fine);
    }
    // At the chosen k, keep what fits (phase 2): no slower, fewer bytes moved.
    if (bestPlan.plan && !fixed) {
      auto p = at(*ctx.timesAt(bestPlan.plan->k), Stage::FromPhase1, &bestPlan);
      if (p.plan) bestPlan = std::move(p);
    }
    if (bestPlan.plan) best = *bestPlan.plan;
    itoAt(best);
  } else {
    // Algorithm 2: the largest k whose t_ready meets (6) after pinning. Fixed policies run
    // Algorithm 1 on their own GMAP without pinning. Every k uses the split of Algorithm 2: an
    // active area of M_peak(k) and a pinned area of the rest of the budget; where the budget
    // holds keep-all at k, every FM can stay (keep-all's exact peak fits), and the area is no
    // limit.
    const Prepared& base = fixed ? *fixed : swapAll;
    const Gmap& g = base.gmap;
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
    std::string failure;  // the last infeasible k: its first violation and the cause
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
        // Why: the first violating step, what made it late, and why no pin moves it.
        const int j = pr.violations.front();
        const auto js = static_cast<std::size_t>(j);
        auto stepName = [&](int s) {
          return "step " + std::to_string(s) + " (" +
                 ctx.net.layer(g.step_layer[static_cast<std::size_t>(s)]).name + ", " +
                 (g.isBackwardStep(s) ? "bwd" : "fwd") + ")";
        };
        std::string why = "at k = " + std::to_string(k) + ", " + stepName(j) + " is ready at " +
                          formatMilliseconds(pr.t_ready[js]) + " ms, after " + stepName(j - 1) +
                          " ends at " + formatMilliseconds(pr.finish[js - 1]) +
                          " ms on the stall-free timeline: ";
        if (pr.waited_for[js] > 0) {
          why += "its " + formatBytes(pin.allocate[js]) + " do not fit the active area of " +
                 formatBytes(peak) + " (M_peak(k)) until " + stepName(pr.waited_for[js]) +
                 " releases memory";
        } else {
          why +=
              "the swap-in stream reaches it at " + formatMilliseconds(pr.t_ready[js - 1]) + " ms";
        }
        if (pin.prefetch[js] > 0) {
          why += ", and its prefetches take " + formatMilliseconds(pin.prefetch[js]) + " ms";
        }
        std::string blocked;
        for (const int b : prefetchedAt[js]) {
          const GmapBuffer& buf = g.buffers[static_cast<std::size_t>(b)];
          if (buf.layer >= 0 && !set[static_cast<std::size_t>(buf.layer)]) continue;  // pinned
          blocked += (blocked.empty() ? "" : "; ") + buf.name + " needs " + formatBytes(bytesOf(b));
        }
        if (fixed) {
          why += "; " + std::string(policyName(req.policy)) + " pins nothing";
        } else if (!blocked.empty()) {
          why += "; no pin fits the pinned area (budget - M_peak(k)), " +
                 formatBytes(std::max<std::int64_t>(0, area)) + " left: " + blocked;
        } else if (pin.prefetch[js] <= 0) {
          why += "; it prefetches nothing, so no pin can move it";
        }
        failure = why;
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
      auto e = evaluatePrepared(ctx, fixed ? *fixed : *ctx.prepared(set), times, window,
                                req.reuse_delay);
      if (e) timelines[k] = {std::move(pr), fixed ? 0 : req.budget - peak};
      return e;
    };
    best = largestFeasibleK(top, req.paper_scan_all, paperAt);
    if (best) {
      auto& [timeline, area] = timelines.at(best->k);
      out.paper = std::move(timeline);
      out.pinned_area = area;
    } else {
      out.infeasible = true;
      out.reason = "Algorithm 2 found no feasible k: " +
                   (top == 1 ? std::string("k = 1, the only k that fits,") +
                                   " does not satisfy constraint (6) in "
                             : "no k from " + std::to_string(top) +
                                   " down to 1 satisfies constraint (6) in ") +
                   formatBytes(req.budget) + "; " + failure;
      return out;
    }
  }
  if (!best) {
    out.reason = "no k up to " + std::to_string(top) + " fits";
    return out;
  }
  out.trainable = true;
  out.best = std::move(*best);
  const auto final = fixed
                         ? std::shared_ptr<const Prepared>(std::shared_ptr<const Prepared>(), fixed)
                         : ctx.prepared(out.best.swapped, out.best.recomputed);
  if (req.reuse_delay < 0) placeAsTheExecutor(ctx, *final, req.budget, out.best);
  out.gmap = final->gmap;
  out.curve = final->curve;
  out.t_whole = wholeTrainingSeconds(out.best.k, out.best.sim.t_iter, out.delta, req);
  out.lr = scaledLearningRate(req.lr_base, req.k_base, req.lr_c, out.best.k);
  return out;
}

double wholeTrainingSeconds(std::int64_t k, double t_iter, double delta,
                            const PlanRequest& request) {
  if (request.dataset_size <= 0) return 0;
  return std::ceil(request.epochs * static_cast<double>(request.dataset_size) /
                   static_cast<double>(k)) *
         (t_iter + delta);
}

store::PlanFile toPlanFile(const PlanResult& r, const PlanRequest& req, const PerfModel& model,
                           const Network& net, const std::string& backend,
                           const std::string& sourceDb) {
  if (!r.trainable) throw Error(ErrorKind::Runtime, "toPlanFile: the plan is not trainable");
  const Evaluation& e = r.best;
  store::PlanFile p;
  p.network_name = net.name();
  p.structure_hash = net.structureHash();
  p.device_name = model.device();
  p.backend = backend;
  p.source_db = sourceDb;
  p.policy = std::string(policyName(req.policy));
  p.mode = req.batch ? "fixed" : std::string(planModeName(req.mode));
  p.budget = req.budget;
  p.k = e.k;
  p.learning_rate = r.lr;
  p.reuse_delay = e.reuse_delay;
  p.prefetches_moved = e.hoisted;
  const Gmap& g = r.gmap;
  const std::vector<SwapSteps> steps = swapSteps(g);
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    if (steps[b].prefetch > 0) {
      p.swap_set.push_back({g.buffers[b].name, steps[b].release, steps[b].prefetch});
    }
  }
  // Recomputed FMs: released after their last forward reader, re-made at their first Recompute
  // (the inputs a re-make re-runs and releases again are not in the recompute set).
  const std::vector<RecomputeSteps> remakes = recomputeSteps(g);
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    if (remakes[b].recompute > 0)
      p.recompute.push_back({g.buffers[b].name, remakes[b].release, remakes[b].recompute});
  }
  store::PlanPredictions& pr = p.predictions;
  pr.t_iter_s = e.sim.t_iter;
  pr.throughput = e.sim.throughput;
  pr.peak_bytes = e.peak;
  pr.stall_s = e.sim.idle();  // what a run measures: the compute stream's idle time
  pr.t_whole_s = r.t_whole;
  pr.delta_s = r.delta;
  pr.extrapolated = e.extrapolated;
  pr.transferred = e.transferred;
  for (std::size_t j = 1; j < e.sim.steps.size(); ++j) {
    const double idle = e.sim.steps[j].stalledIdle();
    if (idle <= 0) continue;
    const int layer = g.step_layer[j];
    pr.stalls.push_back({static_cast<int>(j), net.layer(layer).name,
                         g.isBackwardStep(static_cast<int>(j)) ? "bwd" : "fwd", idle});
  }
  pr.start_s.reserve(e.sim.steps.size());
  for (std::size_t j = 1; j < e.sim.steps.size(); ++j)
    pr.start_s.push_back(e.sim.steps[j].start);
  return p;
}

}  // namespace swapscope::perf
