// SPDX-License-Identifier: MIT
/// @brief Memory over the steps of a GMAP: resident bytes per step as exact functions of k, the
/// peak, the largest minibatch that fits a budget, and moDNN's lower bound (moDNN §IV-A, eq. 2).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/gmap.h"
#include "common/bytes.h"

namespace swapscope {

struct MemoryCurve {
  LinearBytes persistent;  ///< what setup allocates (weights, gradients, momentum, stats)
  std::vector<LinearBytes> resident;  ///< bytes resident while step s computes, s = 1..2N
                                      ///< (index 0 holds the persistent bytes)

  /// Peak resident bytes over the iteration at minibatch k. Error(BadInput) naming k and the
  /// step when a step's bytes at k do not fit in 64 bits.
  std::int64_t peak(std::int64_t k) const;
  /// The step where the peak occurs at minibatch k (the first one if several tie); the same
  /// error as peak().
  int peakStep(std::int64_t k) const;
  /// The largest k whose peak fits in `budget` bytes; 0 when not even k = 1 fits. When no step
  /// grows with k the answer is unbounded and `unboundedK` is returned.
  std::int64_t kMax(std::int64_t budget, std::int64_t unboundedK = INT64_MAX) const;
};

/// Replays the GMAP's allocations and releases. Throws Error(Runtime) if the GMAP releases a
/// buffer that is not allocated (a broken GMAP, never a user error), and Error(BadInput) naming
/// the buffer when the resident bytes overflow 64 bits (a network too large to count).
MemoryCurve computeMemoryCurve(const Gmap& gmap);

/// moDNN's lower bound at k = 1: the persistent bytes plus the largest set of buffers one step
/// reads and writes, with zero workspace. No schedule can train in less. On a GMAP with
/// recomputed FMs a step's set also holds what its re-makes read and write (Gmap::step_touches:
/// not the FMs re-made only to re-make others, where they go before the compute), so the bound is
/// that of every schedule that re-makes those FMs (docs/analysis.md, "Memory curve, peak, k_max and
/// the lower bound").
std::int64_t memoryLowerBound(const Gmap& gmap);

}  // namespace swapscope
