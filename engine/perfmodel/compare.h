// SPDX-License-Identifier: MIT
/// @brief Two run databases side by side: what `swapscope compare` prints and the desktop app's
/// comparison view shows. Identity (device, network, budget), the fitted compute curves evaluated
/// at common work, the PCIe fits, per-step time differences and predicted against measured where
/// a run recorded its plan.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "perfmodel/model.h"
#include "store/run_db.h"

namespace swapscope::perf {

/// One run's identity and headline figures.
struct RunSide {
  std::string path, kind, status, device, backend, host_cpu, network, structure_hash, policy;
  std::int64_t budget = 0;
  std::vector<std::int64_t> ks;  ///< recorded minibatches
  double h2d_bytes_per_s = 0, d2h_bytes_per_s = 0;
  double h2d_latency_s = 0, d2h_latency_s = 0;
  double duplex_factor = 1;
  int h2d_points = 0, d2h_points = 0;
  /// From the recorded plan (a `swapscope run` database), against the measurement.
  struct Check {
    std::int64_t k = 0;
    double t_iter_predicted = 0, t_iter_measured = 0;  ///< measured: median
    std::int64_t peak_predicted = 0, peak_measured = 0;
    double stall_predicted = 0, stall_measured = 0;  ///< measured: median per iteration
  };
  std::optional<Check> check;
};

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
  std::int64_t step_k = 0;      ///< the k the step diffs are at; 0 if none is common
  std::vector<StepDiff> steps;  ///< largest |b - a| first
  std::size_t steps_total = 0;  ///< before `top` cut the list
};

/// Compares two loaded runs. A run without recorded iterations has no fits: its curves and PCIe
/// figures are left empty rather than refused, so a failed run still shows its identity.
RunComparison compareRuns(const store::RunData& a, const store::RunData& b, std::size_t top = 20);

}  // namespace swapscope::perf
