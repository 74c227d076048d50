// SPDX-License-Identifier: MIT
/// @brief What the summary shows for one plan, computed without any Qt: the predictions of the
/// simulated iteration (t_iter, throughput, stall, peak against the budget, bytes swapped), the
/// learning rate of eq. 9, the whole-training time when a data-set size is given, and the
/// warnings a reader of the numbers must see.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "perfmodel/compare.h"

namespace swapscope::perf {
struct PlanResult;
struct PlanRequest;
}  // namespace swapscope::perf

namespace swapscope {

/// Where the plan's model and network came from.
struct SummaryContext {
  std::string network;         ///< the planned network's name
  std::string policy;          ///< keep-all, swap-all, vdnn-conv, accudnn
  std::string mode;            ///< argmin, paper, fixed
  std::string profile_device;  ///< the device the run database was profiled on
  std::string backend;         ///< its backend ("cpu", "cuda")
  std::string source_db;
  bool network_transferred = false;  ///< the planned network is not the profiled one
  /// The profile was recorded on a busy machine (perf::stabilityWarning); empty otherwise.
  std::string profile_warning;
  /// The profile did not finish (perf::unfinishedProfileWarning); empty otherwise.
  std::string unfinished_warning;
  /// The database is not a profile but a plan's run (perf::notAProfileWarning): its fits rest on
  /// the minibatches it ran. Empty for a profile.
  std::string not_profile_warning;
  /// The profiled device's memory in bytes (0: not recorded): a budget above it is warned of.
  std::int64_t device_memory = 0;
};

struct SummaryRow {
  std::string label, value;
};

/// A run of the plan against its prediction: the figures `swapscope run` prints and `swapscope
/// compare` reports (perf::planCheck of the run database).
struct SummaryMeasurement {
  std::string run;  ///< the run database
  std::int64_t k = 0;
  int iterations = 0;                                ///< recorded at k
  double t_iter_predicted = 0, t_iter_measured = 0;  ///< seconds; measured: the median
  double stall_predicted = 0, stall_measured = 0;    ///< seconds; measured: the median
  std::int64_t peak_predicted = 0, peak_measured = 0;
  /// 100 x (predicted - measured) / measured; NaN where the measurement is 0.
  double t_iter_error_pct = 0, stall_error_pct = 0, peak_error_pct = 0;
};

struct SummaryData {
  bool trainable = false;
  std::int64_t k = 0;
  double t_iter_s = 0, throughput = 0, stall_s = 0, lr = 0, t_whole_s = 0;
  std::int64_t peak_bytes = 0, budget = 0, bytes_moved = 0;
  int swapped = 0;  ///< FMs in the swap set
  std::vector<SummaryRow> rows;
  std::vector<std::string> warnings;
  std::optional<SummaryMeasurement> measured;
};

SummaryData makeSummaryData(const perf::PlanResult& result, const perf::PlanRequest& request,
                            const SummaryContext& context);

/// Adds a run's measurement of the plan to `d`: rows with the measured t_iter, total stall and
/// peak, each against the recorded plan's prediction with its error in per cent (as `swapscope
/// run` prints it, common/format.h formatRelativeError), and, when the run's device is not the
/// plan's, the warning `swapscope run` gives. `check` is perf::planCheck of `run`.
void addMeasuredSummary(SummaryData& d, const perf::RunSide::Check& check,
                        const store::RunData& run);

}  // namespace swapscope
