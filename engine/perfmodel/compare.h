// SPDX-License-Identifier: MIT
/// @brief Two run databases side by side: what `swapscope compare` prints and the desktop app's
/// comparison view shows. Identity (device, network, budget), the fitted compute curves evaluated
/// at common work, the PCIe fits, per-step time differences and predicted against measured where
/// a run recorded its plan.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "perfmodel/model.h"
#include "store/run_db.h"

namespace swapscope::perf {

/// One run's identity and headline figures.
struct RunSide {
  std::string path, kind, status, device, backend, host_cpu, network, structure_hash, policy;
  std::int64_t budget = 0;
  std::vector<std::int64_t> ks;  ///< recorded minibatches
  /// Each recorded (k, passes) once, ascending: a minibatch run in S sub-batches has S passes of
  /// k/S samples, the size its steps ran at.
  std::vector<std::pair<std::int64_t, std::int64_t>> batches;
  /// The performance model was fitted (the run recorded iterations): without it the PCIe and
  /// duplex figures are none, not 0.
  bool fitted = false;
  double h2d_bytes_per_s = 0, d2h_bytes_per_s = 0;
  double h2d_latency_s = 0, d2h_latency_s = 0;
  double duplex_factor = 1;
  int h2d_points = 0, d2h_points = 0;
  int duplex_points = 0;  ///< 0: no copy ran beside one the other way; the factor is not measured
  /// From the recorded plan (a `swapscope run` database), against the measurement.
  struct Check {
    std::int64_t k = 0;
    double t_iter_predicted = 0, t_iter_measured = 0;  ///< measured: median
    std::int64_t peak_predicted = 0, peak_measured = 0;
    double stall_predicted = 0, stall_measured = 0;  ///< measured: median per iteration
    /// The plan's model was fitted on another device than the run's (planDeviceMismatch's
    /// text); empty on the same device.
    std::string device_mismatch;
  };
  std::optional<Check> check;
};

/// A run's recorded plan (the last row of its table 'plans', as `swapscope run --db` records
/// it) against its measurement at the plan's k: t_iter and stall the medians over the recorded
/// iterations, the peak the pool's high water. Empty when the run recorded no plan, no
/// iteration at the plan's k, or a plan without predictions.
std::optional<RunSide::Check> planCheck(const store::RunData& run);

/// When a plan fitted on `planDevice` (`planBackend`) is run on `device` (`backend`), what to
/// tell the user: the plan's predictions are not comparable with the run's measurement. Empty
/// on the same backend and device.
std::string planDeviceMismatch(const std::string& planDevice, const std::string& planBackend,
                               const std::string& device, const std::string& backend);

/// A layer type's curve in one direction, both runs evaluated at the same work.
struct CurveAtCommonWork {
  std::string target;  ///< layer kind, or "kind@bytes"
  std::string direction;
  double work = 0;  ///< FLOPs (or bytes) both are evaluated at
  bool bytes_axis = false;
  double seconds_a = 0, seconds_b = 0;
  std::string form_a, form_b;
  bool extrapolated = false;  ///< `work` is outside one run's profiled range
};

/// One step at a minibatch both runs recorded: the median of its samples.
struct StepDiff {
  int step = 0;
  std::string layer, direction;
  double seconds_a = 0, seconds_b = 0;
};

struct RunComparison {
  RunSide a, b;
  bool same_network = false;  ///< equal structure hashes
  std::vector<CurveAtCommonWork> curves;
  std::int64_t step_k = 0;  ///< samples per step the step diffs are at (k, or k/S in sub-batches);
                            ///< 0 if none is common
  std::vector<StepDiff> steps;  ///< largest |b - a| first
  std::size_t steps_total = 0;  ///< before `top` cut the list
};

/// One measured iteration, per step 1..2N (index 0 unused): the compute stream's idle time
/// before the step and its start, from the iteration's start.
struct MeasuredIteration {
  double t_iter = 0;
  std::vector<double> stall, start;
};

/// A plan's per-step predictions against measured iterations. A step is stalled when its stall
/// exceeds `threshold` x t_iter (the predicted t_iter for the prediction, each iteration's own
/// for the measurement).
struct StallMetrics {
  double threshold = 0.01;
  int iterations = 0;
  double stall_predicted = 0, stall_measured = 0;  ///< seconds per iteration; measured: median
  std::vector<int> predicted_stalled;              ///< steps
  std::vector<int> measured_stalled;               ///< steps stalled in most iterations
  /// Of the stalled sets, the median over the iterations. An empty set has precision (predicted
  /// empty) or recall (measured empty) 1, so two empty sets agree perfectly.
  double precision = 0, recall = 0, f1 = 0;
  /// |predicted - measured| start per step (measured: the median over the iterations), seconds.
  bool has_starts = false;  ///< false: the plan has no predicted starts
  double start_error_median = 0, start_error_p90 = 0, start_error_max = 0;
  int start_error_worst_step = 0;
};

/// `steps` is 2N; `predicted_stall` per step 1..2N (index 0 unused) and `predicted_start` (may be
/// empty) likewise.
StallMetrics compareStalls(double predicted_t_iter, const std::vector<double>& predicted_stall,
                           const std::vector<double>& predicted_start,
                           const std::vector<MeasuredIteration>& measured, double threshold = 0.01);

/// The recorded minibatches as "8,16" or, where a minibatch ran in passes, "16 in 2 passes of 8";
/// "none" for a run without iterations.
std::string describeBatches(const RunSide& side);

/// Why the per-step times are not compared ("the networks differ", "A records no iterations",
/// or which (k, passes) each run recorded where no pass size is common), or "" where they are.
std::string stepsNotCompared(const RunComparison& c);

/// Where a run without iterations leaves nothing to compare but the identity, which one it is
/// ("B (b.swapdb) records no iterations: ..."); "" where both recorded iterations.
std::string nothingToCompare(const RunComparison& c);

/// Compares two loaded runs. A run without recorded iterations has no fits: its curves and PCIe
/// figures are left empty rather than refused, so a failed run still shows its identity.
RunComparison compareRuns(const store::RunData& a, const store::RunData& b, std::size_t top = 20);

/// B/A of two times as the comparison tables print it ("1.23x"), or "-" where either time shows as
/// 0.000 ms (formatMilliseconds, three decimals below 10 ms) or is none: below the printed
/// resolution, a ratio is noise. `swapscope compare` and the app's Compare view both print it.
std::string timeRatioText(double secondsA, double secondsB);

}  // namespace swapscope::perf
