// SPDX-License-Identifier: MIT
#include "options/plan_options.h"

#include <algorithm>

#include "common/bytes.h"
#include "common/error.h"
#include "common/format.h"

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

std::int64_t parseBudgetGib(const std::string& text) {
  const std::size_t digits = static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }));
  const auto points = static_cast<std::size_t>(std::count(text.begin(), text.end(), '.'));
  if (digits == 0 || points > 1 || digits + points != text.size()) {
    throwBadInput("--budget-gib: " + quoteBounded(text) +
                  " is not a number of GiB: write decimal digits with at most one point, as "
                  "--budget writes its number (no exponent, sign, unit or space), e.g. "
                  "--budget-gib 1000 or --budget 1000GiB");
  }
  try {
    return parseByteSize(text + "GiB", "--budget-gib");
  } catch (const Error&) {
    // The digits read, so the only reason left is the size: more than a 64-bit count holds.
    throwBadInput("--budget-gib " + quoteBounded(text) +
                  ": too large: a budget is below 8 EiB (8589934592 GiB), the most bytes "
                  "a 64-bit count holds, as for --budget");
  }
}

std::optional<std::int64_t> budgetFromOptions(const std::optional<std::string>& budget,
                                              const std::optional<std::string>& budgetGib) {
  if (budget && budgetGib) {
    throwBadInput("give --budget or --budget-gib, not both: --budget " + quoteBounded(*budget) +
                  " and --budget-gib " + quoteBounded(*budgetGib) + " each set the budget");
  }
  if (budget) return parseByteSize(*budget, "--budget");
  if (budgetGib) return parseBudgetGib(*budgetGib);
  return std::nullopt;
}

}  // namespace swapscope::cli
