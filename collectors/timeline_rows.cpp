// SPDX-License-Identifier: MIT
#include "collectors/timeline_rows.h"

#include <algorithm>
#include <utility>

namespace swapscope::collect {
namespace {

using Interval = std::pair<std::int64_t, std::int64_t>;

/// Time within [lo, hi) covered by `busy` (sorted, non-overlapping: one stream's tasks).
std::int64_t covered(const std::vector<Interval>& busy, std::int64_t lo, std::int64_t hi) {
  auto it = std::lower_bound(busy.begin(), busy.end(), lo,
                             [](const Interval& b, std::int64_t t) { return b.second <= t; });
  std::int64_t total = 0;
  for (; it != busy.end() && it->first < hi; ++it) {
    total += std::max<std::int64_t>(0, std::min(hi, it->second) - std::max(lo, it->first));
  }
  return total;
}

/// The intervals of the copies on the swap streams, merged into a sorted disjoint union.
std::vector<Interval> copyUnion(const rt::IterationRecord& rec) {
  std::vector<Interval> copies;
  for (const rt::TimelineOp& op : rec.ops) {
    if (op.stream != rt::StreamKind::Compute && op.end_ns > op.start_ns)
      copies.emplace_back(op.start_ns, op.end_ns);
  }
  std::sort(copies.begin(), copies.end());
  std::vector<Interval> merged;
  for (const Interval& c : copies) {
    if (!merged.empty() && c.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, c.second);
    } else {
      merged.push_back(c);
    }
  }
  return merged;
}

}  // namespace

std::vector<std::int64_t> dispatchGaps(const rt::IterationRecord& rec) {
  const std::vector<Interval> copies = copyUnion(rec);
  std::vector<std::int64_t> gaps;
  std::int64_t computeFree = -1;  // the previous compute-stream task's end; -1: none yet
  for (const rt::TimelineOp& op : rec.ops) {
    if (op.stream != rt::StreamKind::Compute) continue;
    const bool step = op.kind == rt::TaskKind::Compute && op.step >= 1 &&
                      rec.passStep(op.sub_batch, op.step) < rec.ready_ns.size();
    if ((step || op.kind == rt::TaskKind::Update) && computeFree >= 0) {
      const std::int64_t ready =
          step ? std::max(computeFree, rec.ready_ns[rec.passStep(op.sub_batch, op.step)])
               : computeFree;
      // A copy running when the step could start may hold it back (the CPU backend's copies
      // share its cores): that gap is contention, not dispatch.
      if (op.start_ns >= ready && covered(copies, ready, ready + 1) == 0)
        gaps.push_back(op.start_ns - ready);
    }
    computeFree = std::max(computeFree, op.end_ns);
  }
  return gaps;
}

store::IterationRows iterationRows(const rt::IterationRecord& rec, const RowContext& ctx) {
  const Gmap& gmap = *ctx.gmap;
  const std::vector<LayerCost>& costs = *ctx.costs;
  const std::int64_t origin = rec.start_ns - ctx.run_start_ns;
  const int n = gmap.forward_steps;
  // A minibatch run in sub-batches runs each step once per pass, on its k/S pass samples.
  const std::int64_t passSamples = ctx.k / std::max(1, rec.sub_batches);

  store::IterationRows rows;
  rows.iteration = {.k = ctx.k,
                    .iteration = ctx.iteration,
                    .start_ns = origin,
                    .duration_ns = rec.duration_ns,
                    .loss = static_cast<double>(rec.loss),
                    .stall_ns = rec.stall_total_ns,
                    .offload_bytes = rec.offload_bytes,
                    .prefetch_bytes = rec.prefetch_bytes,
                    .load_bytes = rec.load_bytes};

  std::vector<Interval> busy;
  for (const rt::TimelineOp& op : rec.ops) {
    if (op.stream == rt::StreamKind::Compute) busy.emplace_back(op.start_ns, op.end_ns);
  }
  std::sort(busy.begin(), busy.end());
  const std::vector<Interval> copies = copyUnion(rec);

  // The minibatch load: the labels, and the input FM at step 1. The input FM's later prefetch
  // (swap-all swaps the minibatch too) is a prefetch like any other.
  auto isLoad = [&](const rt::TimelineOp& op) {
    const GmapBuffer& b = gmap.buffers.at(static_cast<std::size_t>(op.buffer));
    return b.kind == BufferKind::Labels ||
           (op.step == 1 && b.kind == BufferKind::FeatureMap && b.layer == ctx.net->inputLayer());
  };

  for (const rt::TimelineOp& op : rec.ops) {
    switch (op.kind) {
      case rt::TaskKind::Compute: {
        if (op.step < 1 || op.step > 2 * n) break;
        const int layer = gmap.step_layer.at(static_cast<std::size_t>(op.step));
        const LayerCost& c = costs.at(static_cast<std::size_t>(layer));
        const bool bwd = gmap.isBackwardStep(op.step);
        // This pass's own stall and t_ready (each pass of a sub-batched iteration is a row).
        const std::size_t at = rec.passStep(op.sub_batch, op.step);
        rows.samples.push_back(
            {.k = ctx.k,
             .iteration = ctx.iteration,
             .step = op.step,
             .layer = layer,
             .direction = bwd ? store::Direction::Backward : store::Direction::Forward,
             .flops = passSamples * (bwd ? c.bwd_data_flops + c.bwd_weight_flops : c.fwd_flops),
             .start_ns = origin + op.start_ns,
             .time_ns = op.end_ns - op.start_ns,
             .stall_ns = rec.pass_stall_ns.at(at),
             .ready_ns = origin + (at < rec.ready_ns.size() ? rec.ready_ns[at] : 0),
             .copy_overlap_ns = covered(copies, op.start_ns, op.end_ns)});
        break;
      }
      case rt::TaskKind::Recompute: {
        // A layer run forward again inside a backward step: its own row, never a step's sample.
        if (op.step <= n || op.step > 2 * n || op.buffer < 0) break;
        const int layer = gmap.buffers.at(static_cast<std::size_t>(op.buffer)).layer;
        rows.recomputes.push_back(
            {.k = ctx.k,
             .iteration = ctx.iteration,
             .step = op.step,
             .layer = layer,
             .flops = passSamples * costs.at(static_cast<std::size_t>(layer)).fwd_flops,
             .start_ns = origin + op.start_ns,
             .time_ns = op.end_ns - op.start_ns});
        break;
      }
      case rt::TaskKind::Update: {
        if (op.step != 2 * n + 1 || op.buffer < 0) break;
        const int layer = gmap.buffers.at(static_cast<std::size_t>(op.buffer)).layer;
        const std::int64_t params =
            layer >= 0 ? costs.at(static_cast<std::size_t>(layer)).params : 0;
        rows.samples.push_back({.k = ctx.k,
                                .iteration = ctx.iteration,
                                .step = op.step,
                                .layer = layer,
                                .direction = store::Direction::Update,
                                .flops = params * kSgdFlopsPerParam,
                                .start_ns = origin + op.start_ns,
                                .time_ns = op.end_ns - op.start_ns,
                                .stall_ns = 0,
                                .ready_ns = origin,
                                .copy_overlap_ns = covered(copies, op.start_ns, op.end_ns)});
        break;
      }
      case rt::TaskKind::Offload:
      case rt::TaskKind::Prefetch:
      case rt::TaskKind::Readback: {
        store::TransferRow t;
        t.k = ctx.k;
        t.iteration = ctx.iteration;
        t.kind = op.kind == rt::TaskKind::Offload    ? store::TransferKind::Offload
                 : op.kind == rt::TaskKind::Readback ? store::TransferKind::Readback
                 : isLoad(op)                        ? store::TransferKind::Load
                                                     : store::TransferKind::Prefetch;
        t.to_host = op.kind != rt::TaskKind::Prefetch;
        t.tensor = op.buffer;
        t.step = op.step;
        t.bytes = op.bytes;
        t.start_ns = origin + op.start_ns;
        t.end_ns = origin + op.end_ns;
        t.pinned = ctx.page_locked;
        // A copy on the compute stream itself never runs beside compute.
        t.overlap_ns =
            op.stream == rt::StreamKind::Compute ? 0 : covered(busy, op.start_ns, op.end_ns);
        rows.transfers.push_back(t);
        break;
      }
    }
  }
  if (ctx.memory) {
    for (const rt::PoolSample& p : rec.pool) {
      rows.memory.push_back({.k = ctx.k,
                             .iteration = ctx.iteration,
                             .time_ns = origin + p.time_ns,
                             .in_use = p.in_use});
    }
  }
  return rows;
}

std::int64_t medianDispatch(const std::vector<std::vector<std::int64_t>>& gaps) {
  std::vector<std::int64_t> all;
  for (const auto& g : gaps)
    all.insert(all.end(), g.begin(), g.end());
  if (all.empty()) return -1;
  const auto mid = all.begin() + static_cast<std::ptrdiff_t>(all.size() / 2);
  std::nth_element(all.begin(), mid, all.end());
  return *mid;
}

}  // namespace swapscope::collect
