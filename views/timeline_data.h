// SPDX-License-Identifier: MIT
/// @brief What the Timeline view draws, computed from a run database without any Qt: one recorded
/// iteration at one k as the Streams view's three lanes (compute, swap-out, swap-in), one bar per
/// step row and per transfer row of the iteration, a stall marker for every step whose measured
/// stall is above zero, and the pool's in-use bytes over the iteration. The iteration is picked as
/// `swapscope trace` picks it (store::largestRecordedK, store::recordedIteration), so a measured
/// iteration and a simulated one read the same way.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "store/run_db.h"
#include "views/streams_data.h"

namespace swapscope {

struct TimelineData {
  std::string path;  ///< the run database
  std::int64_t k = 0;
  int iteration = 0;
  /// The lanes, times in seconds from the iteration's start: compute bars for the step rows
  /// (forward, backward and the SGD update's rows), swap-out bars for the device-to-host copies,
  /// swap-in bars for the host-to-device ones (the minibatch's loads as Load bars); the loss
  /// readback runs on the compute stream and is drawn there as a Load bar. t_iter is the
  /// iteration's recorded duration and total_stall its recorded stall (what its steps' stalls add
  /// up to). Stall markers lie within the iteration (store::stallSpans).
  StreamsData lanes;
  std::size_t step_rows = 0;      ///< the database's sample rows for this iteration
  std::size_t transfer_rows = 0;  ///< its transfer rows
  /// The pool's in-use bytes: (seconds from the iteration's start, bytes), in time order.
  std::vector<std::pair<double, std::int64_t>> pool;
  std::int64_t budget = 0;  ///< the run's budget (the pool's size)
};

/// The recorded minibatches of `run`, ascending.
std::vector<std::int64_t> recordedBatches(const store::RunData& run);
/// How many iterations were recorded at `k`.
int recordedIterations(const store::RunData& run, std::int64_t k);

/// Iteration `iteration` at `k` of `run`. Error(BadInput) naming the file and the k values it
/// recorded when there is no such iteration (store::recordedIteration's message).
TimelineData makeTimelineData(const store::RunData& run, std::int64_t k, int iteration);

}  // namespace swapscope
