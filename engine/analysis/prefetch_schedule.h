// SPDX-License-Identifier: MIT
/// @brief Where the runtime issues each backward prefetch. The GMAP places a prefetch at the step
/// that reads the FM; moving it earlier hides the transfer behind compute, at the price of memory.
/// The swap executor and the performance model's simulator both use this one rule, so the
/// simulated schedule is the executed one.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/gmap.h"
#include "analysis/memory.h"

namespace swapscope {

struct PrefetchMoves {
  std::vector<int> move_to;  ///< per GMAP buffer: the step its prefetch opens, 0 if not moved
  int moved = 0;             ///< prefetches moved
};

/// Moves backward prefetches earlier, in backward order, one step at a time while the resident
/// bytes there plus those already moved plus this FM stay within `cap`. A prefetch never moves
/// before the step after its FM's forward release, nor before the previous prefetch's new step
/// (the swap-in stream keeps GMAP order). With cap = the plan's peak, the peak does not change.
PrefetchMoves movePrefetches(const Gmap& gmap, const MemoryCurve& curve, std::int64_t k,
                             std::int64_t cap);

}  // namespace swapscope
