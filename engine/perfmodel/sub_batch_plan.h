// SPDX-License-Identifier: MIT
/// @brief Plans for a minibatch run in sub-batches (moDNN; analysis/sub_batch.h): the user fixes
/// the minibatch k, and the planner plans one pass of its S passes, k/S samples (the pass
/// samples), as a plan at that fixed batch; the iteration is S passes and one update
/// (SubBatchTiming). S is given, or chosen among the divisors of k as the one with the least
/// simulated t_iter (moDNN picks the sub-batch size from the profile).
#pragma once

#include <cstdint>
#include <string>

#include "perfmodel/planner.h"

namespace swapscope::perf {

struct SubBatchPlan {
  std::int64_t k = 0;            ///< the minibatch
  std::int64_t sub_batches = 1;  ///< S
  /// The plan of one pass, made at a fixed batch of passSamples() (its pass.best.k).
  PlanResult pass;
  SubBatchTiming timing;  ///< the whole iteration (meaningful when pass.trainable)
  double lr = 0;          ///< eq. 9 at k
  double t_whole = 0;     ///< ceil(E m / (N k)) (t_iter + Δ) on N GPUs; 0 without m
  int candidates = 0;     ///< counts of S planned (1 for a given S)
  /// planAllowingSubBatches: the bytes k needs in one pass where it did not fit the budget
  /// (PlanResult::batch_need, PlanResult::kNeedOverflows beyond a 64-bit count), which is why
  /// S > 1 was planned; 0 where k fits in one pass.
  std::int64_t whole_need = 0;
  /// planAllowingSubBatches: k in one pass fits its peak but its buffers do not pack
  /// (PlanResult::does_not_pack), which is why S > 1 was planned.
  bool whole_does_not_pack = false;
  /// The samples of one pass: k / S.
  std::int64_t passSamples() const { return k / sub_batches; }
};

/// Plans the minibatch request.batch (required: Error(BadInput) without it) in `sub_batches`
/// passes, or, for sub_batches = 0, in the divisor S of k whose pass fits the budget with the
/// least simulated t_iter (the smaller S on a tie). A given S that does not divide k is
/// Error(BadInput) naming both; where no S trains, pass.trainable is false and pass.reason says
/// why (for the largest S tried: a sub-batch of one sample).
SubBatchPlan planSubBatches(const Planner& planner, const PlanRequest& request,
                            std::int64_t sub_batches);

/// `plan --batch K --allow-sub-batches`: the minibatch k = K in one pass where that trains
/// (sub_batches = 1, as Planner::plan at fixed k), else, where k is too large (its peak, or its
/// buffers do not pack), the divisor S > 1 of k with the least simulated t_iter (as
/// planSubBatches with sub_batches = 0), whole_need or whole_does_not_pack saying why.
/// Error(BadInput) without request.batch; pass.trainable is false where no S trains.
SubBatchPlan planAllowingSubBatches(const Planner& planner, const PlanRequest& request);

/// The plan file of a trainable sub-batch plan: the pass's swap set and steps, with the
/// minibatch k, sub_batches = S, and the whole iteration's predictions (t_iter, throughput, stall;
/// each stalled step's stall summed over the S passes; the predicted starts of the first pass).
store::PlanFile toPlanFile(const SubBatchPlan& plan, const PlanRequest& request,
                           const PerfModel& model, const Network& net, const std::string& backend,
                           const std::string& sourceDb);

}  // namespace swapscope::perf
