// SPDX-License-Identifier: MIT
/// @brief How steady the machine was while a profile ran: the spread of the iteration times at
/// each profiled k, and the step samples the fits left out as preempted by other work. A profile
/// recorded while other work ran on the machine mispredicts t_iter, so `profile`, `info`, `plan`
/// and the app warn about one whose spread is beyond kUnsteadySpread (docs/run-database.md,
/// "Profile stability").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/run_db.h"

namespace swapscope::perf {

class PerfModel;

/// The spread (the median over k) of a quiet machine's profile stays below this; a busier
/// one's goes beyond it. Measured on fmnist-cnn and resnet56 (docs/run-database.md, "Profile
/// stability").
inline constexpr double kUnsteadySpread = 0.25;

/// The iteration times at one k.
struct KStability {
  std::int64_t k = 0;
  int iterations = 0;
  std::int64_t median_ns = 0;
  /// (p90 - p10) / median of its iteration times (interpolated quantiles); 0 for one iteration.
  double spread = 0;
};

struct ProfileStability {
  std::vector<KStability> per_k;
  /// The median of the per-k spreads: a short iteration at a small k is easily disturbed once,
  /// a busy machine disturbs most of them.
  double spread = 0;
  double largest = 0;        ///< the largest per-k spread
  std::int64_t worst_k = 0;  ///< where it is
  /// Step samples the contention fits left out as preempted (compute times and start waits
  /// beyond Tukey's far-out fence); -1: no model was fitted.
  int preempted_compute = -1, preempted_waits = -1;
  bool unsteady() const { return spread > kUnsteadySpread; }
};

/// The stability of the profile `run`: its iterations' spread at each k, and, with `model`
/// (fitted to `run`), the preempted samples its fits left out.
ProfileStability measureStability(const store::RunData& run, const PerfModel* model);

/// The meta value `stability` that holds it (a JSON object), and back. readStability: nullopt
/// for a run without it (not measured: an earlier Swapscope, a run of a plan, a profile cut
/// short); Error(BadInput) naming the file for a value that is not one.
std::string stabilityToMeta(const ProfileStability& s);
std::optional<ProfileStability> readStability(const store::RunData& run);

/// "iterations spread 3.1 % ((p90 - p10) / median at each k, the median over k; 9.0 % at k = 4),
/// 2 compute and 0 start-wait samples left out as preempted".
std::string describeStability(const ProfileStability& s);
/// For an unsteady profile, what to tell its reader; empty otherwise.
std::string stabilityWarning(const ProfileStability& s);
/// For a profile that did not finish (interrupted, failed, or still being written), what to tell
/// whoever plans from it: the model rests on what it recorded until then. Empty for a complete one.
std::string unfinishedProfileWarning(const store::RunMeta& m);
/// For a run database that is not a profile (a plan's `run`): that its fits rest on
/// the minibatch sizes it ran, naming them. Empty for a profile.
std::string notAProfileWarning(const store::RunData& d);

}  // namespace swapscope::perf
