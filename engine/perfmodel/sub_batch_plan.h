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
  /// planAllowingSubBatches: the bytes K needs in one pass where it did not fit the budget
  /// (PlanResult::batch_need, PlanResult::kNeedOverflows beyond a 64-bit count), which is why
  /// S > 1 was planned; 0 where K fits in one pass.
  std::int64_t whole_need = 0;
};

/// Plans request.batch (required: Error(BadInput) without it) in `sub_batches` passes, or, for
/// sub_batches = 0, in the divisor S of K whose pass fits the budget with the least simulated
/// t_iter (the smaller S on a tie). A given S that does not divide K is Error(BadInput) naming
/// both; where no S trains, pass.trainable is false and pass.reason says why (for the largest
/// S tried: a sub-batch of one sample).
SubBatchPlan planSubBatches(const Planner& planner, const PlanRequest& request,
                            std::int64_t sub_batches);

/// `plan --batch K --allow-sub-batches`: K in one pass where that trains (sub_batches = 1, as
/// Planner::plan at fixed k), else the divisor S > 1 of K with the least simulated t_iter (as
/// planSubBatches with sub_batches = 0), whole_need saying what K alone needs. Error(BadInput)
/// without request.batch; pass.trainable is false where no S trains.
SubBatchPlan planAllowingSubBatches(const Planner& planner, const PlanRequest& request);

/// The plan file of a trainable sub-batch plan: the pass's swap set and steps, with k = K,
/// sub_batches = S, and the whole iteration's predictions (t_iter, throughput, stall; each
/// stalled step's stall summed over the S passes; the predicted starts of the first pass).
store::PlanFile toPlanFile(const SubBatchPlan& plan, const PlanRequest& request,
                           const PerfModel& model, const Network& net, const std::string& backend,
                           const std::string& sourceDb);

}  // namespace swapscope::perf
