// SPDX-License-Identifier: MIT
/// @brief The planner: for a network, a budget and a fitted model, the minibatch and swap set
/// under a policy, with the simulated timeline. Re-entrant: no global state; every call works on
/// its own data.
///
/// Policies (analysis/policy.h): the fixed ones plan the sets their rows' functions make; each
/// searched one has a row in the planner's table of searches (planner.cpp). accudnn starts from
/// swap-all and keeps ("pins") FMs greedily by simulated stall removed per byte kept, until no
/// stall remains or no pin fits the budget (AccUDNN §4, Algorithm 2), then keeps every FM that
/// still fits, largest first, where that does not make the predicted iteration slower (fewest bytes
/// moved at equal time). ito is Ito et al.'s two-stage search (§4.4): stage 1, keep or swap, is
/// accudnn's plan at k; stage 2 takes the swapped FMs whose re-make (their layer's forward time and
/// that of the released inputs it re-runs) costs less than their copies, cheapest ratio first, and
/// recomputes each where the exact GMAP fits the budget and the simulation is no slower. Modes:
/// - argmin: scan k and minimise the simulated whole-training time ceil(E m / (N k)) (t_iter + Δ)
///   on N GPUs, or (t_iter + Δ) / k without a dataset size;
/// - paper: Algorithm 2 as written: from swap-all's k_max down, the largest k whose Algorithm 1
///   t_ready satisfies (6) after pinning into the area budget - M_peak(k). Algorithm 1 has no
///   recompute step, so ito has no paper mode (BadInput).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/gmap.h"
#include "analysis/layer_cost.h"
#include "analysis/memory.h"
#include "analysis/swap_policy.h"
#include "graph/network.h"
#include "perfmodel/model.h"
#include "perfmodel/paper.h"
#include "perfmodel/simulator.h"
#include "store/plan_file.h"

namespace swapscope::perf {

enum class PlanMode { Argmin, Paper };
std::string_view planModeName(PlanMode m);

struct PlanRequest {
  Policy policy = Policy::AccUdnn;
  PlanMode mode = PlanMode::Argmin;
  std::int64_t budget = 0;
  std::optional<std::int64_t> batch;  ///< fix k instead of searching
  std::int64_t max_batch = 0;         ///< cap the k search (0: none)
  double epochs = 1;
  std::int64_t dataset_size = 0;  ///< m; 0: minimise time per sample
  int gpus = 1;
  double link_bandwidth = 0;  ///< bytes/s, for Δ with gpus > 1
  double link_latency = 0;    ///< seconds
  double lr_base = 0.1;
  std::int64_t k_base = 256;
  double lr_c = 0;  ///< eq. 9's c; 0: the linear scaling rule
  /// Steps offloaded memory is kept from reuse. -1: the delay the executor chooses for the plan
  /// (analysis/reuse_delay.h).
  int reuse_delay = -1;
  /// Paper mode: try every k from the top down, as Algorithm 2 is written, instead of the grid
  /// descent and bisection (see plan()). Slow on large k ranges; for checking the fast search.
  bool paper_scan_all = false;
  /// Argmin: k values simulated at once, one per thread (0: the machine's hardware threads).
  /// The plan does not depend on it.
  int threads = 0;
  /// Where given, called between the argmin search's pieces of work (each k's plan, each
  /// placement decision), on the thread doing it; it may block, and the plan does not depend on
  /// it. The app's background sweep waits there while the plan the user asked for runs, so that
  /// a budget of the sweep in progress does not halve that plan's speed on two cores.
  std::function<void()> pause_point;
};

/// One evaluated (k, swap set).
struct Evaluation {
  std::int64_t k = 0;
  SwapSet swapped;
  /// The FMs re-made in backward (analysis/gmap.h); empty where none is (every policy but
  /// recompute-light and ito).
  RecomputeSet recomputed;
  std::int64_t peak = 0;
  int reuse_delay = 0;
  SimResult sim;
  int prefetches_moved = 0;
  bool extrapolated = false;  ///< some step's curve was used outside its profiled range
  bool transferred = false;   ///< some step used another network's per-type curve
  int missing = 0;            ///< steps without any curve (0 s assumed)
  /// Bytes the swaps move per iteration: offloaded to the host, and prefetched back in backward
  /// (the minibatch's load at step 1, which every plan has, is not counted).
  std::int64_t offload_bytes = 0, prefetch_bytes = 0;
  std::int64_t bytesMoved() const { return offload_bytes + prefetch_bytes; }
};

struct PlanResult {
  bool trainable = false;
  std::string reason;           ///< why not, with the minimum needed
  std::int64_t min_budget = 0;  ///< swap-all's peak at k = 1
  std::int64_t k_max = 0;       ///< the largest k the policy fits in the budget
  /// A fixed k (request.batch) above k_max: the bytes it needs in one pass, the least peak the
  /// policy reaches at that k (swap-all's for a searched policy); 0 otherwise; kNeedOverflows
  /// where that count does not fit in 64 bits (a figure no message may print as a number).
  std::int64_t batch_need = 0;
  static constexpr std::int64_t kNeedOverflows = -1;
  /// Not trainable because the peak fits but the buffers pack neither ahead of time nor at run
  /// time (the executor would refuse the plan): `reason` says so.
  bool does_not_pack = false;
  Evaluation best;
  Gmap gmap;  ///< of the best plan
  MemoryCurve curve;
  double delta = 0;    ///< seconds between iterations (all-reduce)
  double t_whole = 0;  ///< seconds for E epochs of m samples (0 without m)
  double lr = 0;       ///< eq. 9
  /// (k, swap set) simulations the plan rests on, those of k plans reused from earlier plans of
  /// the same Planner included (the count does not depend on what was planned before).
  int evaluated = 0;
  /// Plans at one k taken from earlier plans of the same Planner instead of made again: those
  /// made for a budget that every comparison with the budget they make treats the same way.
  int reused = 0;
  /// Paper mode: Algorithm 2 found no k whose t_ready meets (6); `reason` names the first
  /// violating step at the last k tried (k = 1) and its cause. The budget trains (k_max >= 1):
  /// the model predicts that every k stalls.
  bool infeasible = false;
  /// Paper mode: Algorithm 1's t_ready at the chosen k with its pins (free of violations), and
  /// the pinned area budget - M_peak(k) of Algorithm 2.
  PaperResult paper;
  std::int64_t pinned_area = 0;
};

/// Throws why `r` (not trainable) makes no plan, as every caller that writes a plan reports it:
/// Error(BadInput) where the budget or k cannot train (the user's input), Error(Runtime) where
/// paper mode finds no k meeting constraint (6) (the model's answer), with `r.reason` either way.
[[noreturn]] void throwNoPlan(const PlanResult& r);

/// The planner for one network and one fitted model. Construction does the work every plan
/// shares (layer costs, the model's curves resolved per step, the keep-all, swap-all and
/// vdnn-conv GMAPs and memory curves); plan() then searches k and swap sets. All methods are
/// const and safe to call from many threads at once, so one Planner serves many budgets (the
/// desktop app re-plans on every drag of the budget). The only state kept between calls is
/// bounded, locked caches of what depends on neither the budget nor the request's other fields
/// (the GMAPs and memory curves of swap and recompute sets, step times, prefetch schedules), of
/// accudnn's plans at one k with the window of budgets each holds for (the budgets every comparison
/// with the budget in its making treats the same way), and of accudnn's pin rounds at one k (a
/// plan at another budget replays those whose comparisons with the budget come out the same
/// there): a result never depends on what was planned before. `model` must outlive it.
class Planner {
 public:
  Planner(const PerfModel& model, const Network& net);
  ~Planner();
  Planner(Planner&&) noexcept;
  Planner& operator=(Planner&&) noexcept;

  PlanResult plan(const PlanRequest& request) const;
  /// Simulates one k and swap set, with the schedule the executor will run it with (its reuse
  /// delay and moved prefetches, or those of `reuse_delay` where it is given); nullopt when its
  /// peak exceeds the budget, or (without `reuse_delay`) where the executor would refuse it: its
  /// buffers pack neither ahead of time nor at run time.
  std::optional<Evaluation> evaluate(std::int64_t k, const SwapSet& swapped, std::int64_t budget,
                                     int reuse_delay = -1) const;
  /// accudnn at one k: swap-all, then greedy pins that remove stall, then (keep_what_fits) every
  /// FM that fits the budget without a slower prediction. nullopt when swap-all does not fit.
  std::optional<Evaluation> accudnnAt(std::int64_t k, std::int64_t budget, int reuse_delay = -1,
                                      int* evaluated = nullptr, bool keep_what_fits = true) const;
  /// GMAPs (with their memory curves) built since construction, beside the fixed policies' own:
  /// what planning again on this planner did not find prepared (for tests and benchmarks).
  std::uint64_t gmapsBuilt() const;
  /// Rounds of accudnn's phase 1 (each the pin it made, or its finding that none helps) that
  /// plans replayed from a plan at another budget instead of simulating them (for tests and
  /// benchmarks).
  std::uint64_t pinRoundsReplayed() const;
  /// Swap-all's peak at k = 1: no policy trains in less.
  std::int64_t minBudget() const;
  const std::vector<LayerCost>& costs() const;

 private:
  struct Impl;
  std::unique_ptr<const Impl> m_impl;
};

/// One plan with a planner built for it.
PlanResult plan(const PerfModel& model, const Network& net, const PlanRequest& request);

/// One budget of a sweep: its place among the budgets, and its plan or why planning it failed.
struct SweepOutcome {
  std::size_t index = 0;
  std::int64_t budget = 0;
  std::optional<PlanResult> plan;
  std::string error;  ///< what plan() threw, where it threw
};

/// `base` planned at each of `budgets`, several budgets at once (the Trade-off view's sweep):
/// `lanes` threads (0 or less: one per hardware thread) each take the next budget that no thread
/// has taken and plan it on one planner thread (base.threads is not read). A plan never depends
/// on what the planner planned before, so each outcome is the plan that plan() makes of that
/// budget alone (all but PlanResult::reused, which counts what was taken from earlier plans);
/// one lane plans the budgets in order. Budgets in parallel use a second thread far better than
/// one plan's search does (its placement decisions are made one at a time).
/// `done` is called once per budget planned, on the lane that planned it, in no set order (two
/// lanes may call it at once). `stop`, where given, is asked by each lane before each budget (and
/// once more after the last): a lane that it answers true, and every lane after that, starts no
/// budget; a lane answered false just before may still start one. Where `stop` or `done` throws,
/// or a lane's thread cannot be started, the lanes start no budget more and the first exception
/// reaches the caller once every lane has ended. A plan() that throws a std::exception is an
/// outcome with its `error`. Returns the count of budgets planned.
std::size_t sweep(const Planner& planner, const PlanRequest& base,
                  const std::vector<std::int64_t>& budgets, int lanes,
                  const std::function<void(SweepOutcome&&)>& done,
                  const std::function<bool()>& stop = {});

/// The plan file of a trainable result: network and device identity, k, the swap set with its
/// offload and prefetch steps, and the predictions with every stalled step.
store::PlanFile toPlanFile(const PlanResult& result, const PlanRequest& request,
                           const PerfModel& model, const Network& net, const std::string& backend,
                           const std::string& sourceDb);

/// The whole-training time of request.epochs epochs of request.dataset_size samples at minibatch
/// k on each of request.gpus GPUs: ceil(E m / (N k)) (t_iter + Δ); 0 without a dataset size. What
/// the argmin search minimises with a dataset size, and PlanResult::t_whole.
double wholeTrainingSeconds(std::int64_t k, double t_iter, double delta,
                            const PlanRequest& request);

/// Eq. 9: α* = [1 - (1 - α_base c)^q] / c with q = k / k_base; α_base q when c = 0.
double scaledLearningRate(double lr_base, std::int64_t k_base, double c, std::int64_t k);

/// Ring all-reduce of the parameters over `gpus`: 2 (N-1)/N bytes / bandwidth + latency; 0 for one.
double allReduceSeconds(std::int64_t param_bytes, int gpus, double bandwidth, double latency);

}  // namespace swapscope::perf
