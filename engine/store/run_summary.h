// SPDX-License-Identifier: MIT
/// @brief Figures per minibatch of a run database: what `swapscope info` prints and the desktop
/// app lists.
#pragma once

#include <cstdint>
#include <vector>

#include "store/run_db.h"

namespace swapscope::store {

struct BatchSummary {
  std::int64_t k = 0;
  int iterations = 0;               ///< recorded
  std::int64_t median_iter_ns = 0;  ///< over the recorded iterations
  double images_per_s = 0;          ///< k / median iteration time
  double stall_share = 0;           ///< stall time / iteration time, over all recorded iterations
  std::int64_t offload_bytes = 0;   ///< per iteration (the first recorded)
  std::int64_t prefetch_bytes = 0;
  std::int64_t predicted_peak = 0;  ///< 0 when the batch row is missing (a killed run)
  std::int64_t measured_peak = 0;
};

/// One entry per k that has recorded iterations, in increasing k.
std::vector<BatchSummary> summarizeBatches(const RunData& run);

}  // namespace swapscope::store
