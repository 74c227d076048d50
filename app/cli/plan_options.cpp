// SPDX-License-Identifier: MIT
#include "cli/plan_options.h"

#include "common/error.h"

namespace swapscope::cli {

perf::PlanMode parsePlanMode(const std::string& name) {
  for (const perf::PlanMode m : {perf::PlanMode::Argmin, perf::PlanMode::Paper}) {
    if (name == perf::planModeName(m)) return m;
  }
  throwBadInput("--mode: '" + name + "' is not argmin or paper");
}

}  // namespace swapscope::cli
