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

/// The app's --budget-gib G: exactly --budget GGiB (parseByteSize), so G is written as --budget
/// writes its number, decimal digits with at most one point (no exponent, sign, unit or space:
/// "1e3" is refused by both, "1000" is 1000 GiB), and is at most what a 64-bit byte count holds,
/// below 8 EiB. Error(BadInput) naming --budget-gib and the value, and saying why.
std::int64_t parseBudgetGib(const std::string& text);
/// The budget --budget SIZE or --budget-gib G gives, whichever is given (nullopt for neither);
/// Error(BadInput) naming both where both are.
std::optional<std::int64_t> budgetFromOptions(const std::optional<std::string>& budget,
                                              const std::optional<std::string>& budgetGib);

}  // namespace swapscope::cli
