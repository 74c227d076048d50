// SPDX-License-Identifier: MIT
/// @brief The one decision of how long an offloaded FM's memory is kept from reuse, taken by the
/// swap executor before it places its buffers and by the planner before it simulates, so that
/// the prediction models the schedule that runs (docs/runtime.md, docs/perfmodel.md).
///
/// Keeping an offloaded FM's memory from reuse for a few steps after its release lets its offload
/// finish before anyone needs the bytes, so compute does not wait for it; it costs pool space. The
/// delays 4, then 1, are tried: the first whose pool high-water mark (the byte balance of the
/// executed op order at the pool's alignment, the offloaded FMs' releases moved `delay` steps
/// later, exactly as analysis/placement.h moves them) stays within the budget wins; else 0. The
/// executor places its buffers with that delay first; only where they do not pack (fragmentation)
/// does it fall back to 0, and `run` says so.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "analysis/gmap.h"

namespace swapscope {

/// The delays tried, in order; the last one always fits (it adds nothing to the plan's peak).
inline constexpr int kReuseDelays[] = {4, 1, 0};

/// The order the swap executor runs `gmap` in: the setup (step 0), then steps 1..2N in GMAP
/// order, where a prefetch moved to an earlier step (`move_to[buffer]` > 0, see
/// analysis/prefetch_schedule.h) opens, with its allocation, at the start of that step. Teardown
/// (step 2N+1) is left out. An empty `move_to` moves nothing.
std::vector<GmapOp> executionOrder(const Gmap& gmap, const std::vector<int>& move_to);

/// For every op index i of `ops` (an executionOrder), the op index from which the bytes it
/// releases are free again: i itself, except for the release of an offloaded FM when `delay` > 0,
/// whose memory is kept from reuse until the first op of step release + delay. The one lifetime
/// rule of delayed releases, for the placement and for delayedPeak.
std::vector<std::size_t> delayedReleaseEnds(const Gmap& gmap, const std::vector<GmapOp>& ops,
                                            int delay);

/// The pool high-water mark at k of `ops` (an executionOrder) when the memory of every offloaded
/// FM is kept from reuse until the start of step `release + delay`, with every buffer's bytes
/// rounded up to `alignment` as the pool places them (1: exact bytes).
std::int64_t delayedPeak(const Gmap& gmap, const std::vector<GmapOp>& ops, std::int64_t k,
                         int delay, std::int64_t alignment = 1);

/// (delay, delayedPeak) for each non-zero delay of kReuseDelays, in that order, at the pool's
/// `alignment`; empty where nothing is offloaded (a delay then changes nothing). None of it
/// depends on the budget, so a planner can keep it across budgets.
std::vector<std::pair<int, std::int64_t>> delayedPeaks(const Gmap& gmap,
                                                       const std::vector<GmapOp>& ops,
                                                       std::int64_t k, std::int64_t alignment);

/// The first delay whose peak fits `budget`, else 0 (the last of kReuseDelays).
int firstFittingDelay(const std::vector<std::pair<int, std::int64_t>>& delayed_peaks,
                      std::int64_t budget);

/// The first delay of kReuseDelays whose delayedPeak at the pool's `alignment` fits `budget`; 0
/// where nothing is offloaded (the delay then changes nothing).
int chooseReuseDelay(const Gmap& gmap, const std::vector<GmapOp>& ops, std::int64_t k,
                     std::int64_t budget, std::int64_t alignment);

}  // namespace swapscope
