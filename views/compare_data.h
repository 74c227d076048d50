// SPDX-License-Identifier: MIT
/// @brief What the Compare view draws for two run databases, computed without any Qt: the
/// engine's comparison (perf::compareRuns, the figures `swapscope compare` prints) with every
/// per-step difference, and, from the recorded rows, each run's iteration times per k and the
/// pool's in-use bytes over one iteration.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "perfmodel/compare.h"
#include "store/run_db.h"

namespace swapscope {

/// One run's recorded iteration times at one k.
struct IterationTimes {
  std::int64_t k = 0;
  std::vector<double> seconds;  ///< in iteration order
};

/// The pool's in-use bytes over one recorded iteration.
struct PoolCurve {
  std::int64_t k = 0;  ///< 0: the run recorded no iteration
  int iteration = 0;
  std::vector<std::pair<double, std::int64_t>> points;  ///< (seconds from its start, bytes)
  double t_iter = 0;                                    ///< the iteration's duration, seconds
  std::int64_t budget = 0;
};

struct CompareData {
  /// perf::compareRuns(a, b) with every step kept (no `top` cut): the rows `swapscope compare
  /// --json --top N` lists, for N at least steps_total, in the same order.
  perf::RunComparison comparison;
  std::string label_a, label_b;                  ///< "A: <network> (<file name>)"
  std::vector<IterationTimes> times_a, times_b;  ///< per recorded k, ascending
  /// The first recorded iteration at the k the per-step differences are at, or, when the runs
  /// share none, at each run's largest recorded k.
  PoolCurve pool_a, pool_b;
  std::int64_t largest_transfer = 0;  ///< bytes, over both runs (the PCIe plot's range)
};

/// Error as perf::compareRuns throws it.
CompareData makeCompareData(const store::RunData& a, const store::RunData& b);

}  // namespace swapscope
