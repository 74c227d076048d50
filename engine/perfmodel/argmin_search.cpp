// SPDX-License-Identifier: MIT
// The argmin search (AccUDNN §4 without constraint (6)): every k's plan valued by the objective,
// branch and bound over a geometric grid of k, then a finer pass around the best.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <future>
#include <map>
#include <thread>
#include <tuple>

#include "perfmodel/plan_context.h"

namespace swapscope::perf::planning {

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

Context::KPlan kPlanAt(const Context& ctx, const PlanRequest& req, const Prepared* fixed,
                       const StepTimes& times, Context::Stage stage, const Context::KPlan* phase1,
                       int* evaluated, int* reused) {
  if (fixed) {
    BudgetWindow window(req.budget);
    auto e = evaluatePrepared(ctx, *fixed, times, window, req.reuse_delay);
    Context::KPlan p{
        e ? std::make_shared<const Evaluation>(std::move(*e)) : nullptr, window, 1, {}};
    if (p.plan && req.reuse_delay < 0) p.schedules = scheduleTimes(ctx, *p.plan, &p.simulations);
    *evaluated += p.simulations;
    return p;
  }
  bool wasKept = false;
  Context::KPlan p = accudnnKept(ctx, times, req.budget, req.reuse_delay, stage, phase1, &wasKept);
  *evaluated += p.simulations;
  *reused += wasKept;
  return p;
}

namespace {

/// The argmin search's state: the plans simulated so far and the best bound seen.
class ArgminSearch {
 public:
  ArgminSearch(const Context& ctx, const PlanRequest& req, const Prepared* fixed, PlanResult& out)
      : m_ctx(ctx),
        m_req(req),
        m_fixed(fixed),
        m_out(out),
        m_lanes(m_req.threads > 0 ? static_cast<std::size_t>(m_req.threads)
                                  : std::max<std::size_t>(1, std::thread::hardware_concurrency())) {
    // Branch and bound over k: no plan at k beats the minibatch's load followed by its compute
    // time (step 1 waits for the load whatever the swap set, the compute stream then runs every
    // step and the update's tasks, each after its plain hand-off, and stalls only add), so k
    // values are simulated in order of that bound and the search stops once the bound reaches
    // the best simulated objective. Same answer as simulating every k, in a fraction of the
    // simulations.
    m_dispatch = std::max(0.0, ctx.model.dispatch().seconds);
    for (const GmapOp& op : ctx.swapAll.gmap.ops) {
      if (op.kind == GmapOpKind::Prefetch && op.step == 1 && op.buffer >= 0) {
        m_loads.push_back(static_cast<std::size_t>(op.buffer));
      }
    }
  }

  std::optional<Evaluation> run(std::int64_t top);

 private:
  using Stage = Context::Stage;
  // Every plan the search compares is valued on the schedule the executor will run it with
  // (its placement decision, executorSchedule), not only the plan returned; a plan whose buffers
  // pack neither ahead of time nor at run time does not run, and is never chosen. A plan's times
  // under the schedules the decision can choose (KPlan::schedules) bound its value where it
  // runs: the bound search over k prunes with the most (no k is pruned that could beat the placed
  // best; where the plan that pruned it does not run, it is simulated after all, settle()), and
  // the plans are then placed in order of the least, until the next one's least cannot beat the
  // best placed value. Most plans are placed only to learn that they run: where the least of the
  // rest is above the best, the decision cannot change the answer.
  struct Candidate {
    Context::KPlan plan;
    double least = 0, most = 0;  ///< the objective under the fastest and slowest schedule
    std::optional<double> placed;
  };

  /// One k's plan at `stage`; a k evaluated on another thread counts into its own `evaluated`
  /// and `reused`.
  Context::KPlan at(const StepTimes& times, Stage stage, const Context::KPlan* phase1,
                    int* evaluated, int* reused) const {
    return kPlanAt(m_ctx, m_req, m_fixed, times, stage, phase1, evaluated, reused);
  }
  Context::KPlan at(const StepTimes& times, Stage stage, const Context::KPlan* phase1 = nullptr) {
    return at(times, stage, phase1, &m_out.evaluated, &m_out.reused);
  }
  double objectiveOf(const Evaluation& e, double tIter) const {
    return objective(e.k, tIter, m_req, m_out.delta);
  }
  Candidate candidateOf(Context::KPlan plan) const {
    Candidate c{std::move(plan), 0, 0, std::nullopt};
    double lo = c.plan.plan->sim.t_iter, hi = lo;
    for (const ScheduleTime& s : c.plan.schedules) {
      lo = std::min(lo, s.t_iter);
      hi = std::max(hi, s.t_iter);
    }
    c.least = objectiveOf(*c.plan.plan, lo);
    c.most = objectiveOf(*c.plan.plan, hi);
    if (c.plan.schedules.empty()) c.placed = c.least;
    return c;
  }
  /// The placed objective where the placements made before answer it, without placing.
  std::optional<double> knownObjective(Candidate& c) const {
    if (c.placed) return c.placed;
    const auto t = placedTime(m_ctx, *c.plan.plan, c.plan.schedules, m_req.budget,
                              std::numeric_limits<double>::infinity(), true);
    if (t) c.placed = objectiveOf(*c.plan.plan, *t);
    return c.placed;
  }
  /// The placed objective, or none where it is known to be above `limit` (a time per sample or
  /// for the whole training): the decision then stops placing.
  std::optional<double> placedObjective(Candidate& c, double limit) const {
    if (c.placed) return c.placed;
    // The objective grows with t_iter: the limit on it as a limit on t_iter, the slowest
    // schedule whose objective is within it.
    double tLimit = std::numeric_limits<double>::infinity();
    if (std::isfinite(limit)) {
      for (const ScheduleTime& s : c.plan.schedules) {
        if (objectiveOf(*c.plan.plan, s.t_iter) <= limit)
          tLimit = std::isfinite(tLimit) ? std::max(tLimit, s.t_iter) : s.t_iter;
      }
      if (!std::isfinite(tLimit)) return std::nullopt;
    }
    const auto t = placedTime(m_ctx, *c.plan.plan, c.plan.schedules, m_req.budget, tLimit);
    if (!t) return std::nullopt;
    c.placed = objectiveOf(*c.plan.plan, *t);
    return c.placed;
  }
  void pause() const {
    if (m_req.pause_point) m_req.pause_point();
  }
  /// The least objective any plan at one k can reach (from its compute time and the minibatch's
  /// load), with that k's step times.
  struct Bound {
    double bound;
    std::shared_ptr<const StepTimes> times;
  };
  /// The k values of `ks` with their bounds, least bound first (ties: the smaller k).
  std::vector<Bound> inBoundOrder(const std::vector<std::int64_t>& ks) const;
  /// Simulates the k values of `ks` in bound order, adding their plans to the pool; those the
  /// bound prunes join `m_pruned`.
  void search(const std::vector<std::int64_t>& ks);
  /// best(), with the k values pruned by a plan that turned out not to run simulated too.
  Candidate* settle();
  bool keepsAll(const Candidate& c) const { return c.plan.plan->swapped == m_ctx.keepAll.set; }
  /// The plan of least placed objective (ties: the smaller k), placing plans in order of their
  /// least objective until the next one's cannot beat it. Only the plans `keepsAll` names where
  /// it is given.
  Candidate* best(std::optional<bool> keepingAll = std::nullopt);
  /// At the chosen k, keep what fits (phase 2): no slower, fewer bytes moved. Phase 2 keeps FMs
  /// up to the budget, where the pool may no longer pack the schedule phase 1 was valued on: the
  /// phase-2 plan is taken only where its placed time is no worse than phase 1's.
  Context::KPlan withPhase2(const Context::KPlan& phase1) {
    if (m_fixed) return phase1;
    return noSlowerPlaced(m_ctx, m_req.budget, phase1,
                          at(*m_ctx.timesAt(phase1.plan->k), Stage::FromPhase1, &phase1));
  }

  const Context& m_ctx;
  const PlanRequest& m_req;
  const Prepared* m_fixed;
  PlanResult& m_out;
  const std::size_t m_lanes;
  std::vector<std::size_t> m_loads;  // the buffers loaded before step 1: minibatch, labels
  double m_dispatch = 0;             // the compute stream's plain hand-off before each task
  std::vector<Candidate> m_pool;     // every plan simulated, in the order one thread takes them
  double m_bestMost = std::numeric_limits<double>::infinity();
  /// The k values search() pruned, with their bounds: none can beat the least `most` of the
  /// plans simulated before them, where that plan runs.
  std::vector<std::pair<double, std::int64_t>> m_pruned;
  /// Those of them another thread made before the bound pruned them, with its counts.
  struct Spare {
    Context::KPlan plan;
    int simulations = 0, reused = 0;
  };
  std::map<std::int64_t, Spare> m_spare;
};

std::vector<ArgminSearch::Bound> ArgminSearch::inBoundOrder(
    const std::vector<std::int64_t>& ks) const {
  std::vector<Bound> candidates;
  candidates.reserve(ks.size());
  for (const std::int64_t k : ks) {
    std::shared_ptr<const StepTimes> t = m_ctx.timesAt(k);
    double compute = t->update_seconds;
    for (const double v : t->step_seconds)
      compute += v;
    for (const std::size_t b : m_loads)
      compute += m_ctx.model.transfer(m_ctx.swapAll.gmap.buffers[b].size.at(k), false);
    // Every step and every task of the update starts after its hand-off.
    compute += m_dispatch * static_cast<double>(t->step_seconds.size() - 1 + m_ctx.updateTasks);
    // Summed in another order than the simulator's: kept below it by far more than rounding.
    compute *= 1 - 1e-12;
    candidates.push_back({objective(k, compute, m_req, m_out.delta), std::move(t)});
  }
  std::sort(candidates.begin(), candidates.end(), [](const Bound& x, const Bound& y) {
    return std::tie(x.bound, x.times->k) < std::tie(y.bound, y.times->k);
  });
  return candidates;
}

void ArgminSearch::search(const std::vector<std::int64_t>& ks) {
  const std::vector<Bound> candidates = inBoundOrder(ks);
  // `m_lanes` threads take the k values in bound order. A thread skips k (and so every later
  // one) when its bound exceeds the least `most` of the k values before it that are done:
  // one thread would have stopped there too, since that can only be lower once the rest are
  // done. The results are then taken in order as one thread would have made them, and those
  // it would not have simulated are dropped, counts included: the same plan, and the same
  // count, on any number of threads.
  const std::size_t n = candidates.size();
  std::vector<Context::KPlan> results(n);
  std::vector<int> counts(n, 0), reused(n, 0);
  std::vector<double> mosts(n, std::numeric_limits<double>::infinity());
  const auto done = std::make_unique<std::atomic<bool>[]>(n);
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> stopAt{n};  // the first index found past the bound
  const double entryBest = m_bestMost;
  auto work = [&] {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      // An index below the one that stopped is still evaluated: one thread reaches it.
      if (i >= n || i > stopAt.load()) return;
      double threshold = entryBest;
      for (std::size_t j = 0; j < i; ++j) {
        if (done[j].load(std::memory_order_acquire)) threshold = std::min(threshold, mosts[j]);
      }
      if (candidates[i].bound > threshold) {
        std::size_t seen = stopAt.load();
        while (i < seen && !stopAt.compare_exchange_weak(seen, i)) {
        }
        return;
      }
      pause();
      if (const auto spare = m_spare.find(candidates[i].times->k); spare != m_spare.end()) {
        results[i] = spare->second.plan;  // made by a thread before (read only here)
        counts[i] = spare->second.simulations;
        reused[i] = spare->second.reused;
      } else {
        results[i] = at(*candidates[i].times, Stage::Phase1, nullptr, &counts[i], &reused[i]);
      }
      if (results[i].plan) mosts[i] = candidateOf(results[i]).most;
      done[i].store(true, std::memory_order_release);
    }
  };
  std::vector<std::future<void>> others;
  for (std::size_t t = 1; t < std::min(m_lanes, n); ++t)
    others.push_back(std::async(std::launch::async, work));
  work();
  for (auto& f : others)
    f.get();
  for (std::size_t i = 0; i < n; ++i) {
    if (candidates[i].bound > m_bestMost || !done[i].load()) {  // one thread stops here
      for (std::size_t j = i; j < n; ++j) {
        const std::int64_t k = candidates[j].times->k;
        m_pruned.emplace_back(candidates[j].bound, k);
        // Made by another thread all the same: kept with its counts, so that settle() takes it
        // as one thread would make it (not as a plan reused from an earlier budget).
        if (done[j].load()) m_spare[k] = {std::move(results[j]), counts[j], reused[j]};
      }
      break;
    }
    m_out.evaluated += counts[i];
    m_out.reused += reused[i];
    if (!results[i].plan) continue;
    m_pool.push_back(candidateOf(std::move(results[i])));
    m_bestMost = std::min(m_bestMost, m_pool.back().most);
  }
}

ArgminSearch::Candidate* ArgminSearch::best(std::optional<bool> keepingAll) {
  std::vector<Candidate*> order;
  for (Candidate& c : m_pool) {
    if (!keepingAll || keepsAll(c) == *keepingAll) order.push_back(&c);
  }
  std::sort(order.begin(), order.end(), [](const Candidate* x, const Candidate* y) {
    return std::tie(x->least, x->plan.plan->k) < std::tie(y->least, y->plan.plan->k);
  });
  Candidate* chosen = nullptr;
  double chosenObj = std::numeric_limits<double>::infinity();
  // A plan that does not run (nothing packs, ahead or at run time) has no finite value: never
  // chosen.
  const auto consider = [&](Candidate* c, double obj) {
    if (!std::isfinite(obj)) return;
    if (obj < chosenObj || (obj == chosenObj && c->plan.plan->k < chosen->plan.plan->k)) {
      chosen = c;
      chosenObj = obj;
    }
  };
  const auto runs = [](const Candidate* c) { return !c->placed || std::isfinite(*c->placed); };
  // First the plans whose placed value is known without placing (the memo of earlier placements
  // answers): a best found there spares the placements of the plans it beats (most of a drag's,
  // whose new plans are those of new k values).
  for (Candidate* c : order) {
    if (c->least > chosenObj) break;
    if (const std::optional<double> known = knownObjective(*c)) consider(c, *known);
  }
  // No plan above the least `most` of those that may run can be the best: the plan it belongs
  // to runs within it, unless it turns out not to run. The best is then sought again under the
  // least `most` of the others (each round finds one more plan that does not run).
  for (;;) {
    double limit = std::numeric_limits<double>::infinity();
    int known = 0;
    for (const Candidate* c : order) {
      if (runs(c)) limit = std::min(limit, c->most);
      known += !runs(c);
    }
    for (Candidate* c : order) {
      if (c->least > chosenObj) break;
      pause();
      const std::optional<double> placed = placedObjective(*c, std::min(chosenObj, limit));
      if (placed) consider(c, *placed);  // else above the best: cannot win
    }
    if (chosenObj <= limit) return chosen;
    const int after = static_cast<int>(
        std::count_if(order.begin(), order.end(), [&](const Candidate* c) { return !runs(c); }));
    if (after == known) return chosen;  // (never: the plan of the limit was placed)
  }
}

ArgminSearch::Candidate* ArgminSearch::settle() {
  for (;;) {
    Candidate* chosen = best();
    // A k pruned by a plan that does not run can beat the best that does: those within it are
    // simulated (the first of them at least, so that this ends).
    const double obj = chosen ? *chosen->placed : std::numeric_limits<double>::infinity();
    std::vector<std::int64_t> again;
    std::vector<std::pair<double, std::int64_t>> kept;
    for (const auto& [bound, k] : m_pruned) {
      if (bound <= obj) {
        again.push_back(k);
      } else {
        kept.emplace_back(bound, k);
      }
    }
    if (again.empty()) return chosen;
    m_pruned = std::move(kept);
    m_bestMost = obj;
    search(again);
  }
}

std::optional<Evaluation> ArgminSearch::run(std::int64_t top) {
  const auto ks = grid(top);
  search(ks);
  Candidate* chosen = settle();
  if (!chosen && ks.size() < static_cast<std::size_t>(top)) {
    // No plan of the grid's k values runs: the k values between them are searched too, so
    // that "none runs" holds for every k.
    std::vector<std::int64_t> rest;
    for (std::int64_t k = 1; k <= top; ++k) {
      if (!std::binary_search(ks.begin(), ks.end(), k)) rest.push_back(k);
    }
    search(rest);
    chosen = settle();
  }
  if (chosen && ks.size() > 1 && ks.back() > 48 &&
      std::binary_search(ks.begin(), ks.end(), chosen->plan.plan->k)) {
    // Refine between the grid neighbours of the best k.
    const std::int64_t bestK = chosen->plan.plan->k;
    const auto it = std::find(ks.begin(), ks.end(), bestK);
    const std::int64_t lo = it == ks.begin() ? 1 : *(it - 1) + 1;
    const std::int64_t hi = it + 1 == ks.end() ? top : *(it + 1) - 1;
    const std::int64_t stride = std::max<std::int64_t>(1, (hi - lo + 1) / 12);
    std::vector<std::int64_t> fine;
    for (std::int64_t k = lo; k <= hi; k += stride) {
      if (k != bestK) fine.push_back(k);
    }
    search(fine);
    chosen = settle();
  }
  if (!chosen) return std::nullopt;
  // A plan that keeps every FM (accudnn where the budget holds keep-all at k) is valued as it
  // will run, the others by phase 1, which phase 2 can only make faster: where a keep-all plan
  // wins, the best of the others is taken through phase 2 as well, and the faster one returned.
  // The best of the others does not beat the keep-all plan in phase 1 (best() chose over it),
  // so only its phase 2 can: that is placed only where its fastest schedule could, and placing
  // stops once no outcome still can. A phase 2 that beats the keep-all plan also beats its own
  // phase 1, as noSlowerPlaced asks.
  pause();
  Context::KPlan bestPlan = keepsAll(*chosen) ? chosen->plan : withPhase2(chosen->plan);
  if (!m_fixed && keepsAll(*chosen)) {
    if (Candidate* other = best(false)) {
      const double mine = *chosen->placed;
      Context::KPlan p = at(*m_ctx.timesAt(other->plan.plan->k), Stage::FromPhase1, &other->plan);
      if (p.plan) {
        Candidate phase2 = candidateOf(std::move(p));
        const auto beats = [&](double obj) {
          return obj < mine || (obj == mine && phase2.plan.plan->k < bestPlan.plan->k);
        };
        if (beats(phase2.least)) {
          const std::optional<double> obj = placedObjective(phase2, mine);
          if (obj && beats(*obj)) bestPlan = phase2.plan;
        }
      }
    }
  }
  if (!bestPlan.plan) return std::nullopt;
  return *bestPlan.plan;
}

}  // namespace

std::optional<Evaluation> argminSearch(const Context& ctx, const PlanRequest& req,
                                       const Prepared* fixed, std::int64_t top, PlanResult& out) {
  return ArgminSearch(ctx, req, fixed, out).run(top);
}

}  // namespace swapscope::perf::planning
