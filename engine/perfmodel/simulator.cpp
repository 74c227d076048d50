// SPDX-License-Identifier: MIT
#include "perfmodel/simulator.h"

#include <algorithm>

#include "common/error.h"

namespace swapscope::perf {

std::vector<int> SimResult::stalled_steps() const {
  std::vector<int> out;
  for (std::size_t j = 1; j < steps.size(); ++j) {
    if (steps[j].stall > 1e-12) out.push_back(static_cast<int>(j));
  }
  return out;
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

}  // namespace

SimResult simulate(const SimInput& in) {
  const Gmap& g = *in.gmap;
  const int n = g.forward_steps;
  const auto steps = static_cast<std::size_t>(2 * n + 1);
  if (in.step_seconds.size() < steps || in.offload_seconds.size() < g.buffers.size() ||
      in.prefetch_seconds.size() < g.buffers.size()) {
    throw Error(ErrorKind::Runtime, "simulate: the inputs do not match the GMAP");
  }
  SimResult r;
  r.steps.assign(steps, {});
  std::vector<double> offloadEnd(g.buffers.size(), 0.0), prefetchEnd(g.buffers.size(), 0.0);
  // Per step: prefetches it opens (issue), prefetches it reads, offloads after it, FMs whose
  // memory becomes reusable before it.
  std::vector<std::vector<int>> opens(steps + 1), reads(steps + 1), offloads(steps + 1),
      reusable(steps + 2);
  std::vector<int> loads;
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
          loads.push_back(op.buffer);
          break;
        }
        const int issue =
            !in.prefetch_issue.empty() && in.prefetch_issue[b] > 0 ? in.prefetch_issue[b] : op.step;
        opens[static_cast<std::size_t>(issue)].push_back(op.buffer);
        reads[static_cast<std::size_t>(op.step)].push_back(op.buffer);
        break;
      }
      case GmapOpKind::Offload:
        offloads[static_cast<std::size_t>(op.step)].push_back(op.buffer);
        break;
      case GmapOpKind::Release:
        if (op.step <= n && isSwappedFm(b)) {
          const auto at =
              static_cast<std::size_t>(std::min(2 * n + 1, op.step + 1 + in.reuse_delay));
          reusable[at].push_back(op.buffer);
        }
        break;
      default:
        break;
    }
  }

  double ci = 0, co = 0, cc = 0;  // stream clocks: swap-in, swap-out, compute
  double loaded = 0;
  for (const int b : loads) {
    const double dur = in.prefetch_seconds[static_cast<std::size_t>(b)];
    r.h2d.push_back({ci, ci + dur, b, 1});
    ci += dur;
    loaded = ci;
  }
  for (std::size_t j = 1; j < steps; ++j) {
    const double prevFinish = j == 1 ? 0.0 : r.steps[j - 1].finish;
    double memReady = 0;
    for (const int b : reusable[j])
      memReady = std::max(memReady, offloadEnd[static_cast<std::size_t>(b)]);
    for (const int b : opens[j]) {
      const auto bb = static_cast<std::size_t>(b);
      const double start = std::max({ci, prevFinish, offloadEnd[bb], memReady});
      const double dur = duplexSlowdown(r.d2h, start, in.prefetch_seconds[bb], in.duplex_factor);
      prefetchEnd[bb] = start + dur;
      ci = prefetchEnd[bb];
      r.h2d.push_back({start, ci, b, static_cast<int>(j)});
    }
    double ready = j == 1 ? loaded : 0.0;
    for (const int b : reads[j])
      ready = std::max(ready, prefetchEnd[static_cast<std::size_t>(b)]);
    StepTiming& t = r.steps[j];
    t.ready = ready;
    t.start = std::max({cc, ready, memReady});
    t.stall = t.start - cc;
    t.finish = t.start + in.step_seconds[j];
    cc = t.finish;
    r.stall += t.stall;
    for (const int b : offloads[j]) {
      const auto bb = static_cast<std::size_t>(b);
      const double start = std::max(co, t.finish);
      const double dur = duplexSlowdown(r.h2d, start, in.offload_seconds[bb], in.duplex_factor);
      offloadEnd[bb] = start + dur;
      co = offloadEnd[bb];
      r.d2h.push_back({start, co, b, static_cast<int>(j)});
    }
    if (in.curve) r.pool.emplace_back(t.start, in.curve->resident[j].at(in.k));
  }
  cc += in.update_seconds;
  r.t_iter = std::max({cc, ci, co});
  if (in.curve) r.pool.emplace_back(r.t_iter, in.curve->persistent.at(in.k));
  r.throughput = r.t_iter > 0 ? static_cast<double>(in.k) / r.t_iter : 0;
  return r;
}

}  // namespace swapscope::perf
