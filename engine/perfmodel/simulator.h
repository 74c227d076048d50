// SPDX-License-Identifier: MIT
/// @brief The event simulation of one iteration over the compute, swap-in and swap-out streams
/// (AccUDNN §3.4: Algorithm 1 and eq. 6 are its case without stalls, offload delays or releases),
/// in the schedule the swap executor runs:
/// - the minibatch loads on swap-in at time 0; step 1 waits for it;
/// - a prefetch opens at its issue step (its GMAP step, or earlier where analysis/
///   prefetch_schedule.h moved it): it starts when the swap-in stream is free, its FM's offload
///   has finished and the step before its issue step has finished computing (whose releases give
///   it memory); a step opens the prefetches moved to it before its own, as the executor does;
///   step j is ready (t_ready) when its prefetches have arrived;
/// - an offload starts on swap-out when its producer finishes; the FM's memory is reused
///   `reuse_delay` steps after its forward release, and the step that reuses it waits for the
///   offload;
/// - step j could start at max(finish of j-1, t_ready[j], memory); it starts the compute
///   stream's plain hand-off (dispatch) later, or its woken hand-off where it waited (for data
///   or memory), and later still where a copy runs then: by `start_block` x the remaining time
///   of a copy that was already running, or by `copy_start_wait` + `copy_start_block` x the
///   time beyond the plain hand-off of a copy that starts within it (an offload of step j-1, a
///   prefetch that waited for it). Its stall is the wait beyond the plain hand-off (so the
///   planner's pins, which remove stall, see what a copy costs at the hand-off);
/// - while a copy runs beside a step, the step progresses at 1 - `slowdown` of its rate;
/// - the SGD update's tasks follow the last backward step, each after a hand-off; the iteration
///   ends when all streams drain.
/// A transfer that runs while the other direction is busy is slowed by the duplex factor. A copy
/// runs at its rate beside compute unless the compute stream yields to it (copy_start_block >=
/// 0.5) and it starts while compute waits for its next step (between the end of the step before
/// and that end plus the hand-off): then it runs at its rate without compute.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/gmap.h"
#include "analysis/memory.h"

namespace swapscope::perf {

struct SimInput {
  const Gmap* gmap = nullptr;
  const MemoryCurve* curve = nullptr;
  std::int64_t k = 1;
  std::vector<double> step_seconds;      ///< per step 0..2N (index 0 unused)
  double update_seconds = 0;             ///< the SGD update after backward
  std::vector<double> offload_seconds;   ///< per GMAP buffer, alone on the link
  std::vector<double> prefetch_seconds;  ///< per GMAP buffer, alone on the link
  /// Per GMAP buffer, beside compute; empty: as offload_seconds / prefetch_seconds.
  std::vector<double> offload_beside_seconds, prefetch_beside_seconds;
  double duplex_factor = 1;
  std::vector<int> prefetch_issue;  ///< per buffer: the step its prefetch opens, 0: its GMAP step
  int reuse_delay = 0;
  double dispatch_seconds = 0;  ///< the compute stream's plain hand-off before each task
  /// The hand-off after a wait for data or memory; negative: dispatch_seconds (and below it,
  /// it counts as it).
  double dispatch_woken_seconds = -1;
  int update_tasks = 0;    ///< the SGD update's tasks, each after a hand-off
  double start_block = 0;  ///< 0..1: how much of a running copy a starting step waits for
  /// A copy starting in the step's hand-off and running beyond it delays the step by
  /// copy_start_wait + copy_start_block (0..1) x that time beyond (never below 0).
  double copy_start_block = 0;
  double copy_start_wait = 0;
  double slowdown = 0;  ///< 0..kMaxSlowdown: compute's lost rate beside a copy
};

struct StepTiming {
  double ready = 0, start = 0, finish = 0;
  double stall = 0;     ///< the wait beyond the plain hand-off (for data, memory or a copy)
  double dispatch = 0;  ///< the plain hand-off before it
  /// The compute stream's idle time before a stalled step (its stall and its hand-off), which
  /// is what a run measures; 0 for a step that does not stall. The plan file's stalls, and the
  /// app's stall markers and layer table, count this.
  double stalledIdle() const { return stall > 0 ? stall + dispatch : 0.0; }
};

struct BusyInterval {
  double start = 0, end = 0;
  int buffer = -1;
  int step = 0;
};

struct SimResult {
  std::vector<StepTiming> steps;  ///< 0..2N (index 0 unused)
  std::vector<BusyInterval> h2d, d2h;
  std::vector<std::pair<double, std::int64_t>> pool;  ///< (time, bytes resident from then on)
  double t_iter = 0;
  double stall = 0;            ///< total compute stall (waits beyond the hand-offs)
  double dispatch = 0;         ///< total hand-off time before steps 1..2N
  double update_dispatch = 0;  ///< the hand-offs of the SGD update's tasks
  /// The compute stream's idle time before steps 1..2N, which is what a run measures as stall
  /// (the update's hand-offs are in t_iter, not in the measured stall).
  double idle() const { return stall + dispatch; }
  double throughput = 0;             ///< samples per second
  std::vector<double> transfer_end;  ///< scratch: per buffer, offload then prefetch end times
  /// Scratch: per step, `stall`, `dispatch` and removableStall() summed up to it, so that a
  /// simulation resumed from a step takes them instead of summing again.
  struct Sums {
    double stall = 0, dispatch = 0, removable = 0;
    double in_clock = 0, out_clock = 0;  ///< when each copy stream is free after the step
  };
  std::vector<Sums> sums;
  std::vector<int> stalled_steps() const;
  /// The stall of steps 2.., summed in step order: what pinning can remove (step 1 waits for
  /// the minibatch whatever the swap set), and what simulateFrom's stall limit is checked on.
  double removableStall() const;
};

/// How simulateTrial ended.
enum class TrialEnd : std::uint8_t {
  Complete,   ///< simulated to the end, as simulateFrom
  OverLimit,  ///< stopped: the stall exceeds the limit
  Shifted,    ///< stopped: from here on the run is the base's, earlier or later by a constant
};

/// The order of events of one (GMAP, prefetch schedule, reuse delay): which prefetches each step
/// opens and reads, which offloads follow it, which FMs' memory it reuses. It does not depend on
/// the durations, so a caller that only changes durations (the planner trying pins) compiles it
/// once. Flat per-step lists: no allocation per simulation beyond the result.
class SimSchedule {
 public:
  explicit SimSchedule(const SimInput& in);
  std::size_t steps() const { return m_steps; }
  /// The first step whose simulation reads a duration of `buffer`'s transfers: the step that
  /// offloads it or opens its prefetch, whichever is earlier (1 for the minibatch's load); 0 for
  /// a buffer that is never moved.
  int firstTransferStep(int buffer) const;
  /// The last such step: the later of the two (0 for a buffer that is never moved).
  int lastTransferStep(int buffer) const;

 private:
  friend void simulate(const SimSchedule& schedule, const SimInput& in, SimResult& out);
  friend TrialEnd simulateTrial(const SimSchedule& schedule, const SimInput& in,
                                const SimResult& base, std::size_t from, std::size_t settled,
                                double stall_limit, SimResult& out, double* removable);
  friend bool simulateFrom(const SimSchedule& schedule, const SimInput& in, const SimResult& base,
                           std::size_t from, double stall_limit, SimResult& out);
  friend void completeTrial(const SimSchedule& schedule, const SimResult& base, std::size_t from,
                            SimResult& out);
  /// Whether a run resumed at `from` can take `base`'s steps before it (else it runs whole).
  static bool resumes(const SimSchedule& sc, const SimResult& base, std::size_t from) {
    return from >= 2 && base.steps.size() == sc.m_steps && base.sums.size() == sc.m_steps &&
           from < sc.m_steps;
  }
  /// Takes into `r` what a run resumed at step `from` keeps of `base`: its steps, transfers and
  /// sums before `from` (steps from `from` on, and the ends of transfers issued from `from` on,
  /// are written before they are read); of the steps and sums, only those of step from - 1
  /// (which the run reads) unless `prefix`.
  static void resume(const SimSchedule& sc, const SimInput& in, const SimResult& base,
                     std::size_t from, SimResult& r, bool prefix);
  /// Steps `from`.. of a simulation; steps before `from` are `base`'s (nullptr: from = 1).
  /// False when the stall of steps 2.. exceeds `stallLimit` (the result is then partial).
  /// With `settled` > 0, it stops at the first step j >= settled where both it and `base` have
  /// every copy issued before step j done when step j - 1 finishes, and sets `*shiftedAt` to j.
  static bool run(const SimSchedule& sc, const SimInput& in, SimResult& r, const SimResult* base,
                  std::size_t from, double stallLimit, std::size_t settled = 0,
                  std::size_t* shiftedAt = nullptr, bool prefix = true);
  struct PerStep {
    std::vector<int> start;  ///< per step s: items[start[s] .. start[s + 1])
    std::vector<int> items;
  };
  static PerStep group(std::vector<std::pair<int, int>>& stepBuffer, std::size_t steps);
  const Gmap* m_gmap = nullptr;
  std::size_t m_steps = 0;
  std::vector<int> m_loads;
  PerStep m_opens, m_reads, m_offloads, m_reusable;
  std::vector<int> m_firstTransfer;  ///< per buffer, see firstTransferStep()
  std::vector<int> m_lastTransfer;   ///< per buffer, see lastTransferStep()
  /// Indices into SimResult::transfer_end that the run reads and never writes (an FM that is
  /// never offloaded, as the minibatch): 0 in every result of this schedule.
  std::vector<std::size_t> m_neverWritten;
};

/// Simulates with the schedule of `schedule` and the durations of `in` (which must be the input
/// the schedule was compiled from, or one that differs from it only in durations).
SimResult simulate(const SimSchedule& schedule, const SimInput& in);
/// The same into `out`, reusing its storage (no allocation when it held a result of this size).
void simulate(const SimSchedule& schedule, const SimInput& in, SimResult& out);
SimResult simulate(const SimInput& in);

/// Re-simulates from step `from` on, taking steps 1..from-1 from `base`: the complete result of
/// `schedule` for an input that differs from `in` only in durations first read at step `from`
/// or later (a pin changes one buffer's transfers, first read at its firstTransferStep()).
/// Equal, to the bit, to simulate(schedule, in, out) when it returns true. It stops and returns
/// false, with `out` partial, as soon as the stall of steps 2.. (summed in step order) exceeds
/// `stall_limit`: a caller that rejects such a plan need not simulate the rest. from < 2
/// simulates from the start.
bool simulateFrom(const SimSchedule& schedule, const SimInput& in, const SimResult& base,
                  std::size_t from, double stall_limit, SimResult& out);

/// simulateFrom for a caller that needs the stall only (the planner's pin trials), stopping as
/// soon as the rest of the run is known from `base`: at the first step j at or after `settled`
/// (the step after the last that reads a changed duration) where, in both runs, every copy
/// issued before j is done when step j - 1 finishes. Every later event time is then a max of
/// sums of that finish and durations that the two runs share, so each is base's moved by the
/// difference of the two finishes, and each step's stall is base's (up to the rounding of
/// those sums). Returns Shifted with `*removable` = its own stall of steps 2..j-1 plus base's
/// of steps j.. (`out` then holds steps up to j - 1 only), Complete with `*removable` = the
/// removableStall() of the whole trial, or OverLimit where that sum exceeds `stall_limit`.
/// `out`'s steps and sums before step from - 1 are base's, and are not copied (most trials are
/// discarded): a caller that keeps a Complete trial as its simulation takes them with
/// completeTrial, and reads none of them before.
TrialEnd simulateTrial(const SimSchedule& schedule, const SimInput& in, const SimResult& base,
                       std::size_t from, std::size_t settled, double stall_limit, SimResult& out,
                       double* removable);

/// A Complete trial of simulateTrial(schedule, in, base, from, ...) in `out` made whole: equal,
/// to the bit, to simulateFrom's result.
void completeTrial(const SimSchedule& schedule, const SimResult& base, std::size_t from,
                   SimResult& out);

/// An iteration of minibatch k run in S sub-batches (moDNN; analysis/sub_batch.h): S passes of
/// the simulated pass `pass` (the GMAP at its k/S pass samples, simulated with its SGD update), one
/// after the other on the compute stream, then the update once. Each pass loads its own sub-batch
/// and repeats the pass's copies and stalls; the memory peak is the pass's.
struct SubBatchTiming {
  double t_iter = 0;  ///< S x (the pass up to its last backward step) + the pass's update
  /// S x the pass's compute idle time (SimResult::idle): the predicted stall a run measures,
  /// the plan file's stall_s
  double idle = 0;
  double throughput = 0;  ///< k / t_iter samples per second
};
/// S = 1 gives the pass's own figures. Error(Runtime) for S < 1 or a pass without steps.
SubBatchTiming subBatchIteration(const SimResult& pass, std::int64_t k, std::int64_t sub_batches);

}  // namespace swapscope::perf
