// SPDX-License-Identifier: MIT
/// @brief What the memory chart draws, computed without any Qt: resident bytes per step of one
/// iteration (the GMAP's steps 1..2N) for the chosen plan and for the keep-all and swap-all
/// references at the same k, the budget, and each swapped FM's span off the device (released
/// after its last forward reader, prefetched for its first backward reader).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/network_analysis.h"

namespace swapscope::perf {
struct PlanResult;
}
namespace swapscope::store {
struct RunData;
}

namespace swapscope {

struct MemorySeries {
  std::string policy;         ///< "plan (accudnn)", "keep-all", "swap-all", "vdnn-conv"
  std::vector<double> bytes;  ///< resident bytes while step s computes, s = 1..2N (index s-1)
  std::int64_t peak = 0;      ///< at k (k_max is the caller's: its budget moves)
  bool reference = false;     ///< drawn thin and dashed: a policy to compare the plan with
  bool measured = false;      ///< a run's measured pool bytes, drawn over the prediction
};

/// A swapped FM: off the device from the end of forward step `release_step` until backward step
/// `prefetch_step` brings it back. A recomputed FM: released at the end of `release_step`,
/// re-made from an ancestor in backward step `prefetch_step`.
struct SwapSpan {
  std::string fm;
  int layer = -1;
  int release_step = 0;
  int prefetch_step = 0;
  std::int64_t bytes = 0;  ///< the FM's size at k
  bool recomputed = false;
};

struct MemoryChartData {
  std::string title;
  std::int64_t k = 1;
  std::int64_t budget = 0;
  int forward_steps = 0;
  std::vector<MemorySeries> series;
  /// The swapped FMs' spans (as the plan file's swap set), then the recomputed ones' (its
  /// recompute list).
  std::vector<SwapSpan> spans;
  std::vector<int> step_layer;  ///< the layer computing at step s = 1..2N (index s-1)
  /// Empty when the plan trains; otherwise why not (the budget is below what any plan needs).
  std::string untrainable;
};

/// The analyzer's curves alone (no fitted model) at k: keep-all, every other fixed policy in the
/// policy table's order, and swap-all.
MemoryChartData makeMemoryChartData(const Network& net, const NetworkAnalysis& analysis,
                                    std::int64_t k, std::int64_t budget);

/// The chosen plan's curve at its k, keep-all and swap-all at the same k as references, and the
/// span of every FM in the plan's swap set. An untrainable plan gives the references at k = 1
/// and its reason.
MemoryChartData makePlanMemoryChartData(const Network& net, const NetworkAnalysis& analysis,
                                        const perf::PlanResult& plan, std::string_view policy,
                                        std::int64_t budget);

/// Adds a run's measured pool bytes at minibatch `k` to `chart` as a series ("measured, ..."): per
/// step s = 1..2N, the most bytes in use while it computed (from its start to its end), in the
/// recorded iteration whose pool bytes the run database holds (the first at k); its peak is the
/// pool's high water the run recorded at k. Adds nothing and returns false when the database
/// holds no pool bytes or no samples at k, or its steps are not the chart's.
bool addMeasuredMemory(MemoryChartData& chart, const store::RunData& run, std::int64_t k);

}  // namespace swapscope
