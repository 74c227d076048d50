// SPDX-License-Identifier: MIT
/// @brief Options of the planner shared by `swapscope plan` and the app.
#pragma once

#include <string>

#include "perfmodel/planner.h"

namespace swapscope::cli {

/// --mode: argmin or paper; Error(BadInput) naming the value otherwise.
perf::PlanMode parsePlanMode(const std::string& name);

}  // namespace swapscope::cli
