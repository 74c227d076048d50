// SPDX-License-Identifier: MIT
/// @brief The step timer and memory-event recorder: turns one iteration's timeline from the swap
/// executor into run-database rows (compute samples, transfers, pool bytes).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/gmap.h"
#include "analysis/layer_cost.h"
#include "graph/network.h"
#include "runtime/executor.h"
#include "store/run_db.h"

namespace swapscope::collect {

struct RowContext {
  const Network* net = nullptr;
  const Gmap* gmap = nullptr;
  const std::vector<LayerCost>* costs = nullptr;
  std::int64_t k = 0;
  int iteration = 0;
  std::int64_t run_start_ns = 0;  ///< device clock at the run's start: every time is relative
  bool page_locked = false;       ///< whether host memory is page-locked
  bool memory = true;             ///< also record the pool bytes over time
};

/// Rows of one iteration:
/// - a sample per compute step (FLOPs at k, time, stall before it, t_ready, time beside a copy)
///   and per layer's SGD update. An iteration in S sub-batches has a sample per step and pass,
///   each at the iteration's k with the FLOPs of its k/S pass samples and that pass's own stall
///   and t_ready (PerfModel::fit counts the passes and fits them at k/S);
/// - a recompute row per layer run forward again in a backward step (its forward FLOPs at k, or
///   at the pass samples in sub-batches);
/// - a transfer per offload, prefetch, minibatch load and loss readback, with the time it ran
///   beside compute;
/// - the pool bytes in use over time, when `ctx.memory`.
store::IterationRows iterationRows(const rt::IterationRecord& rec, const RowContext& ctx);

/// The compute stream's hand-off cost in one iteration: for every step, the gap between the
/// moment it could start (the previous compute task's end or its t_ready, whichever is later)
/// and its start, where no copy was running at that moment (a copy then may hold the step back,
/// which is contention, not hand-off). Measured the same way on every backend.
std::vector<std::int64_t> dispatchGaps(const rt::IterationRecord& rec);

/// The median of the gaps of `recs` (dispatchGaps); -1 when there are none.
std::int64_t medianDispatch(const std::vector<std::vector<std::int64_t>>& gaps);

}  // namespace swapscope::collect
