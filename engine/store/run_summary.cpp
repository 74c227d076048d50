// SPDX-License-Identifier: MIT
#include "store/run_summary.h"

#include <algorithm>
#include <map>

#include "common/stats.h"

namespace swapscope::store {

std::vector<BatchSummary> summarizeBatches(const RunData& run) {
  std::map<std::int64_t, std::vector<const IterationRow*>> byK;
  for (const IterationRow& it : run.iterations)
    byK[it.k].push_back(&it);
  std::vector<BatchSummary> out;
  for (const auto& [k, its] : byK) {
    BatchSummary s;
    s.k = k;
    s.iterations = static_cast<int>(its.size());
    std::vector<std::int64_t> times;
    std::int64_t total = 0, stall = 0;
    for (const IterationRow* it : its) {
      times.push_back(it->duration_ns);
      total += it->duration_ns;
      stall += it->stall_ns;
    }
    s.median_iter_ns = median(times);
    s.images_per_s = s.median_iter_ns > 0
                         ? static_cast<double>(k) / (static_cast<double>(s.median_iter_ns) * 1e-9)
                         : 0;
    s.stall_share = total > 0 ? static_cast<double>(stall) / static_cast<double>(total) : 0;
    s.offload_bytes = its.front()->offload_bytes;
    s.prefetch_bytes = its.front()->prefetch_bytes;
    for (const BatchRow& b : run.batches) {
      if (b.k == k) {
        s.predicted_peak = b.predicted_peak;
        s.measured_peak = b.measured_peak;
      }
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace swapscope::store
