// SPDX-License-Identifier: MIT
#include "perfmodel/sub_batch_plan.h"

#include <cmath>
#include <optional>

#include "analysis/sub_batch.h"
#include "common/error.h"

namespace swapscope::perf {
namespace {

/// The plan of one S: the pass at fixed k = K/S, and the iteration around it.
SubBatchPlan planOne(const Planner& planner, PlanRequest request, std::int64_t k, std::int64_t s) {
  SubBatchPlan out;
  out.k = k;
  out.sub_batches = s;
  out.candidates = 1;
  request.batch = k / s;
  out.pass = planner.plan(request);
  if (!out.pass.trainable) {
    if (s > 1) {
      out.pass.reason = "in " + std::to_string(s) + " sub-batches of " + std::to_string(k / s) +
                        ": " + out.pass.reason;
    }
    return out;
  }
  out.timing = subBatchIteration(out.pass.best.sim, k, s);
  out.lr = scaledLearningRate(request.lr_base, request.k_base, request.lr_c, k);
  if (request.dataset_size > 0) {
    out.t_whole = std::ceil(request.epochs * static_cast<double>(request.dataset_size) /
                            static_cast<double>(k)) *
                  (out.timing.t_iter + out.pass.delta);
  }
  return out;
}

}  // namespace

SubBatchPlan planSubBatches(const Planner& planner, const PlanRequest& request,
                            std::int64_t sub_batches) {
  if (!request.batch) {
    throwBadInput("sub-batches need a fixed minibatch (--batch K) to split");
  }
  const std::int64_t k = *request.batch;
  if (sub_batches != 0) {
    subBatchSize(k, sub_batches, std::to_string(sub_batches) + " sub-batches");
    return planOne(planner, request, k, sub_batches);
  }
  // Every divisor of K, the least t_iter winning (moDNN: the sub-batch size from the profile).
  std::optional<SubBatchPlan> best;
  SubBatchPlan last;
  int candidates = 0;
  for (std::int64_t s = 1; s <= k; ++s) {
    if (k % s != 0) continue;
    SubBatchPlan p = planOne(planner, request, k, s);
    ++candidates;
    if (p.pass.trainable && (!best || p.timing.t_iter < best->timing.t_iter)) {
      best = std::move(p);
    } else if (!p.pass.trainable) {
      last = std::move(p);
    }
  }
  SubBatchPlan out = best ? std::move(*best) : std::move(last);
  out.candidates = candidates;
  return out;
}

store::PlanFile toPlanFile(const SubBatchPlan& plan, const PlanRequest& request,
                           const PerfModel& model, const Network& net, const std::string& backend,
                           const std::string& sourceDb) {
  PlanRequest passRequest = request;
  passRequest.batch = plan.k / plan.sub_batches;
  store::PlanFile p = toPlanFile(plan.pass, passRequest, model, net, backend, sourceDb);
  if (plan.sub_batches == 1) return p;
  const double passes = static_cast<double>(plan.sub_batches);
  p.k = plan.k;
  p.sub_batches = plan.sub_batches;
  p.learning_rate = plan.lr;
  store::PlanPredictions& pr = p.predictions;
  pr.t_iter_s = plan.timing.t_iter;
  pr.throughput = plan.timing.throughput;
  pr.stall_s = plan.timing.idle;
  pr.t_whole_s = plan.t_whole;
  for (store::PlanStall& s : pr.stalls)
    s.seconds *= passes;
  return p;
}

}  // namespace swapscope::perf
