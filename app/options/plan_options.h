// SPDX-License-Identifier: MIT
/// @brief Options of the planner shared by `swapscope plan` and the app.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "perfmodel/planner.h"

namespace swapscope::cli {

/// --mode: argmin or paper; Error(BadInput) naming the value otherwise.
perf::PlanMode parsePlanMode(const std::string& name);
/// Error(BadInput) naming both options where --batch `batch` comes with --mode paper, which
/// searches k (Algorithm 2's largest stall-free one) where --batch fixes it.
void checkBatchWithMode(const std::optional<std::int64_t>& batch, perf::PlanMode mode);

}  // namespace swapscope::cli
