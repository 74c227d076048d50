// SPDX-License-Identifier: MIT
/// @brief Offline placement of an iteration's buffers in the pool. The executor knows every
/// allocation and release of an iteration before it starts, so it places them ahead of time:
/// buffer by buffer, each into the smallest gap (lowest offset on ties) left by the buffers
/// whose lifetimes overlap its own. This packs much tighter than placing at run time, which
/// matters where the budget is close to the plan's peak (the planner's k_max).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/gmap.h"

namespace swapscope {

struct Placement {
  std::vector<std::int64_t> offsets;  ///< per Allocate op of `ops` (in order); -1 for 0 bytes
  std::int64_t extent = 0;            ///< the highest end offset: the pool this needs
};

/// Places the Allocate ops of `ops` (an allocation lives until the Release of its buffer, or to
/// the end). Sizes are the buffers' sizes at k rounded up to `alignment`, and so are offsets;
/// workspaces' offsets and sizes are rounded up to `workspaceAlignment` where that is larger.
///
/// `delay` > 0 keeps the memory of offloaded feature maps out of reuse for that many more steps
/// after their release: their offload is then likely done before anyone needs the bytes, so
/// compute does not wait for it. It costs pool space, so the executor uses it only where the
/// budget has room.
///
/// One order can leave a pool a few hundred bytes larger than the most bytes alive at once, so
/// the placement tries several orders (largest first, longest-lived first, largest bytes x
/// lifetime first, allocation order), each with best fit and with first fit, and stops at the
/// first whose extent is at most `target`; it returns the smallest extent found. A target of 0
/// tries them all.
Placement planPlacement(const Gmap& gmap, const std::vector<GmapOp>& ops, std::int64_t k,
                        std::int64_t alignment, int delay = 0, std::int64_t workspaceAlignment = 0,
                        std::int64_t target = 0);

/// A placement made ahead of time, and the schedule it fixes.
struct PlacedSchedule {
  int delay = 0;                      ///< the reuse delay it keeps offloaded memory for
  bool hoisted = false;               ///< whether the moved prefetches open at their new step
  std::int64_t alignment = 0;         ///< of the pool
  std::vector<std::int64_t> offsets;  ///< per Allocate op of executionOrder(gmap, move_to or {})
};

struct AheadOfTime {
  std::optional<PlacedSchedule> placed;  ///< none: no placement ahead of time packs
  std::int64_t best_extent = 0;          ///< then the least pool a delay-0 placement needs
};

/// The swap executor's one decision of its iteration's schedule and placement, which the planner
/// makes too so that it simulates the schedule that runs. Tried in order, the first whose extent
/// is within `budget` wins: `delay` (analysis/reuse_delay.h's choice; skipped when 0) at
/// alignments.front(), then delay 0 at each of `alignments`; each with the prefetches moved by
/// `move_to` (analysis/prefetch_schedule.h; skipped when it moves none) and then without. A
/// budget can hold the delayed peak of the moved schedule and still not pack it (alignment,
/// fragmentation): the plan then runs without the moves, or without the delay. Where none packs,
/// the executor places at run time with delay 0.
AheadOfTime placeAhead(const Gmap& gmap, const std::vector<int>& move_to, std::int64_t k,
                       std::int64_t budget, int delay, const std::vector<std::int64_t>& alignments,
                       std::int64_t workspaceAlignment = 0);

}  // namespace swapscope
