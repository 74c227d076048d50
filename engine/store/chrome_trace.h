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

/// Throws Error(BadInput) naming the k values and iterations present when (k, iteration) was
/// not recorded.
nlohmann::ordered_json chromeTrace(const RunData& run, std::int64_t k, int iteration);

}  // namespace swapscope::store
