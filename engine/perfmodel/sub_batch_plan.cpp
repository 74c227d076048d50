// SPDX-License-Identifier: MIT
#include "perfmodel/sub_batch_plan.h"

#include <optional>
#include <vector>

#include "analysis/sub_batch.h"
#include "common/error.h"

namespace swapscope::perf {
namespace {

/// The plan of one S for minibatch k: the pass, planned at a fixed batch of its k/S samples, and
/// the iteration around it.
SubBatchPlan planOne(const Planner& planner, PlanRequest request, std::int64_t k, std::int64_t s) {
  SubBatchPlan out;
  out.k = k;
  out.sub_batches = s;
  out.candidates = 1;
  request.batch = out.passSamples();
  out.pass = planner.plan(request);
  if (!out.pass.trainable) {
    if (s > 1) {
      out.pass.reason = "in " + std::to_string(s) + " sub-batches of " +
                        std::to_string(out.passSamples()) + ": " + out.pass.reason;
    }
    return out;
  }
  out.timing = subBatchIteration(out.pass.best.sim, k, s);
  out.lr = scaledLearningRate(request.lr_base, request.k_base, request.lr_c, k);
  out.t_whole = wholeTrainingSeconds(k, out.timing.t_iter, out.pass.delta, request);
  return out;
}

/// The divisors S >= `from` of minibatch k, the least t_iter winning (moDNN: the sub-batch size
/// from the profile; the smaller S on a tie).
SubBatchPlan leastTime(const Planner& planner, const PlanRequest& request, std::int64_t k,
                       std::int64_t from) {
  std::optional<SubBatchPlan> best;
  SubBatchPlan last;
  int candidates = 0;
  // The divisors in ascending order, by trial division up to sqrt(k): a k of 2^61 - 1 (prime)
  // takes about 1.5e9 divisions instead of 2.3e18.
  std::vector<std::int64_t> low, high;
  for (std::int64_t d = 1; d <= k / d; ++d) {
    if (k % d != 0) continue;
    low.push_back(d);
    if (d != k / d) high.push_back(k / d);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  for (const std::int64_t s : low) {
    if (s < from) continue;
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

std::int64_t fixedBatch(const PlanRequest& request) {
  if (!request.batch) throwBadInput("sub-batches need a fixed minibatch (--batch K) to split");
  return *request.batch;
}

}  // namespace

SubBatchPlan planSubBatches(const Planner& planner, const PlanRequest& request,
                            std::int64_t sub_batches) {
  const std::int64_t k = fixedBatch(request);
  if (sub_batches != 0) {
    subBatchSize(k, sub_batches, std::to_string(sub_batches) + " sub-batches");
    return planOne(planner, request, k, sub_batches);
  }
  return leastTime(planner, request, k, 1);
}

SubBatchPlan planAllowingSubBatches(const Planner& planner, const PlanRequest& request) {
  const std::int64_t k = fixedBatch(request);
  SubBatchPlan whole = planOne(planner, request, k, 1);
  // Only a minibatch too large for the budget is split (its peak, or its buffers, which do not
  // pack); any other refusal (a budget below this policy's need at k = 1, which no S lowers)
  // stands as it is.
  const bool tooLarge = whole.pass.batch_need != 0 || whole.pass.does_not_pack;
  if (whole.pass.trainable || !tooLarge || k == 1) return whole;
  SubBatchPlan out = leastTime(planner, request, k, 2);
  out.candidates += 1;
  out.whole_need = whole.pass.batch_need;
  out.whole_does_not_pack = whole.pass.does_not_pack;
  return out;
}

store::PlanFile toPlanFile(const SubBatchPlan& plan, const PlanRequest& request,
                           const PerfModel& model, const Network& net, const std::string& backend,
                           const std::string& sourceDb) {
  PlanRequest passRequest = request;
  passRequest.batch = plan.passSamples();
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
