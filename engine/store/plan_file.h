// SPDX-License-Identifier: MIT
/// @brief The plan file: what `swapscope plan` (and the desktop app) exports and `swapscope run`
/// executes. Versioned JSON, "format": "swapscope-plan", "version": 2 (version 1, without
/// sub_batches and recompute, still reads as one sub-batch that recomputes nothing); the JSON
/// Schema is
/// docs/plan.schema.json and docs/plan-json.md describes each field. Reading validates every
/// field and names the first wrong one; it never guesses a default for a required field.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/files.h"

namespace swapscope::store {

inline constexpr int kPlanVersion = 2;

/// One swapped FM: its device memory is released after forward step `release_step` (its last
/// forward reader; the offload began after its producer's step, and the minibatch needs none as
/// the host holds it) and it is prefetched for backward step `prefetch_step` (the GMAP's steps).
struct PlanSwap {
  std::string fm;
  int release_step = 0;
  int prefetch_step = 0;
  friend bool operator==(const PlanSwap&, const PlanSwap&) = default;
};

/// One recomputed FM (version 2): its device memory is released after forward step
/// `release_step` (its last forward reader) and it is re-made, its layer's forward kernel run
/// again, in backward step `recompute_step` (the GMAP's steps; analysis/gmap.h).
struct PlanRecompute {
  std::string fm;
  int release_step = 0;
  int recompute_step = 0;
  friend bool operator==(const PlanRecompute&, const PlanRecompute&) = default;
};

/// A step predicted to wait, and for how long.
struct PlanStall {
  int step = 0;
  std::string layer;
  std::string direction;  ///< "fwd" or "bwd"
  double seconds = 0;
  friend bool operator==(const PlanStall&, const PlanStall&) = default;
};

struct PlanPredictions {
  double t_iter_s = 0;
  double throughput = 0;  ///< samples per second
  std::int64_t peak_bytes = 0;
  double stall_s = 0;
  double t_whole_s = 0;  ///< E epochs of m samples; 0 when not asked
  double delta_s = 0;    ///< all-reduce time per iteration
  bool extrapolated = false;
  bool transferred = false;
  std::vector<PlanStall> stalls;
  /// Per step 1..2N, the predicted start from the iteration's start (optional: empty in plans
  /// written before it was recorded).
  std::vector<double> start_s;
  friend bool operator==(const PlanPredictions&, const PlanPredictions&) = default;
};

struct PlanFile {
  std::string network_name;
  std::string structure_hash;  ///< Network::structureHash()
  std::string device_name;
  std::string backend;    ///< "cpu", "cuda"
  std::string source_db;  ///< the run database the model was fitted to
  std::string policy;     ///< a name in the policy table (analysis/policy.h)
  std::string mode;       ///< argmin, paper, fixed
  std::int64_t budget = 0;
  std::int64_t k = 0;
  /// S: the minibatch runs as S passes of k/S samples before one update (version 2; 1 in a
  /// version-1 file). The swap set, the steps and peak_bytes are one pass's.
  std::int64_t sub_batches = 1;
  double learning_rate = 0;
  int reuse_delay = 0;
  /// Backward prefetches the schedule opens early (analysis/prefetch_schedule.h) where its
  /// placement packs (analysis/placement.h); -1: not recorded (a plan of an older Swapscope).
  int prefetches_moved = -1;
  std::vector<PlanSwap> swap_set;
  /// The recomputed FMs (version 2; written only when there are some): disjoint from swap_set,
  /// and only in a plan of a policy that recomputes.
  std::vector<PlanRecompute> recompute;
  PlanPredictions predictions;
  friend bool operator==(const PlanFile&, const PlanFile&) = default;
};

nlohmann::ordered_json planToJson(const PlanFile& plan);
/// Validates and reads a plan. Error(BadInput) naming `source` and the field (as a path such as
/// "predictions.stalls[2].seconds") and why, at the first problem found.
PlanFile planFromJson(const nlohmann::json& doc, const std::string& source);

/// Writes the plan as indented JSON through files::writeOutputFile (an existing file only with
/// rules.force, never an input); Error(Runtime) naming the file and the reason when it cannot.
/// A relative source_db (relative to the current folder) is written relative to the plan
/// file's folder, where sourceDbPath() looks for it.
void writePlanFile(const PlanFile& plan, const std::string& path,
                   const files::OutputRules& rules = {});
/// The text writePlanFile writes to `path`, its source_db relative to the folder of `path`:
/// "-" (standard output) gives it relative to the current folder, as `plan --json` prints it.
std::string planFileText(const PlanFile& plan, const std::string& path);
/// Reads and validates a plan file; Error(BadInput) naming the file when it is missing, not
/// JSON, or fails validation.
PlanFile readPlanFile(const std::string& path);
/// Validates and reads a plan's JSON text (a file's, or standard input's), with readPlanFile's
/// checks and messages; `source` names where the text came from.
PlanFile planFromText(const std::string& text, const std::string& source);
/// The run database to open for the source_db of the plan read from `planPath`: an absolute
/// path as it is, a relative one from the plan file's folder. Empty when the plan names none.
std::string sourceDbPath(const PlanFile& plan, const std::string& planPath);

}  // namespace swapscope::store
