// SPDX-License-Identifier: MIT
#include "analysis/reuse_delay.h"

#include <algorithm>

namespace swapscope {

std::vector<GmapOp> executionOrder(const Gmap& gmap, const std::vector<int>& move_to) {
  const int n = gmap.forward_steps;
  auto moved = [&](int buffer) {
    return buffer >= 0 && static_cast<std::size_t>(buffer) < move_to.size() &&
           move_to[static_cast<std::size_t>(buffer)] != 0;
  };
  // Per step, the prefetches moved to it, in backward (GMAP) order.
  std::vector<std::vector<int>> hoistAt(static_cast<std::size_t>(2 * n + 2));
  for (const GmapOp& op : gmap.ops) {
    if (op.kind == GmapOpKind::Prefetch && op.step > n && moved(op.buffer))
      hoistAt[static_cast<std::size_t>(move_to[static_cast<std::size_t>(op.buffer)])].push_back(
          op.buffer);
  }
  std::vector<GmapOp> out;
  out.reserve(gmap.ops.size());
  for (const GmapOp& op : gmap.ops) {
    if (op.step == 0) out.push_back(op);
  }
  int current = 0;
  for (const GmapOp& op : gmap.ops) {
    if (op.step < 1 || op.step > 2 * n) continue;
    if (op.step != current) {
      current = op.step;
      for (const int b : hoistAt[static_cast<std::size_t>(current)]) {
        out.push_back({GmapOpKind::Allocate, current, b});
        out.push_back({GmapOpKind::Prefetch, current, b});
      }
    }
    const bool isMoved = op.step > n && moved(op.buffer) &&
                         (op.kind == GmapOpKind::Allocate || op.kind == GmapOpKind::Prefetch);
    if (!isMoved) out.push_back(op);
  }
  return out;
}

std::vector<std::size_t> delayedReleaseEnds(const Gmap& gmap, const std::vector<GmapOp>& ops,
                                            int delay) {
  std::vector<std::size_t> ends(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i)
    ends[i] = i;
  if (delay <= 0) return ends;
  // The first op index of every step (a step without ops: the next step's first).
  std::vector<std::size_t> stepStart(static_cast<std::size_t>(gmap.steps() + 3), ops.size());
  for (std::size_t i = ops.size(); i-- > 0;)
    stepStart[static_cast<std::size_t>(ops[i].step)] = i;
  for (std::size_t s = stepStart.size() - 1; s-- > 0;)
    stepStart[s] = std::min(stepStart[s], stepStart[s + 1]);
  std::vector<bool> offloaded(gmap.buffers.size(), false);
  for (const GmapOp& op : ops) {
    if (op.kind == GmapOpKind::Offload) offloaded[static_cast<std::size_t>(op.buffer)] = true;
  }
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const GmapOp& op = ops[i];
    if (op.kind != GmapOpKind::Release || !offloaded[static_cast<std::size_t>(op.buffer)]) continue;
    const auto s = static_cast<std::size_t>(std::min(op.step + delay, gmap.steps() + 2));
    ends[i] = std::max(i, stepStart[s]);
  }
  return ends;
}

std::int64_t delayedPeak(const Gmap& gmap, const std::vector<GmapOp>& ops, std::int64_t k,
                         int delay, std::int64_t alignment) {
  const std::int64_t a = std::max<std::int64_t>(1, alignment);
  auto bytes = [&](int buffer) {
    const std::int64_t b = gmap.buffers[static_cast<std::size_t>(buffer)].size.at(k);
    return (b + a - 1) / a * a;
  };
  // Each allocation lives from its op to its release's op (or to the end), a delayed release
  // to the first op of step release + delay.
  const std::vector<std::size_t> ends = delayedReleaseEnds(gmap, ops, delay);
  // The bytes freed at each op index (before that op runs).
  std::vector<std::int64_t> freedAt(ops.size() + 1, 0);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind == GmapOpKind::Release) freedAt[ends[i]] += bytes(ops[i].buffer);
  }
  std::int64_t inUse = 0, peak = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    inUse -= freedAt[i];
    const GmapOp& op = ops[i];
    if (op.kind == GmapOpKind::Allocate) {
      inUse += bytes(op.buffer);
      peak = std::max(peak, inUse);
    }
  }
  return peak;
}

std::vector<std::pair<int, std::int64_t>> delayedPeaks(const Gmap& gmap,
                                                       const std::vector<GmapOp>& ops,
                                                       std::int64_t k, std::int64_t alignment) {
  std::vector<std::pair<int, std::int64_t>> peaks;
  const bool offloads = std::any_of(
      ops.begin(), ops.end(), [](const GmapOp& op) { return op.kind == GmapOpKind::Offload; });
  if (!offloads) return peaks;
  for (const int delay : kReuseDelays) {
    if (delay > 0) peaks.emplace_back(delay, delayedPeak(gmap, ops, k, delay, alignment));
  }
  return peaks;
}

int firstFittingDelay(const std::vector<std::pair<int, std::int64_t>>& delayed_peaks,
                      std::int64_t budget) {
  for (const auto& [delay, peak] : delayed_peaks) {
    if (peak <= budget) return delay;
  }
  return 0;
}

int chooseReuseDelay(const Gmap& gmap, const std::vector<GmapOp>& ops, std::int64_t k,
                     std::int64_t budget, std::int64_t alignment) {
  return firstFittingDelay(delayedPeaks(gmap, ops, k, alignment), budget);
}

}  // namespace swapscope
