// SPDX-License-Identifier: MIT
/// @brief One iteration's timeline from its tasks' timings: the tasks relative to the
/// iteration's start, the compute stream's stalls per step and per pass, the pool in use as each
/// step starts, and each step's t_ready. A pure function of the timings, with no device.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "analysis/pool_allocator.h"
#include "runtime/device.h"
#include "runtime/executor.h"

namespace swapscope::rt {

/// What an iteration's tasks left to turn into its timeline.
struct IterationTimings {
  /// Every task's timing, in any order, in the device's clock.
  std::vector<TaskTiming> tasks;
  /// Per compute step submitted: (its compute-stream sequence number, pool bytes in use then).
  std::vector<std::pair<std::uint64_t, std::int64_t>> in_use;
  /// Per pass and step, at IterationRecord::passStep: the tasks the step waited on.
  std::vector<Fence> step_wait;
  /// The pool bytes in use at the iteration's end.
  std::int64_t in_use_at_end = 0;
};

/// Fills `rec`'s ops, stall_ns, pass_stall_ns, stall_total_ns, pool and ready_ns from `t`.
/// `rec` holds start_ns, duration_ns, and stall_ns and pass_stall_ns sized and zero; steps
/// 1..2 `forwardSteps` are the GMAP's compute steps. A stall is the compute stream's idle gap
/// before a compute or recompute task of a step: from the later of the iteration's start and
/// the end of every earlier compute-stream task to the task's start.
void fillTimeline(IterationRecord& rec, int forwardSteps, IterationTimings t);

}  // namespace swapscope::rt
