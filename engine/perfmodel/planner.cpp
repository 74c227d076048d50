// SPDX-License-Identifier: MIT
/// The planner's entry points: Planner::plan checks the request and hands it to one search
/// (argmin_search.cpp, paper_search.cpp, or accudnn_search.cpp at a fixed k), then the searched
/// policy's second stage from its row of kSearches (ito's, ito_search.cpp) and the executor's
/// placement decision (plan_context.cpp).
#include "perfmodel/planner.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <exception>
#include <future>
#include <memory>
#include <string_view>
#include <thread>

#include "common/batch_limit.h"
#include "common/bytes.h"
#include "common/error.h"
#include "common/format.h"
#include "perfmodel/paper.h"
#include "perfmodel/plan_context.h"

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

using namespace planning;

namespace {

/// What the planner does for a searched policy (analysis/policy.h), after the k search whose
/// keep/swap plan at each k is accudnn's (accudnn_search.cpp).
struct Search {
  Policy policy;
  /// Why paper mode (Algorithm 2) cannot plan the policy; empty where it can.
  std::string_view no_paper_mode;
  /// A second stage on the plan at the chosen k; nullptr where the k search's plan stands.
  Evaluation (*stage2)(const Context& ctx, Evaluation stage1, std::int64_t budget, int reuseDelay,
                       int* evaluated) = nullptr;
};

/// One row per searched policy of the policy table.
constexpr std::array kSearches{
    Search{Policy::AccUdnn, {}},
    // ito: stage 1 is accudnn's plan at k, stage 2 recomputes on it (at the chosen k only: it is
    // never slower than stage 1, as accudnn's phase 2 is never slower than phase 1).
    Search{Policy::Ito,
           "Algorithm 2 (AccUDNN §4) checks constraint (6) on a timeline without recompute steps, "
           "so it cannot weigh recompute against swap",
           &itoStage2},
};

const Search& searchOf(Policy p) {
  for (const Search& s : kSearches) {
    if (s.policy == p) return s;
  }
  throw Error(ErrorKind::Runtime, "policy " + std::string(policyName(p)) +
                                      " is searched but has no row in the planner's searches");
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

std::uint64_t Planner::pinRoundsReplayed() const {
  return m_impl->ctx.pinRoundsReplayed.load();
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
  if (e && reuse_delay < 0 && !placeAsTheExecutor(ctx, *p, budget, *e)) return std::nullopt;
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

namespace {

/// k_max for the request (swap-all's curve, or the fixed policy's), or why no k fits: false
/// where none does, or where the request's fixed k is above k_max (`out.reason` says so).
bool withinReach(const MemoryCurve& limitCurve, const PlanRequest& req, PlanResult& out) {
  // No k above the limit of every verb (common/batch_limit.h): a plan the run would refuse.
  out.k_max = std::min(limitCurve.kMax(req.budget, kMaxBatch), kMaxBatch);
  if (out.k_max < 1) {
    const std::int64_t need = limitCurve.peak(1);
    out.reason = "untrainable: " + std::string(policyName(req.policy)) + " needs " +
                 formatBytes(need) + " (" + std::to_string(need) +
                 " bytes) at k = 1, the budget is " + formatBytes(req.budget) +
                 "; no policy fits below swap-all's peak at k = 1, " + formatBytes(out.min_budget);
    return false;
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
    return false;
  }
  return true;
}

/// The plan at the request's fixed k: the fixed policy's, or accudnn's both phases, phase 2 kept
/// only where the schedule the executor places is no slower than phase 1's.
std::optional<Evaluation> fixedKPlan(const Context& ctx, const PlanRequest& req,
                                     const Prepared* fixed, PlanResult& out) {
  const auto times = ctx.timesAt(*req.batch);
  auto p =
      kPlanAt(ctx, req, fixed, *times, Context::Stage::Whole, nullptr, &out.evaluated, &out.reused);
  if (p.plan && !fixed && !p.schedules.empty()) {
    auto phase1 = kPlanAt(ctx, req, fixed, *times, Context::Stage::Phase1, nullptr, &out.evaluated,
                          &out.reused);
    if (phase1.plan) p = noSlowerPlaced(ctx, req.budget, phase1, p);
  }
  if (!p.plan) return std::nullopt;
  return *p.plan;
}

/// `out` marked as a plan whose peak fits but whose buffers do not pack, `what` saying which.
PlanResult doesNotPack(PlanResult out, const std::string& what, std::int64_t budget) {
  out.does_not_pack = true;
  out.reason = what + " in " + formatBytes(budget) +
               ": the peak fits, but the buffers pack neither ahead of time nor at run time "
               "(alignment and fragmentation), so the executor would refuse the plan";
  return out;
}

std::string doesNotRunAt(std::int64_t k) {
  return "the plan at k = " + std::to_string(k) + " does not run";
}

/// `best` as the executor will run it (simulated on the schedule its placement decision picks),
/// with its prepared set; none where it packs neither ahead of time nor at run time. The argmin
/// searches compare only plans that run; a second stage's plan, a fixed k's or paper mode's is
/// checked here. Where it does not run, the first stage's plan is taken (ito), or at a fixed k
/// of a searched policy swap-all's (where accudnn's pins start), where it runs. `best` becomes the
/// plan taken (re-simulated on its schedule) and `out.evaluated` counts the simulations made here.
/// With a fixed reuse delay (`reuse_delay >= 0`) the plan is returned unchecked.
std::shared_ptr<const Prepared> asPlaced(const Context& ctx, const PlanRequest& req,
                                         const Prepared* fixed, Evaluation& best,
                                         std::optional<Evaluation> stage1, PlanResult& out) {
  const auto preparedOf = [&](const Evaluation& e) {
    return fixed ? std::shared_ptr<const Prepared>(std::shared_ptr<const Prepared>(), fixed)
                 : ctx.prepared(e.swapped, e.recomputed);
  };
  auto final = preparedOf(best);
  if (req.reuse_delay >= 0 || placeAsTheExecutor(ctx, *final, req.budget, best)) return final;
  std::vector<Evaluation> fallbacks;
  if (stage1) fallbacks.push_back(std::move(*stage1));
  if (req.batch && !fixed) {
    BudgetWindow window(req.budget);
    ++out.evaluated;
    if (auto e =
            evaluatePrepared(ctx, ctx.swapAll, *ctx.timesAt(*req.batch), window, req.reuse_delay))
      fallbacks.push_back(std::move(*e));
  }
  for (Evaluation& e : fallbacks) {
    final = preparedOf(e);
    if (placeAsTheExecutor(ctx, *final, req.budget, e)) {
      best = std::move(e);
      return final;
    }
  }
  return nullptr;
}

}  // namespace

PlanResult Planner::plan(const PlanRequest& req) const {
  const Context& ctx = m_impl->ctx;
  PlanResult out;
  out.min_budget = ctx.swapAll.curve.peak(1);
  out.delta = allReduceSeconds(ctx.paramBytes, req.gpus, req.link_bandwidth, req.link_latency);
  const Prepared* fixed = policyInfo(req.policy).fixed() ? &ctx.fixedPlan(req.policy) : nullptr;
  const Search* search = fixed ? nullptr : &searchOf(req.policy);
  if (search && !search->no_paper_mode.empty() && req.mode == PlanMode::Paper && !req.batch) {
    throwBadInput("--policy " + std::string(policyName(req.policy)) + " has no paper mode: " +
                  std::string(search->no_paper_mode) + "; use --mode argmin or a fixed --batch");
  }
  if (!withinReach(fixed ? fixed->curve : ctx.swapAll.curve, req, out)) return out;
  const std::int64_t top = req.max_batch > 0 ? std::min(out.k_max, req.max_batch) : out.k_max;

  std::optional<Evaluation> best;
  if (req.batch) {
    best = fixedKPlan(ctx, req, fixed, out);
  } else if (req.mode == PlanMode::Argmin) {
    best = argminSearch(ctx, req, fixed, top, out);
  } else {
    best = paperSearch(ctx, req, fixed, top, out);
    if (out.infeasible || out.does_not_pack) return out;
  }
  std::optional<Evaluation> stage1;
  if (best && search && search->stage2) {
    stage1 = best;
    best = search->stage2(ctx, std::move(*best), req.budget, req.reuse_delay, &out.evaluated);
  }
  // Every k here fits the peak (k_max): where none is returned, none runs.
  if (!best) {
    return doesNotPack(std::move(out),
                       req.batch ? doesNotRunAt(*req.batch)
                                 : "no plan of k up to " + std::to_string(top) + " runs",
                       req.budget);
  }
  // The k the error names where no schedule runs: asPlaced may replace `best` by a fallback.
  const std::int64_t k = best->k;
  const auto final = asPlaced(ctx, req, fixed, *best, std::move(stage1), out);
  if (!final) return doesNotPack(std::move(out), doesNotRunAt(k), req.budget);
  out.trainable = true;
  out.best = std::move(*best);
  out.gmap = final->gmap;
  out.curve = final->curve;
  out.t_whole = wholeTrainingSeconds(out.best.k, out.best.sim.t_iter, out.delta, req);
  out.lr = scaledLearningRate(req.lr_base, req.k_base, req.lr_c, out.best.k);
  return out;
}

std::size_t sweep(const Planner& planner, const PlanRequest& base,
                  const std::vector<std::int64_t>& budgets, int lanes,
                  const std::function<void(SweepOutcome&&)>& done,
                  const std::function<bool()>& stop) {
  const std::size_t wanted = lanes > 0
                                 ? static_cast<std::size_t>(lanes)
                                 : std::max<std::size_t>(1, std::thread::hardware_concurrency());
  const std::size_t count = std::min(wanted, std::max<std::size_t>(1, budgets.size()));
  std::atomic<std::size_t> next{0}, planned{0};
  std::atomic<bool> stopped{false};
  // One lane's work; whatever it throws (`stop`, `done`, a failure that is no std::exception)
  // stops every lane before it starts another budget, and reaches the caller.
  const auto lane = [&] {
    try {
      for (;;) {
        if (stopped.load() || (stop && stop())) {
          stopped = true;
          return;
        }
        const std::size_t i = next.fetch_add(1);
        if (i >= budgets.size()) return;
        SweepOutcome o;
        o.index = i;
        o.budget = budgets[i];
        PlanRequest request = base;
        request.budget = budgets[i];
        request.threads = 1;
        try {
          o.plan = planner.plan(request);
        } catch (const std::exception& e) {
          o.error = e.what();
        }
        ++planned;
        if (done) done(std::move(o));
      }
    } catch (...) {
      stopped = true;
      throw;
    }
  };
  std::vector<std::future<void>> others;
  others.reserve(count - 1);
  std::exception_ptr failed;
  try {
    for (std::size_t t = 1; t < count; ++t)
      others.push_back(std::async(std::launch::async, lane));
  } catch (...) {  // a thread that cannot be started: the lanes started stop
    stopped = true;
    failed = std::current_exception();
  }
  if (!failed) {
    try {
      lane();
    } catch (...) {
      failed = std::current_exception();
    }
  }
  for (auto& f : others) {
    try {
      f.get();
    } catch (...) {
      if (!failed) failed = std::current_exception();
    }
  }
  if (failed) std::rethrow_exception(failed);
  return planned.load();
}

double wholeTrainingSeconds(std::int64_t k, double t_iter, double delta,
                            const PlanRequest& request) {
  if (request.dataset_size <= 0) return 0;
  // Data parallel: each of the N GPUs takes k samples an iteration.
  const double samplesPerIteration = static_cast<double>(k) * std::max(1, request.gpus);
  return std::ceil(request.epochs * static_cast<double>(request.dataset_size) /
                   samplesPerIteration) *
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
  p.prefetches_moved = e.prefetches_moved;
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

void throwNoPlan(const PlanResult& r) {
  throw Error(r.infeasible ? ErrorKind::Runtime : ErrorKind::BadInput, r.reason);
}

}  // namespace swapscope::perf
