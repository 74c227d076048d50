// SPDX-License-Identifier: MIT
/// @brief One recorded iteration of a run database as Chrome trace JSON, which Perfetto and
/// chrome://tracing open: the compute, swap-out and swap-in streams are threads, stalls are
/// marked on the compute thread, and the pool bytes are a counter. Times are microseconds from
/// the run's start.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "store/run_db.h"

namespace swapscope::store {

/// The largest minibatch with a recorded iteration (what `swapscope trace` and the app's Timeline
/// show by default). Throws Error(BadInput) naming the file when it holds no iterations.
std::int64_t largestRecordedK(const RunData& run);

/// The recorded iteration `iteration` (0-based) at `k`. Throws Error(BadInput) naming the file and
/// the k values recorded when there is none.
const IterationRow& recordedIteration(const RunData& run, std::int64_t k, int iteration);

/// A span of a run's clock, in nanoseconds.
struct Span {
  std::int64_t start_ns = 0, end_ns = 0;
};

/// The recompute tasks of one recorded iteration, per backward step, in time order.
std::map<int, std::vector<Span>> recomputeSpans(const RunData& run, std::int64_t k, int iteration);

/// Where the compute stream sat idle before the step of sample `s`, as spans that add up to its
/// `stall_ns`: a step that first runs recomputes counts the idle time before each of them in its
/// stall (docs/run-database.md), so the stall is laid into the gaps between them and before the
/// step's kernels, latest first, never over a recompute. One span ending at the step's start
/// where it runs none. `recomputes` is recomputeSpans() of the sample's iteration.
///
/// No span starts before `iteration_start_ns`, the start of the sample's iteration: a stall lies
/// within its iteration (the reader refuses a row whose stall reaches past the iteration's
/// start), except in the older sub-batched layout, where every pass's row of a step holds the
/// step's stall summed over the passes, bounded only before the last pass. Laid before an
/// earlier pass, such a sum is cut at the iteration's start (a span cut to nothing is left out),
/// so that the trace and the Timeline draw no stall before the iteration (nor before the run).
std::vector<Span> stallSpans(const SampleRow& s, const std::map<int, std::vector<Span>>& recomputes,
                             std::int64_t iteration_start_ns);

/// Throws Error(BadInput) as recordedIteration() does when (k, iteration) was not recorded.
/// No slice starts before the run (every timestamp is 0 or more): a stall slice never starts
/// before its iteration (stallSpans).
nlohmann::ordered_json chromeTrace(const RunData& run, std::int64_t k, int iteration);

}  // namespace swapscope::store
