// SPDX-License-Identifier: MIT
// accudnn (AccUDNN §4, Algorithm 2's pinning): at k, pin the FMs whose prefetches stall, then keep
// what fits.
#include <cmath>
#include <set>

#include "perfmodel/plan_context.h"

namespace swapscope::perf::planning {
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

/// The removable stall of a whole simulation: the running sum its last step keeps, added in
/// the order removableStall() adds (the same double), without reading every step again.
double removableOf(const SimResult& whole) {
  return whole.sums.size() == whole.steps.size() && !whole.sums.empty()
             ? whole.sums.back().removable
             : whole.removableStall();
}

/// accudnn at one k from a prepared swap-all plan: the pins of phase 1 and phase 2 (see
/// accudnnPrepared), made on the simulator's inputs in place, then the exact plan of the pins.
class AccudnnAtK {
 public:
  AccudnnAtK(const Context& ctx, const Prepared& swapAll, const StepTimes& times,
             BudgetWindow& window, int reuseDelay)
      : m_ctx(ctx),
        m_swapAll(swapAll),
        m_times(times),
        m_window(window),
        m_reuseDelay(reuseDelay),
        m_placement(ctx.scheduleAt(swapAll, times.k)),
        m_in(withoutTimeline(simInput(ctx, swapAll, times, *m_placement,
                                      chooseDelay(reuseDelay, *m_placement, window)))),
        m_schedule(m_in),  // pins change durations only
        m_sim(simulate(m_schedule, m_in)),
        m_resident(residentSteps(swapAll, times.k)) {
    findFms();
  }

  /// Phase 1: pin while a pin removes stall, or take the pins of `phase1Plan`.
  void removeStall(const Evaluation* phase1Plan);
  /// Phase 2: keep what fits, largest first, while the predicted time stays.
  void keepWhatFits();
  /// The exact plan of the pins made, with pins given back where the exact plan needs it.
  std::optional<Evaluation> exactPlan(const Evaluation* phase1Plan);
  int simulations() const { return m_count; }

 private:
  /// A swapped FM buffer: forward release step, backward prefetch step (0 when it is offloaded
  /// but never leaves the device), the bytes it takes in the pool and the bytes its copies move.
  /// The minibatch is one too: it is loaded at step 1 whatever the set, so only phase 2 keeps it
  /// (its backward prefetch is then dropped).
  struct Fm {
    int buffer, layer, release = 0, prefetch = 0;
    std::int64_t bytes, copied;
    bool minibatch = false;
  };
  /// The pins are decided on the simulated times alone: the simulations here record no pool
  /// timeline (the exact plan's does).
  static SimInput withoutTimeline(SimInput in) {
    in.curve = nullptr;
    return in;
  }
  static StepMax residentSteps(const Prepared& swapAll, std::int64_t k) {
    const int n = swapAll.gmap.forward_steps;
    std::vector<std::int64_t> residentAt(static_cast<std::size_t>(2 * n + 2), 0);
    for (int s = 1; s <= 2 * n; ++s)
      residentAt[static_cast<std::size_t>(s)] =
          swapAll.curve.resident[static_cast<std::size_t>(s)].at(k);
    return StepMax(residentAt);
  }
  void findFms();
  const Fm& fm(int f) const { return m_fms[static_cast<std::size_t>(f)]; }
  using Round = Context::PinTrace::Round;
  /// An FM kept on the device occupies its bytes from after its release to before its prefetch.
  /// The comparison with the budget is added to `round` where it is given.
  bool fits(const Fm& f, Round* round = nullptr) {
    if (f.prefetch == 0) return !f.minibatch;  // never leaves: keeping it costs nothing
    const auto m = m_resident.max(f.release + 1, f.prefetch);
    if (!m) return true;
    const bool fitted = m_window.fits(*m + f.bytes);
    if (round) round->compared.emplace_back(*m + f.bytes, fitted);
    return fitted;
  }
  /// The simulations phase 1's rounds write into: one object serves every round (bestPin resets
  /// `bestComplete`), so trials allocate nothing once warm.
  struct PinBuffers {
    SimResult trial, bestSim;
    bool bestComplete = false;  ///< bestSim holds the best pin's whole simulation
    /// Where bestSim is a Complete simulateTrial: the step it resumed at (its earlier steps are
    /// m_sim's, completeTrial); 0 where it is whole.
    std::size_t bestFrom = 0;
  };
  /// Replays the rounds an earlier budget made at this k as far as they hold here, into `trace`;
  /// true where they are all of that budget's phase 1 (nothing is left to pin).
  bool replayKept(Context::PinTrace& trace);
  /// The pin that removes the most stall per byte (more than `minGain`), its comparisons with the
  /// budget added to `round`; -1 where none does. `state.bestSim` holds its simulation where
  /// `state.bestComplete`.
  int bestPin(double minGain, Round& round, PinBuffers& state);
  /// The whole simulation of pin `f` into `out`; its removable stall.
  double whole(int f, SimResult& out);
  /// How many of the first rounds of `trace` have comparisons that come out the same at this
  /// budget.
  std::size_t holds(const Context::PinTrace& trace) const;
  /// Replays the first `rounds` rounds of `trace`: their pins, window and simulation count.
  void replay(const Context::PinTrace& trace, std::size_t rounds);
  /// A pinned FM moves nothing: its copies take no time, beside compute or not.
  void setPinned(const Fm& f, bool pinned) {
    if (f.minibatch) return;  // its buffer's time is also the step-1 load
    const PerfModel& model = m_ctx.model;
    const auto b = static_cast<std::size_t>(f.buffer);
    m_in.offload_seconds[b] = pinned ? 0.0 : model.transfer(f.copied, true);
    m_in.prefetch_seconds[b] = pinned ? 0.0 : model.transfer(f.copied, false);
    m_in.offload_beside_seconds[b] = pinned ? 0.0 : model.transfer(f.copied, true, true);
    m_in.prefetch_beside_seconds[b] = pinned ? 0.0 : model.transfer(f.copied, false, true);
  }
  void pin(int f) {
    const Fm& x = fm(f);
    m_pinned[static_cast<std::size_t>(f)] = true;
    m_order.push_back(f);
    setPinned(x, true);
    if (x.prefetch > 0) m_resident.add(x.release + 1, x.prefetch, x.bytes);
  }
  void unpinLast() {
    const int f = m_order.back();
    const Fm& x = fm(f);
    m_pinned[static_cast<std::size_t>(f)] = false;
    m_order.pop_back();
    setPinned(x, false);
    if (x.prefetch > 0) m_resident.add(x.release + 1, x.prefetch, -x.bytes);
  }
  /// The unpinned FMs prefetched for the first stalled steps and the two steps after each (a
  /// prefetch stalls the steps after it too: the swap-in queue ahead of it matters).
  std::vector<int> stallCandidates() const;
  /// The exact plan of the first `pins` pins.
  std::optional<Evaluation> exact(std::size_t pins);

  /// m_sim after replayed pins, which are not simulated: simulated once, where it is read.
  void ensureSimulated() {
    if (!m_simStale) return;
    simulate(m_schedule, m_in, m_sim);  // equal to the bit to the rounds' own (simulateFrom)
    m_simStale = false;
  }

  const Context& m_ctx;
  const Prepared& m_swapAll;
  const StepTimes& m_times;
  BudgetWindow& m_window;
  const int m_reuseDelay;
  const std::shared_ptr<const Context::Schedule> m_placement;
  SimInput m_in;
  const SimSchedule m_schedule;
  SimResult m_sim;
  bool m_simStale = false;  // m_sim is not the current pins' (replayed rounds)
  StepMax m_resident;       // resident bytes per step under the pins
  int m_count = 1;          // simulations
  std::vector<Fm> m_fms;
  std::vector<std::vector<int>> m_readsAt;  // per backward step: the FMs prefetched for it
  std::vector<bool> m_pinned;
  std::vector<int> m_order;  // the pins, in the order made
  std::size_t m_phase1 = 0;  // pins made by phase 1
};

void AccudnnAtK::findFms() {
  const Gmap& g = m_swapAll.gmap;
  const std::int64_t k = m_times.k;
  std::vector<int> fmOfBuffer(g.buffers.size(), -1);
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    const GmapBuffer& buf = g.buffers[b];
    if (buf.kind != BufferKind::FeatureMap || buf.layer < 0 ||
        !m_swapAll.set[static_cast<std::size_t>(buf.layer)]) {
      continue;
    }
    fmOfBuffer[b] = static_cast<int>(m_fms.size());
    m_fms.push_back({static_cast<int>(b), buf.layer, 0, 0, m_swapAll.pool().buffers[b].size.at(k),
                     buf.size.at(k), buf.layer == m_ctx.net.inputLayer()});
  }
  const int n = g.forward_steps;
  m_readsAt.resize(static_cast<std::size_t>(2 * n + 2));
  for (const GmapOp& op : g.ops) {
    const int f = op.buffer >= 0 ? fmOfBuffer[static_cast<std::size_t>(op.buffer)] : -1;
    if (f < 0) continue;
    Fm& x = m_fms[static_cast<std::size_t>(f)];
    if (op.kind == GmapOpKind::Release && op.step <= n) x.release = op.step;
    if (op.kind == GmapOpKind::Prefetch && op.step > n) {
      x.prefetch = op.step;
      if (!x.minibatch) m_readsAt[static_cast<std::size_t>(op.step)].push_back(f);
    }
  }
  m_pinned.assign(m_fms.size(), false);
}

std::vector<int> AccudnnAtK::stallCandidates() const {
  constexpr double kEps = 1e-9;
  std::vector<int> candidates;
  const auto add = [&](std::size_t step) {
    for (const int f : m_readsAt[step]) {
      if (!m_pinned[static_cast<std::size_t>(f)]) candidates.push_back(f);
    }
  };
  for (std::size_t j = 2; j < m_sim.steps.size() && candidates.size() < 8; ++j) {
    if (m_sim.steps[j].stall <= kEps) continue;
    add(j);
    for (std::size_t q = j + 1; q < std::min(m_sim.steps.size(), j + 3); ++q)
      add(q);
  }
  return candidates;
}

void AccudnnAtK::removeStall(const Evaluation* phase1Plan) {
  if (phase1Plan) {
    for (std::size_t f = 0; f < m_fms.size(); ++f) {
      if (!phase1Plan->swapped[static_cast<std::size_t>(m_fms[f].layer)]) pin(static_cast<int>(f));
    }
    simulate(m_schedule, m_in, m_sim);
    ++m_count;
    m_phase1 = m_order.size();
    return;
  }
  constexpr double kEps = 1e-9;
  // A pin must remove more than kMinPinGain of the iteration: the model cannot tell smaller
  // differences apart (a run's t_iter varies by several per cent), and on ResNet-152 a greedy
  // of such pins took 25,000 simulations per plan for 0.25 % of predicted time per sample.
  constexpr double kMinPinGain = 1e-5;
  const double minGain = std::max(kEps, kMinPinGain * m_sim.t_iter);  // swap-all's
  Context::PinTrace trace;
  if (replayKept(trace)) {  // phase 1 ends as it did for an earlier budget
    m_phase1 = m_order.size();
    return;
  }
  PinBuffers state;
  while (removableOf(m_sim) > minGain) {
    Round round;
    const int countBefore = m_count;
    const int best = bestPin(minGain, round, state);
    round.pin = best;
    if (best >= 0) {
      if (!state.bestComplete) {
        whole(best, state.bestSim);  // the chosen pin's whole simulation
      } else if (state.bestFrom > 0) {
        completeTrial(m_schedule, m_sim, state.bestFrom, state.bestSim);
      }
      pin(best);
      std::swap(m_sim, state.bestSim);
    }
    round.simulations = m_count - countBefore;
    trace.rounds.push_back(std::move(round));
    if (best < 0) break;
  }
  m_phase1 = m_order.size();
  m_ctx.keepPinTrace(m_times.k, m_in.reuse_delay, std::move(trace));
}

bool AccudnnAtK::replayKept(Context::PinTrace& trace) {
  // The rounds an earlier budget made at this k, as far as they hold here: of the traces kept,
  // the one that holds the longest (ties: the latest).
  const auto kept = m_ctx.pinTraces(m_times.k, m_in.reuse_delay);
  if (!kept) return false;
  const Context::PinTrace* longest = nullptr;
  std::size_t replayed = 0;
  for (const auto& t : kept->latest) {
    const std::size_t n = holds(*t);
    if (!longest || n > replayed) {
      longest = t.get();
      replayed = n;
    }
  }
  replay(*longest, replayed);
  trace.rounds.assign(longest->rounds.begin(),
                      longest->rounds.begin() + static_cast<std::ptrdiff_t>(replayed));
  if (replayed == longest->rounds.size()) return true;
  ensureSimulated();
  return false;
}

double AccudnnAtK::whole(int f, SimResult& out) {
  const Fm& x = fm(f);
  setPinned(x, true);
  simulateFrom(m_schedule, m_in, m_sim,
               static_cast<std::size_t>(m_schedule.firstTransferStep(x.buffer)),
               std::numeric_limits<double>::infinity(), out);
  setPinned(x, false);
  ++m_count;
  return removableOf(out);
}

int AccudnnAtK::bestPin(double minGain, Round& round, PinBuffers& state) {
  const double before = removableOf(m_sim);
  int best = -1;
  double bestScore = 0;
  state.bestComplete = false;
  // Gains that agree within `close` (far above the rounding of a simulation's sums, far below
  // what the model can tell apart) are ties, and the earlier candidate keeps them: the choice
  // does not depend on rounding, so a trial that stops where it is the current plan moved in
  // time (whose stall is the current plan's up to the rounding of a different sum) chooses
  // as a whole simulation would. Only a gain that close to the least gain is simulated whole.
  const double close = 1e-9 * before + 1e-12;
  const auto bytesOf = [](const Fm& x) {
    return static_cast<double>(std::max<std::int64_t>(1, x.bytes));
  };
  std::set<int> tried;
  for (const int f : stallCandidates()) {
    if (!tried.insert(f).second) continue;
    const Fm& x = fm(f);
    if (x.prefetch == 0 || !fits(x, &round)) continue;
    // No pin removes more than all the stall: skip a candidate that could at best tie.
    if (before / bytesOf(x) <= bestScore) continue;
    setPinned(x, true);
    // The steps before the pin's first transfer are the current plan's; once the stall
    // exceeds what could still beat the best pin (with a margin far above rounding), the
    // candidate cannot win; and once the trial is the current plan moved in time, the rest
    // of its stall is the current plan's (simulateTrial).
    const double needed = std::max(minGain, bestScore * bytesOf(x));
    const double limit = before - needed + 1e-12 + 1e-9 * before;
    double stall = 0;
    // The trial's steps before its first transfer are m_sim's (completeTrial), until whole().
    auto trialFrom = static_cast<std::size_t>(m_schedule.firstTransferStep(x.buffer));
    TrialEnd end =
        simulateTrial(m_schedule, m_in, m_sim, trialFrom,
                      static_cast<std::size_t>(m_schedule.lastTransferStep(x.buffer)) + 1, limit,
                      state.trial, &stall);
    ++m_count;
    setPinned(x, false);
    if (end == TrialEnd::OverLimit) continue;
    double gain = before - stall;
    if (end == TrialEnd::Shifted && std::abs(gain - minGain) <= close) {
      gain = before - whole(f, state.trial);
      end = TrialEnd::Complete;
      trialFrom = 0;
    }
    if (gain > minGain && (best < 0 || gain - bestScore * bytesOf(x) > close)) {
      bestScore = gain / bytesOf(x);
      best = f;
      state.bestComplete = end == TrialEnd::Complete;
      if (state.bestComplete) {
        std::swap(state.bestSim, state.trial);
        state.bestFrom = trialFrom;
      }
    }
  }
  return best;
}

std::size_t AccudnnAtK::holds(const Context::PinTrace& trace) const {
  std::size_t r = 0;
  for (; r < trace.rounds.size(); ++r) {
    const Round& round = trace.rounds[r];
    const bool same = std::all_of(round.compared.begin(), round.compared.end(), [&](const auto& c) {
      return (c.first <= m_window.budget) == c.second;
    });
    if (!same) break;
  }
  return r;
}

void AccudnnAtK::replay(const Context::PinTrace& trace, std::size_t rounds) {
  for (std::size_t r = 0; r < rounds; ++r) {
    const Round& round = trace.rounds[r];
    for (const auto& c : round.compared)
      m_window.fits(c.first);
    m_count += round.simulations;
    ++m_ctx.pinRoundsReplayed;
    if (round.pin >= 0) {
      pin(round.pin);
      m_simStale = true;
    }
  }
}

void AccudnnAtK::keepWhatFits() {
  // Largest first (ties: the earlier buffer). Where the budget holds keep-all at k, that is
  // every FM. Usually one simulation checks them all; one at a time only if that one is slower.
  ensureSimulated();
  const double phase1Time = m_sim.t_iter;
  std::vector<int> rest;
  for (std::size_t f = 0; f < m_fms.size(); ++f) {
    if (!m_pinned[f]) rest.push_back(static_cast<int>(f));
  }
  std::sort(rest.begin(), rest.end(), [&](int x, int y) {
    const Fm& a = fm(x);
    const Fm& b = fm(y);
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.buffer < b.buffer;
  });
  for (const int f : rest) {
    if (fits(fm(f))) pin(f);
  }
  if (m_order.size() == m_phase1) return;
  SimResult trial;
  simulate(m_schedule, m_in, trial);
  ++m_count;
  if (noWorse(trial.t_iter, phase1Time)) return;
  while (m_order.size() > m_phase1)
    unpinLast();
  for (const int f : rest) {
    if (!fits(fm(f))) continue;
    pin(f);
    simulate(m_schedule, m_in, trial);
    ++m_count;
    if (!noWorse(trial.t_iter, phase1Time)) unpinLast();
  }
}

std::optional<Evaluation> AccudnnAtK::exact(std::size_t pins) {
  SwapSet set = m_swapAll.set;
  for (std::size_t i = 0; i < pins; ++i)
    set[static_cast<std::size_t>(fm(m_order[i]).layer)] = false;
  ++m_count;
  return evaluatePrepared(m_ctx, *m_ctx.prepared(set), m_times, m_window, m_reuseDelay);
}

std::optional<Evaluation> AccudnnAtK::exactPlan(const Evaluation* phase1Plan) {
  // Pins are dropped, last first, if the exact peak is over.
  std::size_t pins = m_order.size();
  std::optional<Evaluation> e = exact(pins);
  while (!e && pins > 0)
    e = exact(--pins);
  // Phase 2 must not cost time in the exact plan either (a higher peak can shorten the reuse
  // delay, for one): if it does, the most phase-2 pins that do not, by bisection.
  if (!e || pins <= m_phase1) return e;
  std::optional<Evaluation> base = phase1Plan ? *phase1Plan : exact(m_phase1);
  if (!base || noWorse(e->sim.t_iter, base->sim.t_iter)) return e;
  const double reference = base->sim.t_iter;
  std::size_t lo = m_phase1, hi = pins;
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
  return base;
}

}  // namespace

/// accudnn at k from a prepared swap-all plan, in two phases:
/// 1. while the simulation stalls, pin the FM prefetched for a stalled step that removes the most
///    stall per byte (Algorithm 2 of AccUDNN §4, pins re-checked after pinning);
/// 2. then keep pinning, largest FM first, every FM whose bytes fit the budget between its
///    forward release and its backward prefetch, as long as the predicted time does not grow:
///    of the plans with the same predicted time, the one that moves the fewest bytes. A budget
///    that holds keep-all at k ends with nothing swapped.
/// Pins change the simulator's inputs in place (no transfer for a pinned FM) and the resident
/// bytes between its forward release and backward prefetch; the final set is then evaluated
/// exactly, and phase 2's pins are given back where the exact plan would be slower (a kept FM
/// takes headroom that prefetches would have been moved into). Where the budget holds keep-all
/// at k, the plan is keep-all's, in both phases. Phase 2 never makes the plan
/// slower than phase 1's, so the argmin search runs phase 1 only and phase 2 at the k it picks.
std::optional<Evaluation> accudnnPrepared(const Context& ctx, const Prepared& swapAll,
                                          const StepTimes& times, BudgetWindow& window,
                                          int reuseDelay, int* evaluated, bool keepWhatFits,
                                          const Evaluation* phase1Plan) {
  const std::int64_t k = times.k;
  if (!window.fits(swapAll.curve.peak(k))) return std::nullopt;
  // Where the budget holds keep-all at k, the plan keeps every FM (what phase 2 would end with,
  // after phase 1 had pinned its way there one FM at a time).
  if (window.fits(ctx.keepAll.curve.peak(k))) {
    if (evaluated) ++*evaluated;
    return evaluatePrepared(ctx, ctx.keepAll, times, window, reuseDelay);
  }
  AccudnnAtK at(ctx, swapAll, times, window, reuseDelay);
  at.removeStall(phase1Plan);
  if (keepWhatFits) at.keepWhatFits();
  std::optional<Evaluation> e = at.exactPlan(phase1Plan);
  if (evaluated) *evaluated += at.simulations();
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
  if (e) {
    made.plan = std::make_shared<const Evaluation>(std::move(*e));
    if (reuseDelay < 0) made.schedules = scheduleTimes(ctx, *made.plan, &made.simulations);
  }
  made.window = window;
  ctx.keepPlan(times.k, reuseDelay, stage, made);
  return made;
}

Context::KPlan noSlowerPlaced(const Context& ctx, std::int64_t budget, const Context::KPlan& phase1,
                              const Context::KPlan& phase2) {
  if (!phase2.plan) return phase1;
  const double t1 = *placedTime(ctx, *phase1.plan, phase1.schedules, budget);
  const auto t2 = placedTime(ctx, *phase2.plan, phase2.schedules, budget, t1 * (1 + 1e-9) + 1e-12);
  return t2 && noWorse(*t2, t1) ? phase2 : phase1;
}

}  // namespace swapscope::perf::planning
