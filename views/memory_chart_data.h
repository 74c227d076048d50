// SPDX-License-Identifier: MIT
/// @brief What the memory chart draws, computed from an analysis without any Qt: one series of
/// resident bytes per step for each policy, the budget and the forward/backward boundary.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/network_analysis.h"

namespace swapscope {

struct MemorySeries {
  std::string policy;         ///< "keep-all", "swap-all", "vdnn-conv"
  std::vector<double> bytes;  ///< resident bytes while step s computes, s = 1..2N (index s-1)
  std::int64_t peak = 0;      ///< at k (k_max is the caller's: its budget moves)
};

struct MemoryChartData {
  std::string title;
  std::int64_t k = 1;
  std::int64_t budget = 0;
  int forward_steps = 0;
  std::vector<MemorySeries> series;
};

MemoryChartData makeMemoryChartData(const Network& net, const NetworkAnalysis& analysis,
                                    const MemoryPlan& vdnn, std::int64_t k, std::int64_t budget);

}  // namespace swapscope
