// SPDX-License-Identifier: MIT
/// @brief Offline placement of an iteration's buffers in the pool. The executor knows every
/// allocation and release of an iteration before it starts, so it places them ahead of time:
/// buffer by buffer, each into the smallest gap (lowest offset on ties) left by the buffers
/// whose lifetimes overlap its own. This packs much tighter than placing at run time, which
/// matters where the budget is close to the plan's peak (the planner's k_max).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
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
/// One order can leave a pool larger than the most bytes alive at once (by a few hundred bytes,
/// or by an FM where buffers of one size form staircases), so the placement tries several orders
/// (largest first, longest-lived first, largest bytes x lifetime first, allocation order, largest
/// first with ties latest-ending first), each with best fit and with first fit, and stops at the
/// first whose extent is at most `target`. A target of 0 places every order in full and returns
/// the smallest extent; with a target, an order stops once its extent passes it, and where none
/// fits, the extent returned is the least extent at which an order stopped: no order's full
/// placement needs less.
Placement planPlacement(const Gmap& gmap, const std::vector<GmapOp>& ops, std::int64_t k,
                        std::int64_t alignment, int delay = 0, std::int64_t workspaceAlignment = 0,
                        std::int64_t target = 0);

namespace detail {
/// The order that placement order `kind` (0..4, see planPlacement) puts buffers in, given each
/// one's size and lifetime [start, end) in op indices of an iteration of `ops` ops (an end past
/// `ops`: never released): with 64-bit keys where they fit, else, or with `wide`, with 128-bit
/// keys. Both give the same order; exposed for the test that checks it.
std::vector<std::size_t> placementOrder(int kind, const std::vector<std::int64_t>& sizes,
                                        const std::vector<std::size_t>& starts,
                                        const std::vector<std::size_t>& ends, std::size_t ops,
                                        bool wide);
}  // namespace detail

/// The allocation that does not fit where an iteration is placed at run time.
struct RunTimeFailure {
  int step = 0;
  int buffer = -1;
  std::int64_t bytes = 0;
  std::int64_t largest_free = 0;  ///< the allocator's largest free block then
};

/// An iteration placed at run time, as the executor does where nothing packs ahead: the
/// allocations and releases of `ops` (executionOrder: the set-up's, then the iteration's) replayed
/// on a fresh run-time allocator (analysis/pool_allocator.h: best fit) of `budget` bytes at
/// `alignment`, each buffer at its size at k (workspaces aligned to `workspaceAlignment` where
/// that is larger). The allocator is deterministic, so the run fits where this does. None where
/// every allocation fits, else the first that does not.
std::optional<RunTimeFailure> placeAtRunTime(const Gmap& gmap, const std::vector<GmapOp>& ops,
                                             std::int64_t k, std::int64_t budget,
                                             std::int64_t alignment,
                                             std::int64_t workspaceAlignment);

/// A placement made ahead of time, and the schedule it fixes.
struct PlacedSchedule {
  int delay = 0;                      ///< the reuse delay it keeps offloaded memory for
  bool moved = false;                 ///< whether the moved prefetches open at their new step
  std::int64_t alignment = 0;         ///< of the pool
  std::vector<std::int64_t> offsets;  ///< per Allocate op of executionOrder(gmap, move_to or {})
};

struct AheadOfTime {
  std::optional<PlacedSchedule> placed;  ///< none: no placement ahead of time packs
  /// Where none packs ahead, the executor places at run time with delay 0 (placeAtRunTime, at the
  /// last of the alignments): with the moves where that fits them, else without. Whether it then
  /// runs with the moves; none where neither fits: the plan does not run.
  std::optional<bool> run_time_moved;
  /// Then, where neither fits: where the run-time placement without the moves fails.
  std::optional<RunTimeFailure> failure;
  /// placeAhead stopped before deciding: no outcome still possible was one its caller asked for.
  bool undecided = false;
  /// Then, with a budget of 0 (every order placed in full), the least pool a delay-0 placement
  /// needs; with a budget, an extent beyond it.
  std::int64_t best_extent = 0;
};

/// What the placements of one schedule (a GMAP at one k) are known to need, for a caller that
/// asks placeAhead again at other budgets (the planner): per (delay, moved, alignment), an extent
/// an order reached that fitted, and a size below which no order fits. Whether a placement fits a
/// budget is whether the least extent of all orders is within it, so the memo answers what it
/// can and placeAhead then places no buffer. Safe to share between threads.
class PlacementMemo {
 public:
  struct Known {
    std::int64_t fitted = 0;  ///< an extent reached (0: none known); fits any budget >= it
    std::int64_t least = 0;   ///< no order fits a budget below it (0: not known)
    int placed = 0;           ///< how often it was placed (a put adds its own)
    std::int64_t bound = 0;   ///< the delayed peak at the alignment (0: not known)
  };
  Known get(int delay, bool moved, std::int64_t alignment) const;
  /// Adds what `k` knows to what is known (the least fitted extent, the largest lower bounds, the
  /// placements).
  void put(int delay, bool moved, std::int64_t alignment, const Known& k);

 private:
  mutable std::mutex m_mutex;
  std::map<std::tuple<int, bool, std::int64_t>, Known> m_known;
};

/// The swap executor's one decision of its iteration's schedule and placement, which the planner
/// makes too so that it simulates the schedule that runs. Tried in order, the first whose extent
/// is within `budget` wins: `delay` (analysis/reuse_delay.h's choice; skipped when 0) at
/// alignments.front(), then delay 0 at each of `alignments`; each with the prefetches moved by
/// `move_to` (analysis/prefetch_schedule.h; skipped when it moves none) and then without. A
/// budget can hold the delayed peak of the moved schedule and still not pack it (alignment,
/// fragmentation): the plan then runs without the moves, or without the delay. Where none packs,
/// the executor places at run time with delay 0 (placeAtRunTime, at alignments.back()), with the
/// moves and then without; where neither fits, the plan does not run (neither `placed` nor
/// `run_time_moved`).
///
/// With a `memo` (kept by the caller for this GMAP at this k, `move_to` and `workspaceAlignment`),
/// an attempt whose delayed peak at its alignment (analysis/reuse_delay.h) exceeds the budget is
/// not placed, the memo answers what it knows, and the result's offsets are then empty: the
/// decision is the same, for callers that need the decision only. The delayed peak bounds every
/// placement's extent from below where `workspaceAlignment` is 0 or a multiple of the alignment
/// (no rounding then makes a buffer smaller than the bound counts it). An attempt the memo
/// cannot answer is placed, from the third time on, in full, order by order, until one fits the
/// budget:
/// where none does, the least extent it then knows answers every later budget. With a memo, an
/// attempt of the schedule of the first run-time placement (delay 0, with the moves where `move_to`
/// has any) whose delayed peak is above 99 % of the budget, and which the memo cannot answer,
/// waits: it is placed only where a later attempt with another schedule packs, or where none packs
/// and the run-time placement of that schedule does not fit (either runs the same schedule). The
/// result may then name a later attempt of that schedule, or the run-time placement, where such an
/// attempt would have packed, and `best_extent` does not count it.
///
/// `matters` (delay, moved), where given, says which outcomes the caller needs to tell apart
/// (the planner: those whose predicted time could still beat its best; that the plan does not
/// run never matters by itself). Before it places an attempt or at run time, placeAhead returns
/// `undecided` where no outcome still possible matters: an attempt from this one on, or delay 0
/// at run time (with the moves where `move_to` has any, or without).
AheadOfTime placeAhead(const Gmap& gmap, const std::vector<int>& move_to, std::int64_t k,
                       std::int64_t budget, int delay, const std::vector<std::int64_t>& alignments,
                       std::int64_t workspaceAlignment = 0, PlacementMemo* memo = nullptr,
                       const std::function<bool(int delay, bool moved)>& matters = {});

}  // namespace swapscope
