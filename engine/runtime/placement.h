// SPDX-License-Identifier: MIT
/// @brief Offline placement of an iteration's buffers in the pool. The executor knows every
/// allocation and release of an iteration before it starts, so it places them ahead of time:
/// buffer by buffer, each into the smallest gap (lowest offset on ties) left by the buffers
/// whose lifetimes overlap its own. This packs much tighter than placing at run time, which
/// matters where the budget is close to the plan's peak (the planner's k_max).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/gmap.h"

namespace swapscope::rt {

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

}  // namespace swapscope::rt
