// SPDX-License-Identifier: MIT
#include "perfmodel/paper.h"

#include <algorithm>

namespace swapscope::perf {

PaperResult algorithm1(const PaperInput& in) {
  const std::size_t steps = in.compute.size();  // 2N + 1 with index 0 unused
  PaperResult r;
  r.t_ready.assign(steps, 0.0);
  std::vector<double> prefix(steps, 0.0);  // prefix[j] = Σ_{r=1}^{j} t_r
  for (std::size_t j = 1; j < steps; ++j)
    prefix[j] = prefix[j - 1] + in.compute[j];
  std::int64_t used = 0;
  for (std::size_t j = 1; j < steps; ++j) {
    if (j == 1) {
      r.t_ready[j] = in.prefetch[j];
    } else if (used + in.allocate[j] <= in.budget) {
      r.t_ready[j] = r.t_ready[j - 1] + in.prefetch[j];
    } else {
      // The step being computed at t_ready[j-1] on a stall-free timeline.
      // The first step whose prefix sum passes t_ready[j-1] (prefix is non-decreasing).
      std::size_t current = static_cast<std::size_t>(
          std::upper_bound(prefix.begin() + 1, prefix.end(), r.t_ready[j - 1]) - prefix.begin());
      current = std::min(current, steps - 1);
      // Walk the releases from there until they cover this step's allocation.
      std::int64_t freed = 0;
      std::size_t satisfied = current;
      for (; satisfied < steps; ++satisfied) {
        freed += in.release[satisfied];
        if (freed > in.allocate[j]) break;
      }
      if (satisfied >= steps) satisfied = steps - 1;
      r.t_ready[j] = prefix[satisfied] + in.prefetch[j];
    }
    used += in.allocate[j];
  }
  for (std::size_t j = 2; j < steps; ++j) {
    if (r.t_ready[j] > prefix[j - 1] + 1e-12) r.violations.push_back(static_cast<int>(j));
  }
  return r;
}

}  // namespace swapscope::perf
