// SPDX-License-Identifier: MIT
// The planner simulates the schedule the executor runs: both take the reuse delay and the moved
// prefetches from the same analysis functions, for every policy, at a budget of exactly the
// plan's peak, at 1.02 times it and at 1.5 times it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "analysis/network_analysis.h"
#include "analysis/placement.h"
#include "analysis/prefetch_schedule.h"
#include "analysis/reuse_delay.h"
#include "graph/zoo.h"
#include "perfmodel/hand_made_run.h"
#include "perfmodel/planner.h"
#include "perfmodel/sub_batch_plan.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/executor.h"
#include "runtime/test_networks.h"
#include "runtime/wrapped_cpu_device.h"
#include "sample_runs.h"
#include "store/run_db.h"

namespace swapscope::perf {
namespace {

/// A run database for `net` in which every step takes 1 ms per sample and the link moves 1 GB/s:
/// enough for a model whose plans simulate (the reuse delay does not depend on the times).
store::RunData flatRun(const Network& net) {
  store::RunData run = perf::testing::handMadeRun(net, "flat.swapdb");
  run.meta.extra["pool_alignment"] = std::to_string(rt::createCpuDevice()->poolAlignment());
  for (const std::int64_t k : {1, 2, 4}) {
    run.iterations.push_back({k, 0, 0, 1, 0, 0, 0, 0, 0});
    for (int i = 0; i < net.size(); ++i) {
      if (i == net.inputLayer()) continue;
      for (const store::Direction d : {store::Direction::Forward, store::Direction::Backward})
        run.samples.push_back({k, 0, 0, i, d, 0, 0, 1'000'000 * k, 0, -1, -1});
    }
    perf::testing::addCopies(run, k, 1000.0 * static_cast<double>(k), 1e9);
  }
  return run;
}

/// `policy`'s plan at minibatch k within `budget`.
PlanResult planAtBatch(const Planner& planner, Policy policy, std::int64_t budget, std::int64_t k) {
  PlanRequest req;
  req.policy = policy;
  req.budget = budget;
  req.batch = k;
  return planner.plan(req);
}

/// The schedule an iteration runs with under placeAhead's decision, or none where it does not
/// run: (delay, moved).
std::optional<std::pair<int, bool>> runs(const AheadOfTime& a) {
  if (a.placed) return std::pair{a.placed->delay, a.placed->moved};
  if (a.run_time_moved) return std::pair{0, *a.run_time_moved};
  return std::nullopt;
}

/// The model fitted to the resnet56 sample run.
const PerfModel& sampleModel() {
  static const PerfModel model =
      PerfModel::fit(store::RunReader(swapscope::testing::resnet56Run()).load());
  return model;
}

/// A zoo network at its own input size planned under the resnet56 sample's model, the pool shape
/// of that model's device (rt::poolHolds takes it), and the network's plan under `policy`.
struct SampleNet {
  SampleNet(const char* model, Policy policy)
      : net(buildZooModel(model)), plan(planMemory(net, planner.costs(), policy)) {}
  Network net;
  Planner planner{sampleModel(), net};
  rt::PoolShape shape{sampleModel().poolAlignment(), sampleModel().poolPadding()};
  MemoryPlan plan;
};

/// `policy`'s argmin plan within `budget`, on one planner thread.
PlanRequest oneThread(Policy policy, std::int64_t budget) {
  PlanRequest req;
  req.policy = policy;
  req.budget = budget;
  req.threads = 1;
  return req;
}

/// f times `bytes`, rounded down.
std::int64_t scaled(double f, std::int64_t bytes) {
  return static_cast<std::int64_t>(std::floor(f * static_cast<double>(bytes)));
}

TEST(PlacementAgreement, PlannerAndExecutorChooseTheSameReuseDelayAndMovedPrefetches) {
  const Network net = rt::everyKind();
  const PerfModel model = PerfModel::fit(flatRun(net));
  const Planner planner(model, net);
  const std::vector<LayerCost>& costs = planner.costs();
  auto device = rt::createCpuDevice();
  const std::int64_t k = 4;
  std::set<int> delaysSeen;
  // accudnn (no fixed set) is the last; its set depends on the budget, which is taken from
  // swap-all's peak.
  for (const int policyIndex : {0, 1, 2, 3}) {
    const bool accudnn = policyIndex == 3;
    const Policy policy = accudnn ? Policy::SwapAll : static_cast<Policy>(policyIndex);
    const SwapSet fixedSet = makeSwapSet(policy, net, costs);
    const std::int64_t basePeak = planMemory(net, costs, fixedSet).curve.peak(k);
    for (const double factor : {1.0, 1.02, 1.5}) {
      const std::int64_t budget = scaled(factor, basePeak);
      SCOPED_TRACE((accudnn ? std::string("accudnn") : std::string(policyName(policy))) + " at " +
                   std::to_string(factor) + " x the peak (" + std::to_string(budget) + " bytes)");
      const std::optional<Evaluation> e =
          accudnn ? planner.accudnnAt(k, budget) : planner.evaluate(k, fixedSet, budget);
      ASSERT_TRUE(e.has_value());
      const rt::SwapExecutor ex(*device, net, k, e->swapped, budget);
      EXPECT_EQ(e->reuse_delay, ex.plannedReuseDelay());
      EXPECT_EQ(e->reuse_delay, ex.reuseDelay()) << "the planned delay's placement did not pack";
      EXPECT_EQ(e->prefetches_moved, ex.prefetchesMoved());
      EXPECT_EQ(e->peak, ex.predictedPeak());
      delaysSeen.insert(ex.reuseDelay());
    }
  }
  // The cases reach more than one delay, so the agreement is not that of a constant.
  EXPECT_GE(delaysSeen.size(), 2u);
}

// A budget can hold the delayed peak of the schedule with moved prefetches and still not pack it:
// the executor then runs without the moves (or without the delay), and the plan must predict
// that schedule. resnet20 at k = 32, at budgets from swap-all's peak to 1.02 x vdnn-conv's: at
// exactly swap-all's peak the moved schedule (whose peak is the plan's) does not pack.
TEST(PlacementAgreement, APlanPredictsTheScheduleThatPacksWhereTheMovedOneDoesNot) {
  const Network net = buildZooModel("resnet20");
  const PerfModel model = PerfModel::fit(flatRun(net));
  const Planner planner(model, net);
  auto device = rt::createCpuDevice();
  const std::int64_t k = 32;
  const std::vector<LayerCost> costs = computeLayerCosts(net);
  const MemoryPlan swapAll = planMemory(net, costs, makeSwapSet(Policy::SwapAll, net, costs));
  const std::int64_t swapAllPeak = swapAll.curve.peak(k);
  const std::int64_t vdnnPeak =
      planMemory(net, costs, makeSwapSet(Policy::VdnnConv, net, costs)).curve.peak(k);
  int unmoved = 0, planned = 0;  // plans whose moved prefetches did not pack; plans made
  for (const Policy policy : {Policy::SwapAll, Policy::VdnnConv, Policy::AccUdnn}) {
    for (const std::int64_t budget :
         {swapAllPeak, scaled(1.02, swapAllPeak), scaled(1.25, swapAllPeak), vdnnPeak,
          scaled(1.02, vdnnPeak)}) {
      SCOPED_TRACE(std::string(policyName(policy)) + " at " + std::to_string(budget) + " bytes");
      const PlanResult r = planAtBatch(planner, policy, budget, k);
      if (!r.trainable) continue;  // vdnn-conv does not fit below its peak
      ++planned;
      const rt::SwapExecutor ex(*device, net, k, r.best.swapped, budget);
      EXPECT_EQ(r.best.reuse_delay, ex.reuseDelay());
      EXPECT_EQ(r.best.prefetches_moved, ex.prefetchesMoved());
      // The plan's set simulated on its own (the app's view of a recorded plan) too.
      const std::optional<Evaluation> alone = planner.evaluate(k, r.best.swapped, budget);
      ASSERT_TRUE(alone.has_value());
      EXPECT_EQ(alone->reuse_delay, ex.reuseDelay());
      EXPECT_EQ(alone->prefetches_moved, ex.prefetchesMoved());
      EXPECT_EQ(alone->sim.t_iter, r.best.sim.t_iter);
      const MemoryPlan moved = planMemory(net, costs, r.best.swapped);
      if (movePrefetches(moved.gmap, moved.curve, k, moved.curve.peak(k)).moved > 0 &&
          ex.prefetchesMoved() == 0)
        ++unmoved;
    }
  }
  EXPECT_EQ(planned, 12);
  EXPECT_GT(unmoved, 0) << "no case where the moved schedule does not pack: the test shows nothing";
}

// A profile made on a device whose pool pads and aligns as the CUDA backend's does (its run
// metadata says so) gives plans sized as that pool holds them: the peak the executor predicts,
// and the schedule its placement decision runs. The same plans made from the CPU's unpadded
// profile do not agree with that executor, so the padding is what the test checks.
TEST(PlacementAgreement, APaddedPoolsPlanIsPlacedAsThatPoolPlacesIt) {
  const Network net = buildZooModel("resnet20");
  store::RunData run = flatRun(net);
  const PerfModel unpadded = PerfModel::fit(run);
  run.meta.extra["pool_alignment"] = "256";
  run.meta.extra["pool_padding"] = "16";
  run.meta.extra["workspace_padding"] = "256";
  const PerfModel model = PerfModel::fit(run);
  ASSERT_EQ(model.poolPadding(), (PoolPadding{16, 256}));
  const Planner planner(model, net), cpuPlanner(unpadded, net);
  // The CPU backend with the CUDA backend's pool: aligned to 256 bytes, buffers padded to 16
  // and kernel workspaces to 256.
  rt::WrappedCpuDevice device({16, 256}, 256);
  const std::int64_t k = 32;
  const std::vector<LayerCost> costs = computeLayerCosts(net);
  const auto paddedPeak = [&](Policy policy) {
    return computeMemoryCurve(
               padGmap(planMemory(net, costs, makeSwapSet(policy, net, costs)).gmap, {16, 256}))
        .peak(k);
  };
  const std::int64_t swapAllPeak = paddedPeak(Policy::SwapAll),
                     vdnnPeak = paddedPeak(Policy::VdnnConv);
  int planned = 0, cpuDisagrees = 0;
  for (const Policy policy : {Policy::SwapAll, Policy::VdnnConv, Policy::AccUdnn}) {
    for (const std::int64_t budget :
         {swapAllPeak, scaled(1.02, swapAllPeak), scaled(1.25, swapAllPeak), vdnnPeak,
          scaled(1.02, vdnnPeak)}) {
      SCOPED_TRACE(std::string(policyName(policy)) + " at " + std::to_string(budget) + " bytes");
      const PlanResult r = planAtBatch(planner, policy, budget, k);
      if (!r.trainable) continue;  // vdnn-conv does not fit below its peak
      ++planned;
      const rt::SwapExecutor ex(device, net, k, r.best.swapped, budget);
      EXPECT_EQ(r.best.peak, ex.predictedPeak());
      EXPECT_EQ(r.best.reuse_delay, ex.reuseDelay());
      EXPECT_EQ(r.best.prefetches_moved, ex.prefetchesMoved());
      const std::optional<Evaluation> cpu = cpuPlanner.evaluate(k, r.best.swapped, budget);
      if (!cpu || cpu->peak != ex.predictedPeak() || cpu->reuse_delay != ex.reuseDelay() ||
          cpu->prefetches_moved != ex.prefetchesMoved())
        ++cpuDisagrees;
    }
  }
  EXPECT_GE(planned, 10);
  EXPECT_EQ(cpuDisagrees, planned) << "the unpadded plans agree: the test shows nothing";
}

// The argmin search values every k on the schedule the executor will run, not just the plan it
// returns: its choice is the k of least time per sample among the placed evaluations of every
// k (planner.evaluate places; none where the plan does not run). GoogLeNet under the resnet56
// sample's model, fixed policies, over budgets that hold k <= 48 (every k is then a candidate);
// at some of them the k of least time per sample on the simulated schedule does not pack (at
// exactly vdnn-conv's peak at k, its plan runs neither ahead of time nor at run time), and the
// placed search chooses another k.
TEST(PlacementAgreement, TheSearchComparesEveryKOnItsPlacedSchedule) {
  const Network net = buildZooModel("googlenet");
  const PerfModel& model = sampleModel();
  const Planner planner(model, net);
  const std::vector<LayerCost> costs = computeLayerCosts(net);
  int budgets = 0, changed = 0, notRun = 0;
  for (const Policy policy : {Policy::SwapAll, Policy::VdnnConv}) {
    const MemoryPlan plan = planMemory(net, costs, makeSwapSet(policy, net, costs));
    const std::int64_t low = plan.curve.peak(24), high = plan.curve.peak(48);
    std::vector<std::int64_t> budgetsTried;
    for (int step = 0; step <= 40; ++step)
      budgetsTried.push_back(low + (high - low) * step / 40);
    // Exactly the peak at k, where vdnn-conv's largest k does not pack (those the grid has
    // not already).
    for (std::int64_t k = 25; k < 48; k += 2) {
      const std::int64_t peak = plan.curve.peak(k);
      if (std::find(budgetsTried.begin(), budgetsTried.end(), peak) == budgetsTried.end())
        budgetsTried.push_back(peak);
    }
    for (const std::int64_t budget : budgetsTried) {
      SCOPED_TRACE(std::string(policyName(policy)) + " at " + std::to_string(budget) + " bytes");
      const PlanResult r = planner.plan(oneThread(policy, budget));
      ASSERT_TRUE(r.trainable);
      ASSERT_LE(r.k_max, 48);
      ++budgets;
      // Independent of the search: every k, placed (evaluate) and as simulated before placement
      // (evaluate at the delay the executor plans, moves included).
      std::int64_t placedBest = 0, simulatedBest = 0;
      double placedObj = 0, simulatedObj = 0, placedTime = 0;
      for (std::int64_t k = 1; k <= r.k_max; ++k) {
        const std::optional<Evaluation> placed = planner.evaluate(k, plan.gmap.swapped, budget);
        notRun += !placed;
        const double obj = placed ? placed->sim.t_iter / static_cast<double>(k) : 0;
        if (placed && (placedBest == 0 || obj < placedObj)) {
          placedBest = k;
          placedObj = obj;
          placedTime = placed->sim.t_iter;
        }
        const std::vector<int> moveTo =
            movePrefetches(plan.gmap, plan.curve, k, plan.curve.peak(k)).move_to;
        const int delay = chooseReuseDelay(plan.gmap, executionOrder(plan.gmap, moveTo), k, budget,
                                           model.poolAlignment());
        const std::optional<Evaluation> simulated =
            planner.evaluate(k, plan.gmap.swapped, budget, delay);
        ASSERT_TRUE(simulated.has_value());
        const double sObj = simulated->sim.t_iter / static_cast<double>(k);
        if (simulatedBest == 0 || sObj < simulatedObj) {
          simulatedBest = k;
          simulatedObj = sObj;
        }
      }
      EXPECT_EQ(r.best.k, placedBest);
      EXPECT_EQ(r.best.sim.t_iter, placedTime);
      changed += simulatedBest != placedBest;
    }
  }
  EXPECT_EQ(budgets, 98);  // 41 of the grid and 8 peaks not on it, per policy
  EXPECT_GT(notRun, 0) << "every plan runs: the placed search's exclusions are not shown";
  EXPECT_GT(changed, 0) << "placement never changes the best k: the test shows nothing";
}

// Every plan the planner returns runs: the executor's own check (rt::poolHolds: its placement
// decision, ahead of time or at run time) accepts it. GoogLeNet under the resnet56 sample's
// model, accudnn and vdnn-conv, at budgets of vdnn-conv's peak at k (and 0.1 % above): at
// exactly its peak, vdnn-conv's plan packs neither ahead of time nor at run time (the pool's
// fragmentation), so a search that took a plan whose peak fits for one that runs would return
// it. Where every k is a candidate, the search's vdnn-conv plan is the best of those that run,
// every k placed.
TEST(PlacementAgreement, EveryPlanThePlannerReturnsRuns) {
  const SampleNet sample("googlenet", Policy::VdnnConv);
  const auto& [net, planner, shape, vdnn] = sample;
  int plans = 0, kMaxRefused = 0, notRun = 0;
  for (std::int64_t at = 1; at <= 31; at += 2) {
    // Exactly vdnn-conv's peak at k, and 0.1 % above it.
    const std::int64_t peak = vdnn.curve.peak(at);
    const std::int64_t budget = peak + (at % 4 == 1 ? 0 : peak / 1000);
    const std::int64_t kMax = vdnn.curve.kMax(budget, 4096);
    kMaxRefused += !rt::poolHolds(vdnn.gmap, kMax, budget, shape);
    for (const Policy policy : {Policy::AccUdnn, Policy::VdnnConv}) {
      SCOPED_TRACE(std::string(policyName(policy)) + " at " + std::to_string(budget) + " bytes");
      const PlanResult r = planner.plan(oneThread(policy, budget));
      if (!r.trainable) {
        EXPECT_NE(r.reason.find("pack neither ahead of time nor at run time"), std::string::npos)
            << r.reason;
        continue;
      }
      ++plans;
      EXPECT_TRUE(
          rt::poolHolds(buildGmap(net, planner.costs(), r.best.swapped), r.best.k, budget, shape))
          << "k = " << r.best.k;
      if (policy != Policy::VdnnConv || r.k_max > 48) continue;
      // Where every k is a candidate: the k of least time per sample of those that run
      // (planner.evaluate places as the executor does; none where the plan does not run).
      std::int64_t bestK = 0;
      double bestObj = 0;
      for (std::int64_t k = 1; k <= r.k_max; ++k) {
        const std::optional<Evaluation> e = planner.evaluate(k, vdnn.gmap.swapped, budget);
        notRun += !e;
        if (e && (bestK == 0 || e->sim.t_iter / static_cast<double>(k) < bestObj)) {
          bestK = k;
          bestObj = e->sim.t_iter / static_cast<double>(k);
        }
      }
      EXPECT_EQ(r.best.k, bestK);
    }
  }
  EXPECT_GT(plans, 24);
  EXPECT_GT(kMaxRefused, 0) << "every largest k runs: the test shows nothing";
  EXPECT_GT(notRun, 0) << "every k runs: the search's exactness is not shown";
  // Near the minimum of ResNet-50, the search over k still finds a plan that runs.
  const SampleNet r50("resnet50", Policy::SwapAll);
  for (const int i : {5, 9}) {
    const PlanRequest req = oneThread(
        Policy::AccUdnn, static_cast<std::int64_t>(static_cast<double>(r50.planner.minBudget()) *
                                                   std::pow(3.0, i / 120.0)));
    SCOPED_TRACE("accudnn at " + std::to_string(req.budget) + " bytes");
    const PlanResult r = r50.planner.plan(req);
    ASSERT_TRUE(r.trainable) << r.reason;
    EXPECT_TRUE(rt::poolHolds(buildGmap(r50.net, r50.planner.costs(), r.best.swapped), r.best.k,
                              req.budget, r50.shape));
  }
}

// The search over k simulates k values in order of a bound and stops where the bound passes
// the slowest time of a plan already simulated. Where that plan does not run, the k values it
// pruned are simulated after all. GoogLeNet, vdnn-conv at exactly its peak at k = 2: the plan at
// k = 2 bounds k = 1 out and does not pack; k = 1 runs. And accudnn at vdnn-conv's peak at
// k = 65, where the plans of the k values that pruned others do not run either.
TEST(PlacementAgreement, TheKValuesAPlanThatDoesNotRunPrunedAreSearched) {
  const SampleNet sample("googlenet", Policy::VdnnConv);
  const auto& [net, planner, shape, vdnn] = sample;
  const PlanResult r = planner.plan(oneThread(Policy::VdnnConv, vdnn.curve.peak(2)));
  ASSERT_TRUE(r.trainable) << r.reason;
  EXPECT_EQ(r.k_max, 2);
  EXPECT_FALSE(planner.evaluate(2, vdnn.gmap.swapped, vdnn.curve.peak(2)).has_value());
  EXPECT_EQ(r.best.k, 1);
  EXPECT_TRUE(rt::poolHolds(vdnn.gmap, 1, vdnn.curve.peak(2), shape));
  const PlanResult a = planner.plan(oneThread(Policy::AccUdnn, vdnn.curve.peak(65)));
  ASSERT_TRUE(a.trainable) << a.reason;
  EXPECT_TRUE(rt::poolHolds(buildGmap(net, planner.costs(), a.best.swapped), a.best.k,
                            vdnn.curve.peak(65), shape));
  // The plan of the k the search takes where the pruned k values are not searched again (40)
  // runs and is slower per sample.
  const std::optional<Evaluation> pruned = planner.accudnnAt(40, vdnn.curve.peak(65));
  ASSERT_TRUE(pruned.has_value());
  const std::optional<Evaluation> placed =
      planner.evaluate(40, pruned->swapped, vdnn.curve.peak(65));
  ASSERT_TRUE(placed.has_value());
  EXPECT_LT(a.best.sim.t_iter / static_cast<double>(a.best.k), placed->sim.t_iter / 40.0);
}

// `plan --batch K --allow-sub-batches` splits K where its plan's peak fits but its buffers do
// not pack: GoogLeNet, vdnn-conv, k = 4 at exactly its peak (the executor refuses k = 4 in one
// pass and takes k = 2).
TEST(PlacementAgreement, AllowingSubBatchesSplitsAMinibatchWhoseBuffersDoNotPack) {
  const SampleNet sample("googlenet", Policy::VdnnConv);
  const auto& [net, planner, shape, vdnn] = sample;
  PlanRequest req = oneThread(Policy::VdnnConv, vdnn.curve.peak(4));
  req.batch = 4;
  EXPECT_FALSE(rt::poolHolds(vdnn.gmap, 4, req.budget, shape));
  const PlanResult whole = planner.plan(req);
  EXPECT_FALSE(whole.trainable);
  EXPECT_TRUE(whole.does_not_pack);
  const SubBatchPlan split = planAllowingSubBatches(planner, req);
  ASSERT_TRUE(split.pass.trainable) << split.pass.reason;
  EXPECT_GT(split.sub_batches, 1);
  EXPECT_TRUE(split.whole_does_not_pack);
  EXPECT_TRUE(rt::poolHolds(vdnn.gmap, split.passSamples(), req.budget, shape));
}

// At a fixed k, accudnn's plan starts from swap-all's: where the plan with its pins does not
// pack, and neither does its first phase's, swap-all's is returned where it runs (ResNet-50,
// k = 3 at 347,861,914 bytes).
TEST(PlacementAgreement, AFixedKWhosePinsDoNotPackTakesSwapAllsPlan) {
  const SampleNet sample("resnet50", Policy::SwapAll);
  const auto& [net, planner, shape, swapAll] = sample;
  PlanRequest req = oneThread(Policy::AccUdnn, 347'861'914);
  req.batch = 3;
  const std::optional<Evaluation> pinned = planner.accudnnAt(3, req.budget);
  ASSERT_TRUE(pinned.has_value());
  EXPECT_NE(pinned->swapped, swapAll.gmap.swapped);
  EXPECT_FALSE(
      rt::poolHolds(buildGmap(net, planner.costs(), pinned->swapped), 3, req.budget, shape));
  const PlanResult r = planner.plan(req);
  ASSERT_TRUE(r.trainable) << r.reason;
  EXPECT_EQ(r.best.swapped, swapAll.gmap.swapped);
  EXPECT_TRUE(rt::poolHolds(swapAll.gmap, 3, req.budget, shape));
}

/// ResNet-50's swap-all plan at k = 3 with its prefetches moved (up to its peak), in the
/// executor's op order, and the least extent of that schedule under reuse delay 1 at alignment 64.
struct MovedSwapAll {
  MemoryPlan plan;
  std::int64_t k = 3, peak = 0;
  std::vector<int> moveTo;
  std::vector<GmapOp> order;
  std::int64_t least = 0;
  MovedSwapAll() {
    const Network net = buildZooModel("resnet50");
    const std::vector<LayerCost> costs = computeLayerCosts(net);
    plan = planMemory(net, costs, makeSwapSet(Policy::SwapAll, net, costs));
    peak = plan.curve.peak(k);
    moveTo = movePrefetches(plan.gmap, plan.curve, k, peak).move_to;
    order = executionOrder(plan.gmap, moveTo);
    least = planPlacement(plan.gmap, order, k, 64, 1).extent;
  }
};

// The planner asks placeAhead with a memo and the bound of the delayed peak, which place no
// buffer where they can answer: the decision must be the one of placing every attempt, at every
// budget, in any order of asking. And a placement with a target fits it exactly where the least
// extent of all orders does (orders stop once they pass the target).
TEST(PlacementAgreement, TheMemoizedDecisionIsThePlacedOne) {
  // swap-all at k = 3 reaches three decisions within 5 % above its peak: (0, unmoved),
  // (1, unmoved), (1, moved).
  const MovedSwapAll fixture;
  const auto& [plan, k, peak, moveTo, order, least] = fixture;
  std::vector<std::int64_t> budgets;  // high and low in turn: the memo answers both ways
  for (int i = 0; i <= 25; ++i) {     // 0 to 5 % above the peak, where the decisions change
    budgets.push_back(peak + peak * i / 1000);
    budgets.push_back(peak + peak * (50 - i) / 1000);
  }
  PlacementMemo memo;
  std::set<std::pair<int, bool>> decisions;
  for (const std::int64_t budget : budgets) {
    SCOPED_TRACE(budget);
    const AheadOfTime placed = placeAhead(plan.gmap, moveTo, k, budget, 1, {64, 4});
    const AheadOfTime remembered = placeAhead(plan.gmap, moveTo, k, budget, 1, {64, 4}, 0, &memo);
    // The schedule that runs. With a memo, an attempt of the first run-time placement's
    // schedule (delay 0 with the moves) is left unplaced where that placement fits, so the answer
    // may be "at run time" where one of those attempts would have packed: the same schedule.
    EXPECT_EQ(runs(placed), runs(remembered));
    if (placed.placed && remembered.placed) {
      EXPECT_EQ(placed.placed->alignment, remembered.placed->alignment);
    }
    if (placed.placed) decisions.insert({placed.placed->delay, placed.placed->moved});
    EXPECT_EQ(planPlacement(plan.gmap, order, k, 64, 1, 0, budget).extent <= budget,
              least <= budget);
  }
  EXPECT_EQ(decisions.size(), 3u) << "the budgets do not reach the three decisions";
  ASSERT_TRUE(std::any_of(moveTo.begin(), moveTo.end(), [](int s) { return s > 0; }));
  // Asked often enough, the memo places the delayed moved schedule in every order in full, and
  // then knows its least extent exactly.
  const PlacementMemo::Known known = memo.get(1, true, 64);
  EXPECT_GE(known.placed, 3);
  EXPECT_EQ(known.least, least);
  EXPECT_EQ(known.fitted, least);
}

// From the third time the memo cannot answer a schedule on, it places the orders in full until
// one fits: a fit gives an extent that fits (not always the least), a refusal the least extent.
// Two refusals at the least budgets the memo cannot answer (the orders stopped just beyond each),
// then a fit well above the least extent, then budgets between them, at it and below it: every
// decision must be the one of placing without a memo.
TEST(PlacementAgreement, TheMemosPlacementsInFullDecideAsPlacingDoes) {
  const MovedSwapAll fixture;
  const auto& [plan, k, peak, moveTo, order, least] = fixture;
  const auto decision = [&](std::int64_t budget) {
    return runs(placeAhead(plan.gmap, moveTo, k, budget, 1, {64, 4}));
  };
  ASSERT_EQ(decision(least), std::pair(1, true)) << "the delayed moved schedule packs at its least";
  ASSERT_NE(decision(least - 1), std::pair(1, true));
  PlacementMemo memo;
  const auto ask = [&](std::int64_t budget) {
    SCOPED_TRACE(budget);
    EXPECT_EQ(decision(budget),
              runs(placeAhead(plan.gmap, moveTo, k, budget, 1, {64, 4}, 0, &memo)));
    return memo.get(1, true, 64);
  };
  std::int64_t budget = delayedPeak(plan.gmap, order, k, 1, 64);
  for (int refusal = 1; refusal <= 2; ++refusal)
    budget = ask(budget).least;
  ASSERT_LT(budget, least) << "two placements up to the budget found the least extent";
  PlacementMemo::Known known = ask(least + least / 10);
  EXPECT_EQ(known.placed, 3);
  EXPECT_GE(known.fitted, least);
  EXPECT_LT(known.least, least) << "a fit must not fix the least extent";
  const std::int64_t fitted = known.fitted;
  for (const std::int64_t b : {least + (fitted - least) / 2, least, least - 1})
    known = ask(b);
  EXPECT_EQ(known.least, least) << "a placement in full that refuses knows the least extent";
  EXPECT_EQ(known.fitted, least);
  const int placed = known.placed;
  for (const std::int64_t b : {least - 1, least, least + (fitted - least) / 2, fitted})
    known = ask(b);
  EXPECT_EQ(known.placed, placed) << "the memo answers";
}

// Where nothing packs ahead, the executor places at run time, delay 0 with the moves first: the
// planner's memoized decision reaches that without placing the attempts of that schedule near
// the budget where the run-time placement fits, and places them where a later attempt with
// another schedule packs (they come first) or where the run-time placement does not fit.
TEST(PlacementAgreement, TheFallbacksOwnAttemptsArePlacedOnlyWhereTheyDecide) {
  // At k = 8, within 1 % above the peak: GoogLeNet's vdnn-conv plan packs nowhere at its peak
  // (the pool's fragmentation), ResNet-50's swap-all plan packs delay 0 unmoved at its peak and
  // delay 1 above it.
  const std::int64_t k = 8;
  int none = 0, waitedThenPlaced = 0;
  for (const auto& [model, policy] :
       {std::pair{"googlenet", Policy::VdnnConv}, std::pair{"resnet50", Policy::SwapAll}}) {
    const Network net = buildZooModel(model);
    const std::vector<LayerCost> costs = computeLayerCosts(net);
    const MemoryPlan plan = planMemory(net, costs, makeSwapSet(policy, net, costs));
    const std::int64_t peak = plan.curve.peak(k);
    const std::vector<int> moveTo = movePrefetches(plan.gmap, plan.curve, k, peak).move_to;
    ASSERT_TRUE(std::any_of(moveTo.begin(), moveTo.end(), [](int s) { return s > 0; }));
    for (int i = 0; i <= 20; ++i) {
      const std::int64_t budget = peak + peak * i / 2000;
      SCOPED_TRACE(std::string(model) + ", " + std::string(policyName(policy)) + " at budget " +
                   std::to_string(budget));
      const AheadOfTime placed = placeAhead(plan.gmap, moveTo, k, budget, 1, {64, 4});
      PlacementMemo memo;
      const AheadOfTime remembered = placeAhead(plan.gmap, moveTo, k, budget, 1, {64, 4}, 0, &memo);
      EXPECT_EQ(runs(placed), runs(remembered));
      const int fallbackPlaced = memo.get(0, true, 64).placed + memo.get(0, true, 4).placed;
      if (!placed.placed) {
        ++none;
        if (placed.run_time_moved == true) {
          EXPECT_EQ(fallbackPlaced, 0) << "the moved schedule fits at run time: its attempts "
                                          "decide nothing";
        }
      } else if (placed.placed->delay == 0 && !placed.placed->moved) {
        // An unmoved attempt packs after the moved one at its alignment, which must be placed.
        ASSERT_TRUE(remembered.placed);
        EXPECT_EQ(remembered.placed->alignment, placed.placed->alignment);
        waitedThenPlaced += fallbackPlaced > 0;
      }
    }
  }
  EXPECT_GT(none, 0) << "no budget where nothing packs: the test shows nothing";
  EXPECT_GT(waitedThenPlaced, 0) << "no budget where a waiting attempt had to be placed";
}

TEST(PlacementAgreement, DelayedPeakWithoutDelayIsTheAnalyzersPeak) {
  const Network net = rt::everyKind();
  const std::vector<LayerCost> costs = computeLayerCosts(net);
  for (const Policy policy : {Policy::KeepAll, Policy::SwapAll, Policy::VdnnConv}) {
    const MemoryPlan plan = planMemory(net, costs, makeSwapSet(policy, net, costs));
    for (const std::int64_t k : {1, 3, 16}) {
      const std::int64_t peak = plan.curve.peak(k);
      const std::vector<GmapOp> order = executionOrder(plan.gmap, {});
      EXPECT_EQ(delayedPeak(plan.gmap, order, k, 0), peak);
      // Keeping memory from reuse longer never lowers the high-water mark.
      EXPECT_GE(delayedPeak(plan.gmap, order, k, 1), peak);
      EXPECT_GE(delayedPeak(plan.gmap, order, k, 4), delayedPeak(plan.gmap, order, k, 1));
      const bool offloads = policy != Policy::KeepAll;
      EXPECT_EQ(chooseReuseDelay(plan.gmap, order, k, peak - 1, 1), 0);
      EXPECT_EQ(chooseReuseDelay(plan.gmap, order, k, delayedPeak(plan.gmap, order, k, 4), 1),
                offloads ? 4 : 0);
      // Rounded up to the pool's alignment, the high-water mark only grows.
      EXPECT_GE(delayedPeak(plan.gmap, order, k, 0, 64), peak);
    }
  }
}

}  // namespace
}  // namespace swapscope::perf
