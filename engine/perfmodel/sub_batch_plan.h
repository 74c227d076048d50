// SPDX-License-Identifier: MIT
/// @brief Plans for a minibatch run in sub-batches (moDNN; analysis/sub_batch.h): the user fixes
/// K, and each of the S passes of K/S samples is planned by the planner as a plan at fixed k =
/// K/S; the iteration is S passes and one update (SubBatchTiming). S is given, or chosen among
/// the divisors of K as the one with the least simulated t_iter (moDNN picks the sub-batch size
/// from the profile).
#pragma once

#include <cstdint>
#include <string>

#include "perfmodel/planner.h"

namespace swapscope::perf {

struct SubBatchPlan {
  std::int64_t k = 0;            ///< the minibatch K
  std::int64_t sub_batches = 1;  ///< S
  PlanResult pass;               ///< the plan of one pass (pass.best.k = K / S)
  SubBatchTiming timing;         ///< the whole iteration (meaningful when pass.trainable)
  double lr = 0;                 ///< eq. 9 at K
  double t_whole = 0;            ///< ceil(E m / K) (t_iter + Δ); 0 without m
  int candidates = 0;            ///< counts of S planned (1 for a given S)
};

/// Plans request.batch (required: Error(BadInput) without it) in `sub_batches` passes, or, for
/// sub_batches = 0, in the divisor S of K whose pass fits the budget with the least simulated
/// t_iter (the smaller S on a tie). A given S that does not divide K is Error(BadInput) naming
/// both; where no S trains, pass.trainable is false and pass.reason says why (for the largest
/// S tried: a sub-batch of one sample).
SubBatchPlan planSubBatches(const Planner& planner, const PlanRequest& request,
                            std::int64_t sub_batches);

/// The plan file of a trainable sub-batch plan: the pass's swap set and steps, with k = K,
/// sub_batches = S, and the whole iteration's predictions (t_iter, throughput, stall; each
/// stalled step's stall summed over the S passes; the predicted starts of the first pass).
store::PlanFile toPlanFile(const SubBatchPlan& plan, const PlanRequest& request,
                           const PerfModel& model, const Network& net, const std::string& backend,
                           const std::string& sourceDb);

}  // namespace swapscope::perf
