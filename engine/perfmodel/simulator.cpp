// SPDX-License-Identifier: MIT
#include "perfmodel/simulator.h"

#include <algorithm>
#include <limits>
#include <string>

#include "common/error.h"

namespace swapscope::perf {

std::vector<int> SimResult::stalled_steps() const {
  std::vector<int> out;
  for (std::size_t j = 1; j < steps.size(); ++j) {
    if (steps[j].stall > 1e-12) out.push_back(static_cast<int>(j));
  }
  return out;
}

double SimResult::removableStall() const {
  double s = 0;
  for (std::size_t j = 2; j < steps.size(); ++j)
    s += steps[j].stall;
  return s;
}

namespace {

/// Time the other direction is busy within [start, end) of a transfer: slows it by the factor.
double duplexSlowdown(const std::vector<BusyInterval>& other, double start, double dur,
                      double factor) {
  if (factor <= 1.0 || dur <= 0) return dur;
  double overlap = 0;
  for (auto it = other.rbegin(); it != other.rend() && it->end > start; ++it) {
    overlap += std::max(0.0, std::min(start + dur, it->end) - std::max(start, it->start));
  }
  return dur + std::min(overlap, dur) * (factor - 1.0);
}

/// When `work` seconds of compute that start at `start` finish, progressing at 1 - `slowdown`
/// while a copy of `a` or `b` runs.
double advance(const std::vector<BusyInterval>& a, const std::vector<BusyInterval>& b, double start,
               double work, double slowdown, std::vector<std::pair<double, double>>& scratch) {
  if (slowdown <= 0 || work <= 0) return start + work;
  scratch.clear();
  for (const auto* list : {&a, &b}) {
    for (auto it = list->rbegin(); it != list->rend() && it->end > start; ++it) {
      if (it->end > it->start) scratch.emplace_back(it->start, it->end);
    }
  }
  if (scratch.empty()) return start + work;
  std::sort(scratch.begin(), scratch.end());
  const double rate = 1.0 - slowdown;
  double t = start, left = work;
  for (std::size_t i = 0; i < scratch.size(); ++i) {
    double lo = scratch[i].first, hi = scratch[i].second;
    while (i + 1 < scratch.size() && scratch[i + 1].first <= hi)
      hi = std::max(hi, scratch[++i].second);
    if (hi <= t) continue;
    lo = std::max(lo, t);
    if (lo - t >= left) return t + left;
    left -= lo - t;
    t = lo;
    if ((hi - t) * rate >= left) return t + left / rate;
    left -= (hi - t) * rate;
    t = hi;
  }
  return t + left;
}

/// Whether a copy of `a` or `b` that started before t still runs at t.
bool copyStartedBefore(const std::vector<BusyInterval>& a, const std::vector<BusyInterval>& b,
                       double t) {
  for (const auto* list : {&a, &b}) {
    for (auto it = list->rbegin(); it != list->rend() && it->end > t; ++it) {
      if (it->start < t) return true;
    }
  }
  return false;
}

/// The end of the latest copy of `a` or `b` that starts in [lo, hi]; lo where none does (each
/// stream's copies are in start order). A copy that takes no time (a pinned FM's, as the planner
/// sets it) does not run.
double copyStartingUntil(const std::vector<BusyInterval>& a, const std::vector<BusyInterval>& b,
                         double lo, double hi) {
  double until = lo;
  for (const auto* list : {&a, &b}) {
    for (auto it = list->rbegin(); it != list->rend() && it->start >= lo; ++it) {
      if (it->start <= hi && it->end > it->start) until = std::max(until, it->end);
    }
  }
  return until;
}

/// The end of the latest copy of `a` or `b` that runs at time t; t where none does.
double copyRunningUntil(const std::vector<BusyInterval>& a, const std::vector<BusyInterval>& b,
                        double t) {
  double until = t;
  for (const auto* list : {&a, &b}) {
    for (auto it = list->rbegin(); it != list->rend() && it->end > t; ++it) {
      if (it->start <= t) until = std::max(until, it->end);
    }
  }
  return until;
}

}  // namespace

SimSchedule::PerStep SimSchedule::group(std::vector<std::pair<int, int>>& stepBuffer,
                                        std::size_t steps) {
  // A stable counting sort by step keeps each step's buffers in GMAP order.
  PerStep p;
  p.start.assign(steps + 2, 0);
  for (const auto& [step, buffer] : stepBuffer)
    ++p.start[static_cast<std::size_t>(step) + 1];
  for (std::size_t s = 1; s < p.start.size(); ++s)
    p.start[s] += p.start[s - 1];
  p.items.resize(stepBuffer.size());
  std::vector<int> fill(p.start.begin(), p.start.end() - 1);
  for (const auto& [step, buffer] : stepBuffer)
    p.items[static_cast<std::size_t>(fill[static_cast<std::size_t>(step)]++)] = buffer;
  return p;
}

SimSchedule::SimSchedule(const SimInput& in) : m_gmap(in.gmap) {
  const Gmap& g = *in.gmap;
  const int n = g.forward_steps;
  m_steps = static_cast<std::size_t>(2 * n + 1);
  // A step opens the prefetches moved to it first, then its own, as the executor issues them
  // (analysis/reuse_delay.h, executionOrder): the swap-in stream runs them in that order.
  std::vector<std::pair<int, int>> opens, ownOpens, reads, offloads, reusable;
  auto isSwappedFm = [&](std::size_t b) {
    const GmapBuffer& buf = g.buffers[b];
    const auto layer = static_cast<std::size_t>(buf.layer);
    return buf.kind == BufferKind::FeatureMap && buf.layer >= 0 && layer < g.swapped.size() &&
           g.swapped[layer];
  };
  for (const GmapOp& op : g.ops) {
    if (op.step < 1 || op.step > 2 * n) continue;
    const auto b = static_cast<std::size_t>(op.buffer);
    switch (op.kind) {
      case GmapOpKind::Prefetch: {
        if (op.step == 1) {  // the minibatch and its labels
          m_loads.push_back(op.buffer);
          break;
        }
        const bool moved = op.step > n && b < in.prefetch_issue.size() && in.prefetch_issue[b] > 0;
        (moved ? opens : ownOpens).emplace_back(moved ? in.prefetch_issue[b] : op.step, op.buffer);
        reads.emplace_back(op.step, op.buffer);
        break;
      }
      case GmapOpKind::Offload:
        offloads.emplace_back(op.step, op.buffer);
        break;
      case GmapOpKind::Release:
        if (op.step <= n && isSwappedFm(b)) {
          reusable.emplace_back(std::min(2 * n + 1, op.step + 1 + in.reuse_delay), op.buffer);
        }
        break;
      default:
        break;
    }
  }
  opens.insert(opens.end(), ownOpens.begin(), ownOpens.end());  // group() keeps this order
  m_firstTransfer.assign(g.buffers.size(), 0);
  m_lastTransfer.assign(g.buffers.size(), 0);
  auto first = [&](int step, int buffer) {
    int& f = m_firstTransfer[static_cast<std::size_t>(buffer)];
    if (f == 0 || step < f) f = step;
    int& l = m_lastTransfer[static_cast<std::size_t>(buffer)];
    l = std::max(l, step);
  };
  for (const int b : m_loads)
    first(1, b);
  for (const auto& [step, buffer] : opens)
    first(step, buffer);
  for (const auto& [step, buffer] : offloads)
    first(step, buffer);
  // A resumed run (resume) keeps the transfer ends its base wrote before the step it resumes at
  // and reads the others only after writing them itself: that holds where every end is written
  // before it is read, in step order. An offload comes strictly before the steps that reuse its
  // memory or open its prefetch, and a prefetch opens no later than the step that reads it.
  // The executor's schedules keep this (movePrefetches never opens a prefetch before the step
  // after its FM's release); a schedule that did not would read an end before its copy was
  // issued, so it is refused here rather than simulated.
  {
    const std::size_t nb = g.buffers.size();
    std::vector<int> offloadAt(nb, 0), openAt(nb, 0);
    const auto earliest = [](int& at, int step) { at = at == 0 ? step : std::min(at, step); };
    for (const auto& [step, buffer] : offloads)
      earliest(offloadAt[static_cast<std::size_t>(buffer)], step);
    for (const auto& [step, buffer] : opens)
      earliest(openAt[static_cast<std::size_t>(buffer)], step);
    const auto refuse = [&](int buffer, const char* what, int step, const char* write, int at) {
      throw Error(ErrorKind::Runtime, "simulator: buffer " + std::to_string(buffer) + " (" +
                                          g.buffers[static_cast<std::size_t>(buffer)].name + ") " +
                                          what + " at step " + std::to_string(step) +
                                          ", before its " + write + " at step " +
                                          std::to_string(at) + " is issued");
    };
    for (const auto& [step, buffer] : reusable) {
      const int at = offloadAt[static_cast<std::size_t>(buffer)];
      if (at > 0 && step <= at) refuse(buffer, "is reused", step, "offload", at);
    }
    for (const auto& [step, buffer] : opens) {
      const int at = offloadAt[static_cast<std::size_t>(buffer)];
      if (at > 0 && step <= at) refuse(buffer, "opens its prefetch", step, "offload", at);
    }
    for (const auto& [step, buffer] : reads) {
      const int at = openAt[static_cast<std::size_t>(buffer)];
      if (at > 0 && step < at) refuse(buffer, "is read", step, "prefetch", at);
    }
  }
  // Which transfer ends are read but never written (see m_neverWritten).
  {
    const std::size_t nb = g.buffers.size();
    std::vector<char> written(2 * nb, 0), read(2 * nb, 0);
    for (const auto& [step, buffer] : offloads)
      written[static_cast<std::size_t>(buffer)] = 1;
    for (const auto& [step, buffer] : opens) {
      written[nb + static_cast<std::size_t>(buffer)] = 1;
      read[static_cast<std::size_t>(buffer)] = 1;
    }
    for (const auto& [step, buffer] : reusable)
      read[static_cast<std::size_t>(buffer)] = 1;
    for (const auto& [step, buffer] : reads)
      read[nb + static_cast<std::size_t>(buffer)] = 1;
    for (std::size_t i = 0; i < 2 * nb; ++i) {
      if (read[i] && !written[i]) m_neverWritten.push_back(i);
    }
  }
  m_opens = group(opens, m_steps);
  m_reads = group(reads, m_steps);
  m_offloads = group(offloads, m_steps);
  m_reusable = group(reusable, m_steps);
}

SimResult simulate(const SimInput& in) {
  return simulate(SimSchedule(in), in);
}

SimResult simulate(const SimSchedule& schedule, const SimInput& in) {
  SimResult r;
  simulate(schedule, in, r);
  return r;
}

void simulate(const SimSchedule& sc, const SimInput& in, SimResult& r) {
  SimSchedule::run(sc, in, r, nullptr, 1, std::numeric_limits<double>::infinity());
}

bool simulateFrom(const SimSchedule& sc, const SimInput& in, const SimResult& base,
                  std::size_t from, double stall_limit, SimResult& out) {
  if (&base == &out) throw Error(ErrorKind::Runtime, "simulateFrom: base and out are one result");
  if (!SimSchedule::resumes(sc, base, from))
    return SimSchedule::run(sc, in, out, nullptr, 1, stall_limit);
  return SimSchedule::run(sc, in, out, &base, from, stall_limit);
}

void completeTrial(const SimSchedule& sc, const SimResult& base, std::size_t from, SimResult& out) {
  if (!SimSchedule::resumes(sc, base, from)) return;  // simulated whole
  const auto n = static_cast<std::ptrdiff_t>(from - 1);
  std::copy(base.steps.begin(), base.steps.begin() + n, out.steps.begin());
  std::copy(base.sums.begin(), base.sums.begin() + n, out.sums.begin());
}

int SimSchedule::firstTransferStep(int buffer) const {
  const auto b = static_cast<std::size_t>(buffer);
  return b < m_firstTransfer.size() ? m_firstTransfer[b] : 0;
}

int SimSchedule::lastTransferStep(int buffer) const {
  const auto b = static_cast<std::size_t>(buffer);
  return b < m_lastTransfer.size() ? m_lastTransfer[b] : 0;
}

TrialEnd simulateTrial(const SimSchedule& sc, const SimInput& in, const SimResult& base,
                       std::size_t from, std::size_t settled, double stall_limit, SimResult& out,
                       double* removable) {
  if (&base == &out) throw Error(ErrorKind::Runtime, "simulateTrial: base and out are one result");
  if (!SimSchedule::resumes(sc, base, from)) {
    const bool complete =
        SimSchedule::run(sc, in, out, nullptr, 1, std::numeric_limits<double>::infinity());
    *removable = out.removableStall();
    return complete && *removable <= stall_limit ? TrialEnd::Complete : TrialEnd::OverLimit;
  }
  std::size_t shiftedAt = 0;
  const bool within = SimSchedule::run(sc, in, out, &base, from, stall_limit,
                                       std::max<std::size_t>(settled, from + 1), &shiftedAt, false);
  if (!within) return TrialEnd::OverLimit;
  if (shiftedAt == 0) {
    *removable = out.sums[sc.m_steps - 1].removable;
    return TrialEnd::Complete;
  }
  *removable = out.sums[shiftedAt - 1].removable +
               (base.sums[sc.m_steps - 1].removable - base.sums[shiftedAt - 1].removable);
  return *removable <= stall_limit ? TrialEnd::Shifted : TrialEnd::OverLimit;
}

void SimSchedule::resume(const SimSchedule& sc, const SimInput& in, const SimResult& base,
                         std::size_t from, SimResult& r, bool prefix) {
  const Gmap& g = *sc.m_gmap;
  const std::size_t steps = sc.m_steps;
  // The base's running sums are kept per step, in the order a whole run adds them.
  const auto first = static_cast<std::ptrdiff_t>(prefix ? 0 : from - 1);
  const auto last = static_cast<std::ptrdiff_t>(from);
  r.steps.resize(steps);
  std::copy(base.steps.begin() + first, base.steps.begin() + last, r.steps.begin() + first);
  auto before = [&](const std::vector<BusyInterval>& all, std::vector<BusyInterval>& out) {
    const auto end = std::partition_point(all.begin(), all.end(), [&](const BusyInterval& x) {
      return static_cast<std::size_t>(x.step) < from;
    });
    out.assign(all.begin(), end);
  };
  before(base.h2d, r.h2d);
  before(base.d2h, r.d2h);
  r.pool.assign(base.pool.begin(),
                base.pool.begin() + static_cast<std::ptrdiff_t>(
                                        std::min(base.pool.size(), in.curve ? from - 1 : 0)));
  r.transfer_end.resize(2 * g.buffers.size());
  for (const std::size_t i : sc.m_neverWritten)
    r.transfer_end[i] = 0;
  for (const std::vector<BusyInterval>* list : {&r.h2d, &r.d2h}) {
    const std::size_t half = list == &r.h2d ? g.buffers.size() : 0;
    for (const BusyInterval& x : *list) {
      const std::size_t i = half + static_cast<std::size_t>(x.buffer);
      r.transfer_end[i] = base.transfer_end[i];
    }
  }
  r.sums.resize(steps);
  std::copy(base.sums.begin() + first, base.sums.begin() + last, r.sums.begin() + first);
  r.stall = r.sums[from - 1].stall;
  r.dispatch = r.sums[from - 1].dispatch;
}

bool SimSchedule::run(const SimSchedule& sc, const SimInput& in, SimResult& r,
                      const SimResult* base, std::size_t from, double stallLimit,
                      std::size_t settled, std::size_t* shiftedAt, bool prefix) {
  const Gmap& g = *sc.m_gmap;
  const std::size_t steps = sc.m_steps;
  if (in.gmap != sc.m_gmap || in.step_seconds.size() < steps ||
      in.offload_seconds.size() < g.buffers.size() ||
      in.prefetch_seconds.size() < g.buffers.size()) {
    throw Error(ErrorKind::Runtime, "simulate: the inputs do not match the GMAP");
  }
  double ci = 0, co = 0, cc = 0;  // stream clocks: swap-in, swap-out, compute
  double loaded = 0;
  double removable = 0;  // removableStall(), summed in the same order
  const double d = in.dispatch_seconds;
  const double dWoken = in.dispatch_woken_seconds < 0 ? d : in.dispatch_woken_seconds;
  if (base) {
    resume(sc, in, *base, from, r, prefix);
    removable = r.sums[from - 1].removable;
    ci = r.h2d.empty() ? 0.0 : r.h2d.back().end;
    co = r.d2h.empty() ? 0.0 : r.d2h.back().end;
    cc = r.steps[from - 1].finish;
  } else {
    r.steps.assign(steps, {});
    r.h2d.clear();
    r.d2h.clear();
    r.pool.clear();
    r.stall = 0;
    r.dispatch = 0;
    // Per buffer: when its offload and its prefetch end (scratch kept in the result's storage).
    r.transfer_end.assign(2 * g.buffers.size(), 0.0);
    r.sums.assign(steps, {});
  }
  r.h2d.reserve(sc.m_loads.size() + sc.m_opens.items.size());
  r.d2h.reserve(sc.m_offloads.items.size());
  if (in.curve) r.pool.reserve(steps + 1);
  double* offloadEnd = r.transfer_end.data();
  double* prefetchEnd = offloadEnd + g.buffers.size();
  auto each = [](const SimSchedule::PerStep& p, std::size_t s, auto&& f) {
    for (int i = p.start[s]; i < p.start[s + 1]; ++i)
      f(p.items[static_cast<std::size_t>(i)]);
  };

  const bool yields = in.copy_start_block >= 0.5;
  const bool besideOff = in.offload_beside_seconds.size() >= g.buffers.size();
  const bool besidePre = in.prefetch_beside_seconds.size() >= g.buffers.size();
  // Whether a copy starting at `start` runs beside compute: not where compute yields to it and
  // it starts while compute waits for its next step (compute clock `c` plus the hand-off).
  auto beside = [&](double start, double c) { return !yields || start < c || start > c + d; };
  std::vector<std::pair<double, double>> scratch;
  if (!base) {
    for (const int b : sc.m_loads) {
      const double dur = in.prefetch_seconds[static_cast<std::size_t>(b)];
      r.h2d.push_back({ci, ci + dur, b, 1});
      ci += dur;
      loaded = ci;
    }
  }
  for (std::size_t j = from; j < steps; ++j) {
    const double prevFinish = j == 1 ? 0.0 : r.steps[j - 1].finish;
    if (settled > 0 && j >= settled && j >= 2 && ci <= prevFinish && co <= prevFinish) {
      const SimResult::Sums& b = base->sums[j - 1];
      const double baseFinish = base->steps[j - 1].finish;
      if (b.in_clock <= baseFinish && b.out_clock <= baseFinish) {
        *shiftedAt = j;
        return true;
      }
    }
    double memReady = 0;
    each(sc.m_reusable, j,
         [&](int b) { memReady = std::max(memReady, offloadEnd[static_cast<std::size_t>(b)]); });
    each(sc.m_opens, j, [&](int b) {
      const auto bb = static_cast<std::size_t>(b);
      const double start = std::max({ci, prevFinish, offloadEnd[bb], memReady});
      const double alone =
          besidePre && beside(start, cc) ? in.prefetch_beside_seconds[bb] : in.prefetch_seconds[bb];
      const double dur = duplexSlowdown(r.d2h, start, alone, in.duplex_factor);
      prefetchEnd[bb] = start + dur;
      ci = prefetchEnd[bb];
      r.h2d.push_back({start, ci, b, static_cast<int>(j)});
    });
    double ready = j == 1 ? loaded : 0.0;
    each(sc.m_reads, j,
         [&](int b) { ready = std::max(ready, prefetchEnd[static_cast<std::size_t>(b)]); });
    StepTiming& t = r.steps[j];
    t.ready = ready;
    // The stall is the wait beyond the plain hand-off: for data or memory, and what a copy or
    // a wake-up adds to the hand-off. It sums non-negative terms, so that partial sums never
    // exceed the whole (simulateFrom's stall limit).
    const double could = std::max({cc, ready, memReady});
    const double nominal = could + d;
    double extra = 0;
    if (copyStartedBefore(r.h2d, r.d2h, could)) {
      if (in.start_block > 0)
        extra = in.start_block * (copyRunningUntil(r.h2d, r.d2h, nominal) - nominal);
    } else if (const double until = copyStartingUntil(r.h2d, r.d2h, could, nominal);
               until > could) {
      if (until > nominal)
        extra = std::max(0.0, in.copy_start_wait + in.copy_start_block * (until - nominal));
    } else if (could > cc) {
      extra = std::max(0.0, dWoken - d);
    }
    t.dispatch = d;
    t.start = could + d + extra;
    t.stall = (could - cc) + extra;
    t.finish = advance(r.h2d, r.d2h, t.start, in.step_seconds[j], in.slowdown, scratch);
    cc = t.finish;
    r.stall += t.stall;
    r.dispatch += d;
    if (j >= 2) {
      removable += t.stall;
      if (removable > stallLimit) return false;
    }
    each(sc.m_offloads, j, [&](int b) {
      const auto bb = static_cast<std::size_t>(b);
      const double start = std::max(co, t.finish);
      const double alone =
          besideOff && beside(start, cc) ? in.offload_beside_seconds[bb] : in.offload_seconds[bb];
      const double dur = duplexSlowdown(r.h2d, start, alone, in.duplex_factor);
      offloadEnd[bb] = start + dur;
      co = offloadEnd[bb];
      r.d2h.push_back({start, co, b, static_cast<int>(j)});
    });
    r.sums[j] = {r.stall, r.dispatch, removable, ci, co};
    if (in.curve) r.pool.emplace_back(t.start, in.curve->resident[j].at(in.k));
  }
  r.update_dispatch = d * in.update_tasks;
  cc += in.update_seconds + r.update_dispatch;
  r.t_iter = std::max({cc, ci, co});
  if (in.curve) r.pool.emplace_back(r.t_iter, in.curve->persistent.at(in.k));
  r.throughput = r.t_iter > 0 ? static_cast<double>(in.k) / r.t_iter : 0;
  return true;
}

SubBatchTiming subBatchIteration(const SimResult& pass, std::int64_t k, std::int64_t sub_batches) {
  if (sub_batches < 1 || pass.steps.size() < 2) {
    throw Error(ErrorKind::Runtime, "subBatchIteration: " + std::to_string(sub_batches) +
                                        " sub-batches of a pass with " +
                                        std::to_string(pass.steps.size()) + " steps");
  }
  const double passes = static_cast<double>(sub_batches);
  // The pass's update (and whatever a stream still drains) follows its last backward step.
  const double body = pass.steps.back().finish;
  SubBatchTiming t;
  t.t_iter = sub_batches == 1 ? pass.t_iter : passes * body + (pass.t_iter - body);
  t.idle = passes * pass.idle();
  t.throughput = t.t_iter > 0 ? static_cast<double>(k) / t.t_iter : 0.0;
  return t;
}

}  // namespace swapscope::perf
