// SPDX-License-Identifier: MIT
#include "options/plan_options.h"

#include "common/error.h"

namespace swapscope::cli {

perf::PlanMode parsePlanMode(const std::string& name) {
  for (const perf::PlanMode m : {perf::PlanMode::Argmin, perf::PlanMode::Paper}) {
    if (name == perf::planModeName(m)) return m;
  }
  throwBadInput("--mode: '" + name + "' is not argmin or paper");
}

void checkBatchWithMode(const std::optional<std::int64_t>& batch, perf::PlanMode mode) {
  if (!batch || mode != perf::PlanMode::Paper) return;
  throwBadInput(
      "give --batch K or --mode paper, not both: --mode paper searches the largest "
      "stall-free k (Algorithm 2), --batch " +
      std::to_string(*batch) + " fixes it");
}

}  // namespace swapscope::cli
