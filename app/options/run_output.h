// SPDX-License-Identifier: MIT
/// @brief What `profile` and `info` both print about a run database's minibatches, and the
/// command line a run records.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "perfmodel/stability.h"
#include "store/run_summary.h"

namespace swapscope::cli {

/// Per k: iterations, median t_iter, images/s, stall share, bytes swapped, peaks.
nlohmann::ordered_json batchesJson(const std::vector<store::BatchSummary>& batches);
void printBatches(std::ostream& out, const std::vector<store::BatchSummary>& batches);

/// A profile's stability (perf::ProfileStability) as JSON: null where it was not measured, else
/// its spread, per k, preempted samples and the warning (null for a steady one).
nlohmann::ordered_json stabilityJson(const std::optional<perf::ProfileStability>& s);
/// The lines `profile` and `info` print about it: "stability     ..." and, for an unsteady
/// profile, "warning       ...".
void printStability(std::ostream& out, const std::optional<perf::ProfileStability>& s);

/// "swapscope VERB ARGS...", each argument shell-quoted where it needs to be.
std::string quotedCommandLine(const std::string& verb, const std::vector<std::string>& argv);

}  // namespace swapscope::cli
