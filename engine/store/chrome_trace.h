// SPDX-License-Identifier: MIT
/// @brief One recorded iteration of a run database as Chrome trace JSON, which Perfetto and
/// chrome://tracing open: the compute, swap-out and swap-in streams are threads, stalls are
/// marked on the compute thread, and the pool bytes are a counter. Times are microseconds from
/// the run's start.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "store/run_db.h"

namespace swapscope::store {

/// The largest minibatch with a recorded iteration (what `swapscope trace` and the app's Timeline
/// show by default). Throws Error(BadInput) naming the file when it holds no iterations.
std::int64_t largestRecordedK(const RunData& run);

/// The recorded iteration `iteration` (0-based) at `k`. Throws Error(BadInput) naming the file and
/// the k values recorded when there is none.
const IterationRow& recordedIteration(const RunData& run, std::int64_t k, int iteration);

/// Throws Error(BadInput) as recordedIteration() does when (k, iteration) was not recorded.
nlohmann::ordered_json chromeTrace(const RunData& run, std::int64_t k, int iteration);

}  // namespace swapscope::store
