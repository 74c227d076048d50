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
  // Per step s, the prefetches moved to it, in backward (GMAP) order:
  // opened[first[s] .. first[s + 1]) (a stable counting sort by step).
  auto movedPrefetch = [&](const GmapOp& op) {
    return op.kind == GmapOpKind::Prefetch && op.step > n && moved(op.buffer);
  };
  auto target = [&](const GmapOp& op) {
    return static_cast<std::size_t>(move_to[static_cast<std::size_t>(op.buffer)]);
  };
  std::vector<std::size_t> first(static_cast<std::size_t>(2 * n + 3), 0);
  for (const GmapOp& op : gmap.ops) {
    if (movedPrefetch(op)) ++first[target(op) + 1];
  }
  for (std::size_t s = 1; s < first.size(); ++s)
    first[s] += first[s - 1];
  std::vector<int> opened(first.back());
  std::vector<std::size_t> fill(first.begin(), first.end() - 1);
  for (const GmapOp& op : gmap.ops) {
    if (movedPrefetch(op)) opened[fill[target(op)]++] = op.buffer;
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
      const auto s = static_cast<std::size_t>(current);
      for (std::size_t i = first[s]; i < first[s + 1]; ++i) {
        out.push_back({GmapOpKind::Allocate, current, opened[i]});
        out.push_back({GmapOpKind::Prefetch, current, opened[i]});
      }
    }
    const bool isMoved = op.step > n && moved(op.buffer) &&
                         (op.kind == GmapOpKind::Allocate || op.kind == GmapOpKind::Prefetch);
    if (!isMoved) out.push_back(op);
  }
  return out;
}

namespace {

/// What the lifetime rule of delayed releases reads from an op order, whatever the delay: the
/// first op index of every step and which buffers are offloaded.
struct ReleaseRule {
  ReleaseRule(const Gmap& gmap, const std::vector<GmapOp>& ops)
      : lastStep(gmap.steps() + 2),
        stepStart(static_cast<std::size_t>(gmap.steps() + 3), ops.size()),
        offloaded(gmap.buffers.size(), false) {
    for (std::size_t i = ops.size(); i-- > 0;)
      stepStart[static_cast<std::size_t>(ops[i].step)] = i;
    // A step without ops: the next step's first.
    for (std::size_t s = stepStart.size() - 1; s-- > 0;)
      stepStart[s] = std::min(stepStart[s], stepStart[s + 1]);
    for (const GmapOp& op : ops) {
      if (op.kind == GmapOpKind::Offload) offloaded[static_cast<std::size_t>(op.buffer)] = true;
    }
  }
  /// The op index from which the bytes op i releases are free again (see delayedReleaseEnds).
  std::size_t end(std::size_t i, const GmapOp& op, int delay) const {
    if (delay <= 0 || op.kind != GmapOpKind::Release ||
        !offloaded[static_cast<std::size_t>(op.buffer)]) {
      return i;
    }
    return std::max(i, stepStart[static_cast<std::size_t>(std::min(op.step + delay, lastStep))]);
  }
  int lastStep;
  std::vector<std::size_t> stepStart;
  std::vector<bool> offloaded;
};

/// The high-water mark of `ops` under the rule at `delay`, with each buffer's bytes
/// `bytes[buffer]`; `freedAt` is scratch.
std::int64_t peakUnder(const ReleaseRule& rule, const std::vector<GmapOp>& ops, int delay,
                       const std::vector<std::int64_t>& bytes, std::vector<std::int64_t>& freedAt) {
  // Each allocation lives from its op to its release's end (or to the end of the order).
  freedAt.assign(ops.size() + 1, 0);  // the bytes freed at each op index, before that op runs
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind == GmapOpKind::Release)
      freedAt[rule.end(i, ops[i], delay)] += bytes[static_cast<std::size_t>(ops[i].buffer)];
  }
  std::int64_t inUse = 0, peak = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    inUse -= freedAt[i];
    const GmapOp& op = ops[i];
    if (op.kind == GmapOpKind::Allocate) {
      inUse += bytes[static_cast<std::size_t>(op.buffer)];
      peak = std::max(peak, inUse);
    }
  }
  return peak;
}

/// Every buffer's bytes at k, rounded up to `alignment` as the pool places them.
std::vector<std::int64_t> alignedBytes(const Gmap& gmap, std::int64_t k, std::int64_t alignment) {
  const std::int64_t a = std::max<std::int64_t>(1, alignment);
  std::vector<std::int64_t> bytes(gmap.buffers.size());
  for (std::size_t b = 0; b < bytes.size(); ++b)
    bytes[b] = (gmap.buffers[b].size.at(k) + a - 1) / a * a;
  return bytes;
}

}  // namespace

std::vector<std::size_t> delayedReleaseEnds(const Gmap& gmap, const std::vector<GmapOp>& ops,
                                            int delay) {
  const ReleaseRule rule(gmap, ops);
  std::vector<std::size_t> ends(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i)
    ends[i] = rule.end(i, ops[i], delay);
  return ends;
}

std::int64_t delayedPeak(const Gmap& gmap, const std::vector<GmapOp>& ops, std::int64_t k,
                         int delay, std::int64_t alignment) {
  std::vector<std::int64_t> scratch;
  return peakUnder(ReleaseRule(gmap, ops), ops, delay, alignedBytes(gmap, k, alignment), scratch);
}

std::vector<std::pair<int, std::int64_t>> delayedPeaks(const Gmap& gmap,
                                                       const std::vector<GmapOp>& ops,
                                                       std::int64_t k, std::int64_t alignment) {
  std::vector<std::pair<int, std::int64_t>> peaks;
  const bool offloads = std::any_of(
      ops.begin(), ops.end(), [](const GmapOp& op) { return op.kind == GmapOpKind::Offload; });
  if (!offloads) return peaks;
  // The rule's tables and the sizes are the same for every delay: made once.
  const ReleaseRule rule(gmap, ops);
  const std::vector<std::int64_t> bytes = alignedBytes(gmap, k, alignment);
  std::vector<std::int64_t> scratch;
  for (const int delay : kReuseDelays) {
    if (delay > 0) peaks.emplace_back(delay, peakUnder(rule, ops, delay, bytes, scratch));
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
