// SPDX-License-Identifier: MIT
/// @brief Commits one recorded iteration's rows to a run database: the profile's and a plan
/// run's shared step.
#pragma once

#include <memory>

#include "collectors/timeline_rows.h"
#include "runtime/executor.h"
#include "store/run_db.h"

namespace swapscope::collect {

/// Commits one recorded iteration's rows to `db`. With `share` it returns them for the progress
/// report, the pool bytes included even where `ctx` leaves them out of the database.
std::shared_ptr<const store::IterationRows> commitIteration(store::RunWriter& db,
                                                            const rt::IterationRecord& rec,
                                                            RowContext ctx, bool share);

}  // namespace swapscope::collect
