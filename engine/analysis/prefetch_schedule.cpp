// SPDX-License-Identifier: MIT
#include "analysis/prefetch_schedule.h"

#include <algorithm>

namespace swapscope {

PrefetchMoves movePrefetches(const Gmap& gmap, const MemoryCurve& curve, std::int64_t k,
                             std::int64_t cap) {
  const int n = gmap.forward_steps;
  PrefetchMoves h;
  h.move_to.assign(gmap.buffers.size(), 0);
  std::vector<int> releasedAt(gmap.buffers.size(), 0);
  for (const GmapOp& op : gmap.ops) {
    if (op.kind == GmapOpKind::Release && op.step <= n) {
      releasedAt[static_cast<std::size_t>(op.buffer)] = op.step;
    }
  }
  std::vector<std::int64_t> extra(static_cast<std::size_t>(2 * n + 2), 0);
  int lower = 1;
  for (const GmapOp& op : gmap.ops) {
    if (op.kind != GmapOpKind::Prefetch || op.step <= n) continue;
    const auto b = static_cast<std::size_t>(op.buffer);
    const std::int64_t size = gmap.buffers[b].size.at(k);
    int best = op.step;
    for (int s = op.step - 1; s >= std::max(lower, releasedAt[b] + 1); --s) {
      if (curve.resident[static_cast<std::size_t>(s)].at(k) + extra[static_cast<std::size_t>(s)] +
              size >
          cap) {
        break;
      }
      best = s;
    }
    for (int s = best; s < op.step; ++s)
      extra[static_cast<std::size_t>(s)] += size;
    lower = best;
    if (best != op.step) {
      h.move_to[b] = best;
      ++h.moved;
    }
  }
  return h;
}

}  // namespace swapscope
