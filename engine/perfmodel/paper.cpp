// SPDX-License-Identifier: MIT
#include "perfmodel/paper.h"

#include <algorithm>

namespace swapscope::perf {

PaperResult algorithm1(const PaperInput& in) {
  const std::size_t steps = in.compute.size();  // 2N + 1 with index 0 unused
  PaperResult r;
  r.t_ready.assign(steps, 0.0);
  r.waited_for.assign(steps, 0);
  r.finish.assign(steps, 0.0);
  if (steps < 2) return r;
  r.compute_start = in.prefetch[1];
  double sum = r.compute_start;
  for (std::size_t j = 1; j < steps; ++j) {
    sum += in.compute[j];
    r.finish[j] = sum;
  }
  std::int64_t used = in.resident;  // M_used_present
  std::size_t released = 1;         // steps before this one have released their bytes
  for (std::size_t j = 1; j < steps; ++j) {
    if (j == 1) {
      r.t_ready[j] = in.prefetch[j];
    } else {
      // The releases of the steps that have finished when the swap-in stream reaches j.
      for (; released < j && r.finish[released] <= r.t_ready[j - 1]; ++released)
        used -= in.release[released];
      if (used + in.allocate[j] <= in.budget) {
        r.t_ready[j] = r.t_ready[j - 1] + in.prefetch[j];
      } else {
        // The step being computed at t_ready[j-1] on the stall-free timeline: the first one
        // whose end passes it (finish is non-decreasing).
        const auto current = static_cast<std::size_t>(
            std::upper_bound(r.finish.begin() + 1, r.finish.end(), r.t_ready[j - 1]) -
            r.finish.begin());
        // Walk the releases from there until they cover the shortfall.
        const std::int64_t shortfall = used + in.allocate[j] - in.budget;
        std::int64_t freed = 0;
        std::size_t satisfied = std::min(current, steps - 1);
        for (; satisfied < steps; ++satisfied) {
          freed += in.release[satisfied];
          if (freed >= shortfall) break;
        }
        if (satisfied >= steps) satisfied = steps - 1;
        r.t_ready[j] = r.finish[satisfied] + in.prefetch[j];
        r.waited_for[j] = static_cast<int>(satisfied);
      }
    }
    used += in.allocate[j];
  }
  for (std::size_t j = 2; j < steps; ++j) {
    if (r.t_ready[j] > r.finish[j - 1] + 1e-12) r.violations.push_back(static_cast<int>(j));
  }
  return r;
}

}  // namespace swapscope::perf
