// SPDX-License-Identifier: MIT
// The performance model: curve fits recover known curves; the simulator on hand-built cases with
// known answers; Algorithm 1 as written; the planner's invariants on a real profile.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "analysis/network_analysis.h"
#include "analysis/prefetch_schedule.h"
#include "common/error.h"
#include "graph/builder.h"
#include "graph/zoo.h"
#include "perfmodel/chain.h"
#include "perfmodel/compare.h"
#include "perfmodel/fit.h"
#include "perfmodel/hand_made_run.h"
#include "perfmodel/paper.h"
#include "perfmodel/planner.h"
#include "perfmodel/simulator.h"
#include "perfmodel/sub_batch_plan.h"
#include "runtime/executor.h"
#include "sample_runs.h"
#include "store/run_db.h"

namespace swapscope::perf {
namespace {

Network buildZooModelForTest() {
  return buildZooModel("fmnist-cnn");
}

TEST(Fit, AffineRecoversLaunchCostAndThroughput) {
  std::vector<FitPoint> pts;
  for (std::int64_t k : {1, 2, 4, 8, 16}) {
    const double x = 1e9 * static_cast<double>(k);
    pts.push_back({x, 2e-5 + x / 5e12, k});
  }
  const Curve c = fitCurve(FitForm::Affine, pts);
  EXPECT_NEAR(c.a, 2e-5, 1e-9);
  EXPECT_NEAR(c.p, 5e12, 5e12 * 1e-6);
  EXPECT_LT(c.max_rel_error, 1e-9);
  EXPECT_FALSE(c.extrapolates(4e9));
  EXPECT_TRUE(c.extrapolates(1e11));
}

TEST(Fit, ALinkRecoversLatencyAndBandwidth) {
  std::vector<FitPoint> pts;
  for (const double bytes : {4096.0, 65536.0, 1e6, 4e6, 16e6})
    pts.push_back({bytes, 8e-6 + bytes / 12e9, 1});
  const LinkFit f = fitLink(pts);
  EXPECT_NEAR(f.latency, 8e-6, 1e-12);
  EXPECT_NEAR(f.bandwidth, 12e9, 12e9 * 1e-9);
  EXPECT_LT(f.max_rel_error, 1e-9);
}

TEST(Fit, ALinkTimesTheLargeCopiesAsMeasuredWhereSmallOnesRunFaster) {
  // As on the CPU backend: copies up to 512 KiB stay in the caches at 16 GB/s, copies of 4 to
  // 8 MiB run at 8 GB/s. Sixteen small copies against six large: a line that every copy sets
  // alike (the relative error) follows the small ones and times the large ones 36 % fast, and
  // the large ones are the copies a step waits for. A line in seconds times them within 1 %.
  std::vector<FitPoint> pts;
  double large = 0, all = 0;
  for (int i = 1; i <= 16; ++i) {
    const double bytes = 32768.0 * i;
    pts.push_back({bytes, 5e-6 + bytes / 16e9, 1});
  }
  for (const double mib : {4.0, 6.0, 8.0}) {
    for (int rep = 0; rep < 2; ++rep) {
      const double bytes = mib * 1048576;
      pts.push_back({bytes, 5e-6 + bytes / 8e9, 1});
      large += pts.back().t;
    }
  }
  for (const FitPoint& p : pts)
    all += p.t;
  const LinkFit f = fitLink(pts);
  double largePredicted = 0, allPredicted = 0;
  for (const FitPoint& p : pts) {
    allPredicted += f.seconds(p.x);
    if (p.x >= 4 * 1048576) largePredicted += f.seconds(p.x);
  }
  EXPECT_NEAR(largePredicted / large, 1.0, 0.01);
  EXPECT_NEAR(allPredicted / all, 1.0, 0.05);
  EXPECT_EQ(f.residuals.size(), pts.size());
}

TEST(Fit, ALinkTimesACopyAtItsMeanWhereSomeCopiesRunSlow) {
  // As beside compute on two cores: seven in ten copies run at once on a free core, three in
  // ten wait for the compute threads and take four times as long. A schedule adds up the mean:
  // 142.5 us for 1 MiB (75 us and 300 us) and 38 us for 256 KiB (20 us and 80 us).
  std::vector<FitPoint> pts;
  for (int i = 0; i < 10; ++i) {
    const bool slow = i < 3;
    pts.push_back({1048576.0, slow ? 300e-6 : 75e-6, 1});
    pts.push_back({262144.0, slow ? 80e-6 : 20e-6, 1});
  }
  const LinkFit f = fitLink(pts);
  EXPECT_NEAR(f.seconds(1048576.0), 142.5e-6, 1e-12);
  EXPECT_NEAR(f.seconds(262144.0), 38e-6, 1e-12);
}

TEST(Fit, SaturatingFindsTheSaturationPoint) {
  // FLOPS = 1e12 * min(1, (x / 1e9)^0.5): time is sqrt-like below 1e9 and linear above.
  std::vector<FitPoint> pts;
  std::int64_t k = 1;
  for (double x : {1e7, 1e8, 1e9, 1e10, 1e11}) {
    const double flops = 1e12 * std::min(1.0, std::pow(x / 1e9, 0.5));
    pts.push_back({x, x / flops, k++});
  }
  const Curve c = fitCurve(FitForm::Saturating, pts);
  EXPECT_NEAR(c.x_sat, 1e9, 1);
  EXPECT_NEAR(c.gamma, 0.5, 1e-9);
  EXPECT_NEAR(c.p, 1e12, 1e3);
  // Cross-validated, the saturating form beats the affine one; the choice is at least as good.
  const FitChoice best = fitBest(pts);
  EXPECT_LT(best.curves[1].cv_rel_error, best.curves[0].cv_rel_error);  // a line cannot bend
  EXPECT_LE(best.chosen().cv_rel_error, best.curves[1].cv_rel_error);
}

// A group whose times mix 0 (a step below the clock's resolution) with others keeps its zeros:
// they are measurements. The three forms fit relative errors, which a time of 0 has none of, so
// the group gets the affine line of least squares in seconds through every point; at two works
// it passes through each work's mean time. Dropping the zeros timed each work at its non-zero
// point, twice the mean here.
TEST(Fit, AGroupMixingTimesOfZeroWithOthersKeepsTheZerosInALineInSeconds) {
  const std::vector<FitPoint> pts = {{1e9, 0.0, 1}, {2e9, 0.0, 2}, {1e9, 2e-3, 1}, {2e9, 3e-3, 2}};
  const FitChoice choice = fitBest(pts);
  ASSERT_EQ(choice.curves.size(), 1u);
  const Curve& c = choice.chosen();
  EXPECT_EQ(c.form, FitForm::Affine);
  EXPECT_EQ(c.points, 4);
  EXPECT_NEAR(c.predict(1e9), (0.0 + 2e-3) / 2, 1e-12);
  EXPECT_NEAR(c.predict(2e9), (0.0 + 3e-3) / 2, 1e-12);
  EXPECT_NEAR(c.a, 0.5e-3, 1e-12);
  EXPECT_NEAR(c.p, 2e12, 1e3);
  ASSERT_EQ(c.residuals.size(), 4u);
  double sum = 0;
  for (const double r : c.residuals)
    sum += r;
  EXPECT_NEAR(sum, 0.0, 1e-12);  // the fitted times add up to the measured ones
  // The relative errors are those of the points timed above 0: 1e-3 off 2e-3, 1.5e-3 off 3e-3.
  EXPECT_NEAR(c.max_rel_error, 0.5, 1e-9);
  EXPECT_NEAR(c.cv_rel_error, 0.5, 1e-9);
  EXPECT_TRUE(std::isfinite(c.rmse));
  // Times all 0 still give the exact t = 0; times all above 0, the three forms.
  EXPECT_EQ(fitBest({{1e9, 0.0, 1}, {2e9, 0.0, 2}}).chosen().predict(2e9), 0.0);
  EXPECT_EQ(fitBest({{1e9, 2e-3, 1}, {2e9, 3e-3, 2}}).curves.size(), 3u);
}

TEST(Fit, LogLogIsMonotone) {
  const std::vector<FitPoint> pts = {{1, 1.0, 1}, {2, 0.8, 2}, {4, 2.0, 3}, {8, 4.1, 4}};
  const Curve c = fitCurve(FitForm::LogLog, pts);
  double last = 0;
  for (double x = 0.5; x < 20; x *= 1.3) {
    EXPECT_GE(c.predict(x), last - 1e-12) << x;
    last = c.predict(x);
  }
}

using testing::Chain;

TEST(Fit, AProportionalFitLeavesOutPairsFarFromTheRest) {
  // y = 0.3 x with a small even spread, plus three pairs 5 ms above the line (a step preempted
  // by other work): least squares over all of them would give a slope near 1.
  std::vector<std::pair<double, double>> xy;
  for (int i = 1; i <= 30; ++i) {
    const double x = 1e-4 * i;
    xy.emplace_back(x, 0.3 * x + (i % 2 ? 1e-6 : -1e-6));
  }
  for (const double x : {2e-4, 9e-4, 2.5e-3})
    xy.emplace_back(x, 0.3 * x + 5e-3);
  const ProportionalFit f = fitProportional(xy, 0, 2);
  EXPECT_EQ(f.outliers, 3);
  EXPECT_EQ(f.points, 30);
  EXPECT_EQ(f.residuals.size(), 30u);
  EXPECT_NEAR(f.slope, 0.3, 1e-3);
  // Without them, all are fitted.
  xy.resize(30);
  EXPECT_EQ(fitProportional(xy, 0, 2).outliers, 0);
  EXPECT_EQ(fitProportional(xy, 0, 2).points, 30);
}

TEST(Simulator, NoStallWhenTheLinkIsFast) {
  const Chain c;
  SimInput in = c.input(1.0, 0.0);
  in.update_seconds = 0.5;
  const SimResult r = simulate(in);
  EXPECT_DOUBLE_EQ(r.stall, 0.0);
  EXPECT_DOUBLE_EQ(r.t_iter, c.gmap.steps() * 1.0 + 0.5);
  EXPECT_TRUE(r.stalled_steps().empty());
}

TEST(Simulator, APrefetchThatCannotFinishStallsForItsRemainder) {
  const Chain c;
  SimInput in = c.input(1.0, 0.0);
  const int relu = c.buffer("relu1");
  ASSERT_GE(relu, 0);
  in.prefetch_seconds[static_cast<std::size_t>(relu)] = 10.0;
  const int j = c.step(GmapOpKind::Prefetch, relu, true);
  ASSERT_GT(j, c.gmap.forward_steps);
  // Not moved earlier: it starts when step j-1 ends, so step j waits the full 10 s.
  const SimResult r = simulate(in);
  EXPECT_DOUBLE_EQ(r.steps[static_cast<std::size_t>(j)].stall, 10.0);
  EXPECT_DOUBLE_EQ(r.stall, 10.0);
  EXPECT_DOUBLE_EQ(r.t_iter, c.gmap.steps() * 1.0 + 10.0);
  // Issued two steps earlier: the executor opens a moved prefetch before the step's own
  // (executionOrder), so on the in-order swap-in stream step j-2's own prefetch waits behind it,
  // and step j-2 stalls the full 10 s instead of step j.
  in.prefetch_issue.assign(c.gmap.buffers.size(), 0);
  in.prefetch_issue[static_cast<std::size_t>(relu)] = j - 2;
  bool ownPrefetch = false;
  for (const GmapOp& op : c.gmap.ops)
    ownPrefetch = ownPrefetch || (op.kind == GmapOpKind::Prefetch && op.step == j - 2);
  ASSERT_TRUE(ownPrefetch);
  const SimResult early = simulate(in);
  EXPECT_DOUBLE_EQ(early.steps[static_cast<std::size_t>(j - 2)].stall, 10.0);
  EXPECT_DOUBLE_EQ(early.steps[static_cast<std::size_t>(j)].stall, 0.0);
  EXPECT_DOUBLE_EQ(early.stall, 10.0);
}

TEST(Simulator, ATightBudgetStallsOnAnUnfinishedOffload) {
  const Chain c;
  SimInput in = c.input(1.0, 0.0);
  const int relu = c.buffer("relu1");
  in.offload_seconds[static_cast<std::size_t>(relu)] = 5.0;
  const int produced = c.step(GmapOpKind::Offload, relu, false);
  const int released = c.step(GmapOpKind::Release, relu, false);
  ASSERT_GT(released, produced);
  // With no reuse delay the step after the release reuses its memory and waits for the offload:
  // it ends at produced + 5, and step released+1 would start at `released`.
  in.reuse_delay = 0;
  const double expected = std::max(0.0, produced + 5.0 - released);
  ASSERT_GT(expected, 0.0);
  const SimResult r = simulate(in);
  EXPECT_DOUBLE_EQ(r.steps[static_cast<std::size_t>(released + 1)].stall, expected);
  // With room to keep the memory for 4 more steps, the offload hides.
  in.reuse_delay = 4;
  EXPECT_LT(simulate(in).steps[static_cast<std::size_t>(released + 1)].stall, 1e-12);
}

TEST(Algorithm1, AgreesWithTheSimulatorWhereThePapersAssumptionsHold) {
  // Ample memory, prefetches faster than compute: Algorithm 1 finds no violation of (6), and
  // the simulator no stall.
  // Prefetches go as early as memory allows (no cap), as the paper's swap-in stream does.
  const Chain c;
  SimInput in = c.input(1.0, 0.25);
  in.prefetch_issue = movePrefetches(c.gmap, c.curve, 1, INT64_MAX).move_to;
  const SimResult sim = simulate(in);
  PaperInput p;
  const std::size_t steps = static_cast<std::size_t>(c.gmap.steps() + 1);
  p.allocate.assign(steps, 0);
  p.release.assign(steps, 0);
  p.prefetch.assign(steps, 0.0);
  p.compute = in.step_seconds;
  p.budget = std::int64_t{1} << 40;
  for (const GmapOp& op : c.gmap.ops) {
    if (op.kind == GmapOpKind::Prefetch && op.step >= 1 && op.step < static_cast<int>(steps)) {
      p.prefetch[static_cast<std::size_t>(op.step)] += 0.25;
    }
  }
  const PaperResult a = algorithm1(p);
  EXPECT_TRUE(a.violations.empty());
  // The paper lets every prefetch start at once; the runtime cannot prefetch an FM before its
  // forward release, so compare the steps whose prefetches could all move earlier.
  int compared = 0;
  for (std::size_t j = 2; j < steps; ++j) {
    bool movable = true;
    for (const GmapOp& op : c.gmap.ops) {
      if (op.kind == GmapOpKind::Prefetch && op.step == static_cast<int>(j) &&
          in.prefetch_issue[static_cast<std::size_t>(op.buffer)] == 0) {
        movable = false;
      }
    }
    if (!movable) continue;
    ++compared;
    EXPECT_LT(sim.steps[j].stall, 1e-12) << j;
  }
  EXPECT_GT(compared, c.gmap.steps() / 2);
  // A prefetch longer than the compute before it violates (6) in both.
  const int relu = c.buffer("relu1");
  const int j = c.step(GmapOpKind::Prefetch, relu, true);
  p.prefetch[static_cast<std::size_t>(j)] += 100.0;
  in.prefetch_seconds[static_cast<std::size_t>(relu)] = 100.0;
  const PaperResult a2 = algorithm1(p);
  ASSERT_FALSE(a2.violations.empty());
  EXPECT_EQ(a2.violations.front(), j);
  // The simulator stalls where the executor's swap-in queue waits for it: at step j, or at the
  // step it was moved to, whose own prefetch queues behind it. Of its 100 s, at most the compute
  // between its issue and step j (under 12 s) hides.
  EXPECT_GT(simulate(in).stall, 100.0 - c.gmap.steps());
}

TEST(Algorithm1, TheMinibatchLoadDelaysEveryStepAndIsNoViolation) {
  // Four steps of 1 s; the minibatch takes 5 s to load before step 1. Layer 1 can start at 5 s,
  // so step 1 ends at 6 s and step 2 (which prefetches nothing) is ready in time.
  PaperInput p;
  p.compute = {0, 1, 1, 1, 1};
  p.prefetch = {0, 5, 0, 0, 0};
  p.allocate.assign(5, 0);
  p.release.assign(5, 0);
  p.budget = 1 << 20;
  const PaperResult a = algorithm1(p);
  EXPECT_TRUE(a.violations.empty());
  EXPECT_DOUBLE_EQ(a.compute_start, 5.0);
  EXPECT_DOUBLE_EQ(a.t_ready[2], 5.0);
  EXPECT_DOUBLE_EQ(a.finish[1], 6.0);
  EXPECT_DOUBLE_EQ(a.finish[4], 9.0);
  // A 3 s prefetch for step 3 starts at 5 s, when the swap-in stream is done with the load, and
  // arrives at 8 s, one second after step 2 ends: a violation at step 3 only.
  p.prefetch[3] = 3;
  const PaperResult b = algorithm1(p);
  EXPECT_EQ(b.violations, std::vector<int>{3});
  EXPECT_DOUBLE_EQ(b.t_ready[3], 8.0);
  EXPECT_DOUBLE_EQ(b.finish[2], 7.0);
}

TEST(Algorithm1, ReleasedMemoryIsUsedAgain) {
  // Every step allocates 10 bytes and releases 10 after it; the area holds 20. Memory in use
  // falls with each release, so step 3 waits for step 1's release and step 4 for step 2's:
  // t_ready = 0, 0, 1, 2, each in time for a stall-free timeline of 1 s steps.
  PaperInput p;
  p.compute = {0, 1, 1, 1, 1};
  p.prefetch.assign(5, 0.0);
  p.allocate = {0, 10, 10, 10, 10};
  p.release = {0, 10, 10, 10, 10};
  p.budget = 20;
  const PaperResult a = algorithm1(p);
  EXPECT_TRUE(a.violations.empty());
  EXPECT_EQ(a.t_ready, (std::vector<double>{0, 0, 0, 1, 2}));
  EXPECT_EQ(a.waited_for, (std::vector<int>{0, 0, 0, 1, 2}));
  // Bytes in use before step 1 count: with 10 of them, step 2 already waits for step 1.
  p.resident = 10;
  const PaperResult b = algorithm1(p);
  EXPECT_TRUE(b.violations.empty());
  EXPECT_EQ(b.waited_for, (std::vector<int>{0, 0, 1, 2, 3}));
  EXPECT_EQ(b.t_ready, (std::vector<double>{0, 0, 1, 2, 3}));
}

TEST(LearningRate, Equation9) {
  EXPECT_DOUBLE_EQ(scaledLearningRate(0.1, 256, 0, 512), 0.2);  // c -> 0: linear scaling
  // c = 0.75, q = 592/256: [1 - (1 - 0.075)^q] / c
  EXPECT_NEAR(scaledLearningRate(0.1, 256, 0.75, 592),
              (1 - std::pow(1 - 0.075, 592.0 / 256)) / 0.75, 1e-12);
  EXPECT_THROW(scaledLearningRate(2, 256, 1, 512), Error);
  EXPECT_DOUBLE_EQ(allReduceSeconds(1000, 1, 1e9, 0), 0.0);
  EXPECT_DOUBLE_EQ(allReduceSeconds(1000, 4, 1e9, 1e-6), 2.0 * 3 / 4 * 1000 / 1e9 + 1e-6);
}

/// A run database made by hand for the chain network: every step takes `stepNs` per sample, the
/// SGD update the same per layer, and the link moves `bytesPerSecond` each way without latency.
/// The fitted curves are then exact lines, so plans on it have answers known in advance.
store::RunData syntheticRun(const Network& net, double stepNs, double bytesPerSecond) {
  const std::vector<LayerCost> costs = computeLayerCosts(net);
  store::RunData run = testing::handMadeRun(net, "synthetic.swapdb");
  for (const std::int64_t k : {1, 2, 4, 8}) {
    run.iterations.push_back({k, 0, 0, 1, 0, 0, 0, 0, 0});
    const auto ns = static_cast<std::int64_t>(stepNs * static_cast<double>(k));
    for (int i = 0; i < net.size(); ++i) {
      if (i == net.inputLayer()) continue;
      for (const store::Direction d : {store::Direction::Forward, store::Direction::Backward}) {
        run.samples.push_back({k, 0, 0, i, d, 0, 0, ns, 0});
      }
      if (costs[static_cast<std::size_t>(i)].params > 0) {
        run.samples.push_back({k, 0, 0, i, store::Direction::Update, 0, 0, ns, 0});
      }
    }
    // Copies of about 1 and 3 ms (at least 1000 bytes) per sample.
    testing::addCopies(run, k, std::max(1000.0, bytesPerSecond * 1e-3) * static_cast<double>(k),
                       bytesPerSecond);
  }
  return run;
}

/// The bytes swap-all prefetches in backward at k: what Algorithm 2 must keep on the device when
/// every prefetch violates (6).
std::int64_t backwardPrefetchBytes(const Gmap& g, std::int64_t k) {
  std::int64_t sum = 0;
  for (const GmapOp& op : g.ops) {
    if (op.kind == GmapOpKind::Prefetch && g.isBackwardStep(op.step)) {
      sum += g.buffers[static_cast<std::size_t>(op.buffer)].size.at(k);
    }
  }
  return sum;
}

TEST(Algorithm2, AFastLinkMeetsConstraint6AtTheLargestK) {
  // 1 ms per sample per step; the link moves 1 PB/s, so no prefetch is ever late: the answer is
  // the top of the range.
  const Chain c;
  const PerfModel model = PerfModel::fit(syntheticRun(c.net, 1e6, 1e15));
  const Planner planner(model, c.net);
  PlanRequest req;
  req.mode = PlanMode::Paper;
  req.budget = 1 << 20;
  req.max_batch = 300;
  const PlanResult r = planner.plan(req);
  ASSERT_TRUE(r.trainable) << r.reason;
  EXPECT_EQ(r.best.k, 300);
  EXPECT_TRUE(r.paper.violations.empty());
}

TEST(Algorithm2, ASlowLinkKeepsEveryPrefetchedFmAndTheLargestKWhereTheyFit) {
  // 1 ms per sample per step and 1 byte per second: any prefetch outlasts the whole iteration, so
  // (6) holds at k exactly when every FM prefetched in backward can stay on the device: in the
  // pinned area budget - M_peak(k), or anywhere when keep-all's peak fits the budget. Of those k,
  // the largest whose plan runs: at 100,000 bytes, the plan's buffers do not pack into the pool
  // at the largest two (the executor, rt::poolHolds, says so).
  const Chain c;
  const PerfModel model = PerfModel::fit(syntheticRun(c.net, 1e6, 1.0));
  const Planner planner(model, c.net);
  const MemoryCurve keepAll =
      computeMemoryCurve(buildGmap(c.net, c.costs, makeSwapSet(Policy::KeepAll, c.net, c.costs)));
  for (const std::int64_t budget : {std::int64_t{40'000}, std::int64_t{100'000}}) {
    std::int64_t expected = 0;
    for (std::int64_t k = 1; c.curve.peak(k) <= budget; ++k) {
      if (keepAll.peak(k) <= budget ||
          backwardPrefetchBytes(c.gmap, k) <= budget - c.curve.peak(k)) {
        expected = k;
      }
    }
    ASSERT_GT(expected, 1) << budget;
    ASSERT_LT(expected, c.curve.kMax(budget)) << budget;  // the descent has work to do
    PlanRequest req;
    req.mode = PlanMode::Paper;
    req.budget = budget;
    for (const bool scanAll : {false, true}) {
      req.paper_scan_all = scanAll;
      const PlanResult r = planner.plan(req);
      ASSERT_TRUE(r.trainable) << r.reason;
      // The same set at every k from the plan's to the largest that meets (6): it runs at the
      // plan's k only.
      const Gmap set = buildGmap(c.net, c.costs, r.best.swapped);
      const rt::PoolShape shape{model.poolAlignment(), model.poolPadding()};
      EXPECT_TRUE(rt::poolHolds(set, r.best.k, budget, shape)) << budget;
      for (std::int64_t k = r.best.k + 1; k <= expected; ++k)
        EXPECT_FALSE(rt::poolHolds(set, k, budget, shape)) << budget << " at k = " << k;
      EXPECT_EQ(r.best.k, budget == 100'000 ? expected - 2 : expected)
          << budget << (scanAll ? " scanning every k" : "");
      EXPECT_TRUE(r.paper.violations.empty());
      EXPECT_EQ(r.best.bytesMoved(), 0);  // nothing left to prefetch
      EXPECT_LE(r.best.peak, budget);
    }
  }
}

TEST(Algorithm2, NoFeasibleKIsReportedWithTheFirstViolatingStep) {
  // Swap-all pins nothing: with a slow link every k violates (6), first at the first backward
  // step that prefetches.
  const Chain c;
  const PerfModel model = PerfModel::fit(syntheticRun(c.net, 1e6, 1.0));
  PlanRequest req;
  req.mode = PlanMode::Paper;
  req.policy = Policy::SwapAll;
  req.budget = 100'000;
  const PlanResult r = plan(model, c.net, req);
  EXPECT_FALSE(r.trainable);
  EXPECT_TRUE(r.infeasible);
  EXPECT_GT(r.k_max, 1);
  int first = 0;
  for (const GmapOp& op : c.gmap.ops) {
    if (op.kind == GmapOpKind::Prefetch && c.gmap.isBackwardStep(op.step)) {
      first = first == 0 ? op.step : std::min(first, op.step);
    }
  }
  ASSERT_GT(first, 0);
  const std::string layer = c.net.layer(c.gmap.step_layer[static_cast<std::size_t>(first)]).name;
  EXPECT_NE(r.reason.find("Algorithm 2 found no feasible k"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("at k = 1, step " + std::to_string(first) + " (" + layer + ", bwd)"),
            std::string::npos)
      << r.reason;
  EXPECT_NE(r.reason.find("its prefetches take"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("swap-all pins nothing"), std::string::npos) << r.reason;
  // A budget below swap-all's peak at k = 1 is another matter: untrainable, not infeasible.
  req.budget = r.min_budget - 1;
  const PlanResult u = plan(model, c.net, req);
  EXPECT_FALSE(u.trainable);
  EXPECT_FALSE(u.infeasible);
}

/// The fmnist-cnn sample profile, loaded afresh (each test changes its copy).
store::RunData fmnistSample() {
  return store::RunReader(swapscope::testing::fmnistRun()).load();
}

TEST(Fit, AnEmptyFitNamesTheDatabase) {
  store::RunData run = fmnistSample();
  ASSERT_FALSE(run.transfers.empty());
  for (store::TransferRow& t : run.transfers) {
    if (!t.to_host) t.end_ns = t.start_ns;  // every host-to-device copy took no time
  }
  try {
    PerfModel::fit(run);
    FAIL() << "fitted a link to copies of zero duration";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    const std::string what = e.what();
    EXPECT_NE(what.find(run.path), std::string::npos) << what;
    EXPECT_NE(what.find("host-to-device copies"), std::string::npos) << what;
    EXPECT_NE(what.find("at least one point"), std::string::npos) << what;
  }
}

/// PerfModel::fit refuses `run` as bad input with a message that contains `text`.
void expectFitRefused(const store::RunData& run, const std::string& text) {
  try {
    (void)PerfModel::fit(run);
    ADD_FAILURE() << "fitted; expected a refusal saying: " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(Fit, NoCopyToTheHostLetsTheOtherDirectionStandIn) {
  // A run of a plan that offloads nothing records no copy to the host but its loss's readback:
  // the host-to-device line stands in, marked so, and the run still fits (compare, the app).
  store::RunData run = fmnistSample();
  std::erase_if(run.transfers, [](const store::TransferRow& t) {
    return t.to_host && t.kind != store::TransferKind::Readback;
  });
  ASSERT_TRUE(std::any_of(run.transfers.begin(), run.transfers.end(),
                          [](const store::TransferRow& t) { return t.to_host; }));
  const PerfModel m = PerfModel::fit(run);
  EXPECT_TRUE(m.link(true).from_other_direction);
  EXPECT_TRUE(m.linkBesideCompute(true).from_other_direction);
  EXPECT_FALSE(m.link(false).from_other_direction);
  EXPECT_EQ(m.link(true).bandwidth, m.link(false).bandwidth);
  EXPECT_EQ(m.transfer(1 << 20, true, true), m.transfer(1 << 20, false, true));
  EXPECT_GT(m.transfer(1 << 20, true), 0);
}

TEST(Fit, CopiesAllOfOneSizeOneWayTakeTheOtherWaysLineRatherThanCostNothing) {
  // A run of a plan whose offloads are all of one shape: a line through one size has no slope,
  // and a bandwidth of 0 would time every offload as free.
  store::RunData run = fmnistSample();
  const auto firstOffload = std::find_if(run.transfers.begin(), run.transfers.end(),
                                         [](const store::TransferRow& t) { return t.to_host; });
  ASSERT_NE(firstOffload, run.transfers.end());
  const std::int64_t size = firstOffload->bytes;
  std::erase_if(run.transfers, [&](const store::TransferRow& t) {
    return t.to_host && t.kind != store::TransferKind::Readback && t.bytes != size;
  });
  const PerfModel m = PerfModel::fit(run);
  EXPECT_TRUE(m.link(true).from_other_direction);
  EXPECT_EQ(m.transfer(1 << 20, true), m.transfer(1 << 20, false));
  EXPECT_GT(m.transfer(1 << 20, true, true), 0);
  // Both ways of one size: refused, naming the file.
  const std::int64_t loadSize =
      std::find_if(run.transfers.begin(), run.transfers.end(), [](const store::TransferRow& t) {
        return !t.to_host;
      })->bytes;
  std::erase_if(run.transfers,
                [&](const store::TransferRow& t) { return !t.to_host && t.bytes != loadSize; });
  expectFitRefused(run, "'" + run.path +
                            "': the host-to-device copies in table transfers and the other way "
                            "are each of one size, so no bandwidth can be fitted");
}

TEST(Fit, NoCopyEitherWayNamesTheDatabaseInsteadOfFreeCopies) {
  store::RunData run = fmnistSample();
  std::erase_if(run.transfers, [](const store::TransferRow& t) { return !t.to_host; });
  expectFitRefused(run, "'" + run.path +
                            "': the host-to-device copies in table transfers: there are none, so "
                            "copy times cannot be fitted");
}

TEST(Fit, APoolAlignmentOrPaddingThatIsNoPowerOfTwoIsDamage) {
  for (const std::string key : {"pool_alignment", "pool_padding", "workspace_padding"}) {
    store::RunData run = fmnistSample();
    for (const std::string bad : {"3", "256abc", "0", "-64", "\x1b[2J"}) {
      run.meta.extra[key] = bad;
      try {
        PerfModel::fit(run);
        FAIL() << "accepted " << key << " '" << bad << "'";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::BadInput);
        EXPECT_NE(std::string(e.what()).find("meta '" + key + "' is '"), std::string::npos)
            << e.what();
        EXPECT_EQ(std::string(e.what()).find('\x1b'), std::string::npos) << e.what();
      }
    }
  }
  store::RunData run = fmnistSample();
  run.meta.extra["pool_alignment"] = "256";
  run.meta.extra["pool_padding"] = "32";
  run.meta.extra["workspace_padding"] = "512";
  const PerfModel model = PerfModel::fit(run);
  EXPECT_EQ(model.poolAlignment(), 256);
  EXPECT_EQ(model.poolPadding(), (PoolPadding{32, 512}));
}

// A profile that recorded no padding: a CUDA run's pool padded as the CUDA backend pads, any
// other's padded nothing.
TEST(Fit, AnUnrecordedPaddingIsTheBackendsOwn) {
  store::RunData run = fmnistSample();
  run.meta.extra.erase("pool_padding");
  run.meta.extra.erase("workspace_padding");
  EXPECT_EQ(PerfModel::fit(run).poolPadding(), (PoolPadding{1, 1}));
  run.meta.backend = "cuda";
  EXPECT_EQ(PerfModel::fit(run).poolPadding(), (PoolPadding{16, 256}));
}

class PlannerOnSampleRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { s_run = fmnistSample(); }
  static inline store::RunData s_run;
};

TEST_F(PlannerOnSampleRun, ATighterBudgetNeverGivesALargerK) {
  const PerfModel model = PerfModel::fit(s_run);
  const Network net = buildZooModelForTest();
  for (Policy policy : {Policy::SwapAll, Policy::AccUdnn, Policy::KeepAll}) {
    std::int64_t last = INT64_MAX, lastKMax = INT64_MAX;
    for (std::int64_t mib : {64, 48, 32, 24, 16, 12}) {
      PlanRequest req;
      req.policy = policy;
      req.mode = PlanMode::Paper;  // the largest stall-free k: monotone in the budget
      req.budget = mib << 20;
      req.max_batch = 256;
      const PlanResult r = plan(model, net, req);
      const std::int64_t k = r.trainable ? r.best.k : 0;
      EXPECT_LE(k, last) << policyName(policy) << " at " << mib << " MiB";
      last = k;
      EXPECT_LE(r.k_max, lastKMax);  // what fits shrinks with the budget
      lastKMax = r.k_max;
    }
  }
}

TEST_F(PlannerOnSampleRun, AccudnnIsNeverPredictedSlowerThanSwapAll) {
  const PerfModel model = PerfModel::fit(s_run);
  const Network net = buildZooModelForTest();
  const Planner planner(model, net);
  const auto& costs = planner.costs();
  for (std::int64_t k : {8, 32, 64, 94}) {
    const auto swapAll =
        planner.evaluate(k, makeSwapSet(Policy::SwapAll, net, costs), 32 << 20, -1);
    const auto acc = planner.accudnnAt(k, 32 << 20, -1);
    ASSERT_TRUE(swapAll && acc) << k;
    EXPECT_LE(acc->sim.t_iter, swapAll->sim.t_iter * (1 + 1e-12)) << k;
    // The reported peak is the analyzer's exact peak for the chosen set, within the budget.
    EXPECT_EQ(acc->peak, planMemory(net, costs, acc->swapped).curve.peak(k));
    EXPECT_LE(acc->peak, 32 << 20);
  }
}

TEST_F(PlannerOnSampleRun, RecomputeLightTimesTheForwardStepsItRunsAgain) {
  // A step that re-makes FMs runs each re-made layer's forward step again: its simulated compute
  // is keep-all's for the step plus keep-all's forward time of each re-made layer (durations
  // beside copies grow by the fitted slowdown, so that is left out of the comparison).
  PerfModel model = PerfModel::fit(s_run);
  const Network net = buildZooModelForTest();
  const Planner planner(model, net);
  PlanRequest req;
  req.budget = std::int64_t{1} << 30;
  req.batch = 32;
  req.policy = Policy::KeepAll;
  const PlanResult keep = planner.plan(req);
  req.policy = Policy::RecomputeLight;
  const PlanResult rl = planner.plan(req);
  ASSERT_TRUE(keep.trainable && rl.trainable) << keep.reason << rl.reason;
  const Gmap& g = rl.gmap;
  std::vector<double> extra(static_cast<std::size_t>(g.steps() + 1), 0);
  int remade = 0;
  for (const GmapOp& op : g.ops) {
    if (op.kind != GmapOpKind::Recompute) continue;
    const int layer = g.buffers[static_cast<std::size_t>(op.buffer)].layer;
    for (int s = 1; s <= g.forward_steps; ++s) {
      if (g.step_layer[static_cast<std::size_t>(s)] != layer) continue;
      const StepTiming& t = keep.best.sim.steps[static_cast<std::size_t>(s)];
      extra[static_cast<std::size_t>(op.step)] += t.finish - t.start;
    }
    ++remade;
  }
  ASSERT_GE(remade, 2) << "fmnist-cnn re-makes its flatten and dropout outputs";
  const double slowdown = model.contention().slowdown.slope;
  for (int s = 1; s <= g.steps(); ++s) {
    const StepTiming& a = keep.best.sim.steps[static_cast<std::size_t>(s)];
    const StepTiming& b = rl.best.sim.steps[static_cast<std::size_t>(s)];
    const double want = (a.finish - a.start) + extra[static_cast<std::size_t>(s)];
    const double got = b.finish - b.start;
    if (slowdown == 0) {
      EXPECT_NEAR(got, want, 1e-12 + 1e-9 * want) << "step " << s;
    } else {
      EXPECT_GE(got, want * (1 - 1e-9)) << "step " << s;  // copies only slow compute down
    }
  }
  // The k search plans with the policy's recompute set: the analyzer's peak for it, and its GMAP.
  const MemoryPlan analyzer = planMemory(net, planner.costs(), Policy::RecomputeLight);
  req.batch.reset();
  req.budget = 24 << 20;
  req.max_batch = 128;
  const PlanResult r = planner.plan(req);
  ASSERT_TRUE(r.trainable) << r.reason;
  EXPECT_EQ(r.best.peak, analyzer.curve.peak(r.best.k));
  EXPECT_EQ(r.gmap.recomputed, analyzer.gmap.recomputed);
  EXPECT_EQ(r.gmap.ops.size(), analyzer.gmap.ops.size());
}

TEST_F(PlannerOnSampleRun, ArgminPicksTheBestOfEveryK) {
  // With at most 48 candidate k the planner's grid is every k; its pruned search must return the
  // k a brute-force scan of accudnnAt's stall-removing plans finds (objective: time per sample).
  // At that k it then keeps what fits, which is never slower.
  const PerfModel model = PerfModel::fit(s_run);
  const Network net = buildZooModelForTest();
  const Planner planner(model, net);
  for (std::int64_t mib : {12, 20, 32}) {
    const std::int64_t budget = mib << 20;
    PlanRequest req;
    req.budget = budget;
    req.max_batch = 40;
    const PlanResult r = planner.plan(req);
    ASSERT_TRUE(r.trainable) << mib;
    std::int64_t bestK = 0;
    double bestPerSample = 1e300;
    for (std::int64_t k = 1; k <= std::min<std::int64_t>(40, r.k_max); ++k) {
      const auto e = planner.accudnnAt(k, budget, -1, nullptr, false);
      if (!e) continue;
      const double perSample = e->sim.t_iter / static_cast<double>(k);
      if (perSample < bestPerSample) {
        bestPerSample = perSample;
        bestK = k;
      }
    }
    EXPECT_EQ(r.best.k, bestK) << mib << " MiB";
    EXPECT_LE(r.best.sim.t_iter / static_cast<double>(r.best.k), bestPerSample * (1 + 1e-9));
    const auto kept = planner.accudnnAt(bestK, budget);
    ASSERT_TRUE(kept);
    EXPECT_EQ(r.best.swapped, kept->swapped);
  }
}

TEST_F(PlannerOnSampleRun, APlanDoesNotDependOnWhatThePlannerPlannedBeforeOrBeside) {
  // The planner keeps the GMAPs and step times it built; a result must still equal a fresh
  // planner's, whatever was planned before and whatever other threads plan at the same time.
  const PerfModel model = PerfModel::fit(s_run);
  const Network net = buildZooModelForTest();
  std::vector<PlanRequest> requests;
  for (PlanMode mode : {PlanMode::Argmin, PlanMode::Paper}) {
    for (std::int64_t mib : {12, 14, 17, 20, 24, 32, 48}) {
      PlanRequest req;
      req.mode = mode;
      req.budget = mib << 20;
      req.max_batch = 200;
      requests.push_back(req);
    }
  }
  auto same = [](const PlanResult& a, const PlanResult& b, const std::string& what) {
    ASSERT_EQ(a.trainable, b.trainable) << what;
    EXPECT_EQ(a.best.k, b.best.k) << what;
    EXPECT_EQ(a.best.swapped, b.best.swapped) << what;
    EXPECT_EQ(a.best.peak, b.best.peak) << what;
    EXPECT_EQ(a.best.sim.t_iter, b.best.sim.t_iter) << what;  // bit for bit
  };
  std::vector<PlanResult> fresh;
  for (const PlanRequest& r : requests)
    fresh.push_back(Planner(model, net).plan(r));
  const Planner shared(model, net);
  for (std::size_t i = requests.size(); i-- > 0;)  // the other way round
    same(shared.plan(requests[i]), fresh[i], "reverse " + std::to_string(i));
  std::vector<std::vector<PlanResult>> perThread(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < perThread.size(); ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < requests.size(); ++i)
        perThread[t].push_back(shared.plan(requests[(i + 3 * t) % requests.size()]));
    });
  }
  for (auto& th : threads)
    th.join();
  for (std::size_t t = 0; t < perThread.size(); ++t) {
    for (std::size_t i = 0; i < requests.size(); ++i) {
      same(perThread[t][i], fresh[(i + 3 * t) % requests.size()],
           "thread " + std::to_string(t) + " request " + std::to_string(i));
    }
  }
}

TEST_F(PlannerOnSampleRun, PaperModeBisectionAgreesWithTheFullDescent) {
  const PerfModel model = PerfModel::fit(s_run);
  const Planner planner(model, buildZooModelForTest());
  int feasible = 0, fewer = 0;
  for (Policy policy : {Policy::AccUdnn, Policy::SwapAll}) {
    for (std::int64_t mib : {12, 16, 24, 32, 64}) {
      PlanRequest req;
      req.policy = policy;
      req.mode = PlanMode::Paper;
      req.budget = mib << 20;
      req.max_batch = 400;
      const PlanResult fast = planner.plan(req);
      req.paper_scan_all = true;
      const PlanResult all = planner.plan(req);
      ASSERT_EQ(fast.trainable, all.trainable) << mib;
      if (!all.trainable) continue;
      ++feasible;
      EXPECT_EQ(fast.best.k, all.best.k) << policyName(policy) << " at " << mib << " MiB";
      EXPECT_EQ(fast.best.swapped, all.best.swapped);
      EXPECT_LE(fast.evaluated, all.evaluated);
      fewer += fast.evaluated < all.evaluated;
    }
  }
  EXPECT_GT(feasible, 3);
  EXPECT_GT(fewer, 0);  // some case needed the descent below the top
}

TEST_F(PlannerOnSampleRun, ABudgetThatHoldsKeepAllSwapsNothing) {
  const PerfModel model = PerfModel::fit(s_run);
  const Network net = buildZooModelForTest();
  const Planner planner(model, net);
  const auto& costs = planner.costs();
  const MemoryCurve keepAll =
      planMemory(net, costs, makeSwapSet(Policy::KeepAll, net, costs)).curve;
  for (const std::int64_t k : {8, 32, 64}) {
    const auto acc = planner.accudnnAt(k, keepAll.peak(k));
    ASSERT_TRUE(acc) << k;
    EXPECT_EQ(acc->swapped, makeSwapSet(Policy::KeepAll, net, costs)) << k;
    EXPECT_EQ(acc->bytesMoved(), 0) << k;
  }
  // The argmin plan too, whatever k it picks, when the budget holds keep-all there.
  PlanRequest req;
  req.budget = 256 << 20;
  req.max_batch = 64;
  const PlanResult r = planner.plan(req);
  ASSERT_TRUE(r.trainable);
  ASSERT_LE(keepAll.peak(r.best.k), req.budget);
  EXPECT_EQ(std::count(r.best.swapped.begin(), r.best.swapped.end(), true), 0);
  EXPECT_EQ(r.best.bytesMoved(), 0);
}

TEST_F(PlannerOnSampleRun, NoSwappedFmCouldStayAtTheSamePredictedTime) {
  // Between swap-all's and keep-all's peak: whatever accudnn still swaps either does not fit the
  // budget when kept, or keeping it would make the predicted iteration slower.
  const PerfModel model = PerfModel::fit(s_run);
  const Network net = buildZooModelForTest();
  const Planner planner(model, net);
  const auto& costs = planner.costs();
  const SwapSet swapAll = makeSwapSet(Policy::SwapAll, net, costs);
  const MemoryCurve keepAllCurve =
      planMemory(net, costs, makeSwapSet(Policy::KeepAll, net, costs)).curve;
  const MemoryCurve swapAllCurve = planMemory(net, costs, swapAll).curve;
  int swappedLeft = 0, kept = 0;
  for (const std::int64_t k : {16, 64}) {
    const std::int64_t lo = swapAllCurve.peak(k), hi = keepAllCurve.peak(k);
    ASSERT_LT(lo, hi);
    for (const double f : {0.25, 0.5, 0.75}) {
      const auto budget = lo + static_cast<std::int64_t>(f * static_cast<double>(hi - lo));
      const auto acc = planner.accudnnAt(k, budget);
      ASSERT_TRUE(acc);
      const auto allSwapped = planner.evaluate(k, swapAll, budget);
      ASSERT_TRUE(allSwapped);
      EXPECT_LE(acc->bytesMoved(), allSwapped->bytesMoved());
      EXPECT_LE(acc->sim.t_iter, allSwapped->sim.t_iter * (1 + 1e-9));
      for (std::size_t layer = 0; layer < acc->swapped.size(); ++layer) {
        if (!acc->swapped[layer]) {
          kept += swapAll[layer];
          continue;
        }
        ++swappedLeft;
        SwapSet more = acc->swapped;
        more[layer] = false;
        const auto e = planner.evaluate(k, more, budget);
        if (!e) continue;  // does not fit
        EXPECT_GT(e->sim.t_iter, acc->sim.t_iter * (1 + 1e-9))
            << net.layer(static_cast<int>(layer)).name << " could stay at k = " << k << " in "
            << budget << " bytes";
      }
    }
  }
  EXPECT_GT(swappedLeft, 0);  // the budgets leave something swapped
  EXPECT_GT(kept, 0);
}

TEST_F(PlannerOnSampleRun, ABudgetBelowKOneIsUntrainableWithTheMinimum) {
  const PerfModel model = PerfModel::fit(s_run);
  PlanRequest req;
  req.budget = 1 << 20;
  const PlanResult r = plan(model, buildZooModelForTest(), req);
  EXPECT_FALSE(r.trainable);
  EXPECT_NE(r.reason.find("untrainable"), std::string::npos) << r.reason;
  EXPECT_GT(r.min_budget, req.budget);
}

TEST(PaperModeOnResNet56, AKThatKeepAllFitsMeetsConstraint6) {
  // Where the budget holds keep-all at k, every FM can stay and no step waits for a prefetch, so
  // Algorithm 2 may stop no lower than that k.
  const store::RunData run = store::RunReader(swapscope::testing::resnet56Run()).load();
  const PerfModel model = PerfModel::fit(run);
  const Network net = buildZooModel("resnet56");
  const Planner planner(model, net);
  const auto& costs = planner.costs();
  const MemoryCurve keepAll =
      planMemory(net, costs, makeSwapSet(Policy::KeepAll, net, costs)).curve;
  for (const std::int64_t mib : {256, 1024, 4096}) {
    PlanRequest req;
    req.mode = PlanMode::Paper;
    req.budget = mib << 20;
    const std::int64_t kKeep = keepAll.kMax(req.budget);
    ASSERT_GE(kKeep, 32) << mib;
    const PlanResult r = planner.plan(req);
    ASSERT_TRUE(r.trainable) << mib << " MiB: " << r.reason;
    EXPECT_GE(r.best.k, kKeep) << mib << " MiB";
    EXPECT_LE(r.best.peak, req.budget);
    EXPECT_TRUE(r.paper.violations.empty()) << mib << " MiB";
    EXPECT_EQ(r.paper.t_ready.size(), r.best.sim.steps.size());
  }
}

}  // namespace
}  // namespace swapscope::perf

namespace swapscope::perf {
namespace {

TEST(SubBatches, AnIterationIsSPassesAndOneUpdate) {
  // A pass whose last backward step ends at 10 s and whose update and drain take 2 s more.
  SimResult pass;
  pass.steps.resize(3);
  pass.steps[2].finish = 10;
  pass.t_iter = 12;
  pass.stall = 0.5;
  pass.dispatch = 0.25;
  const SubBatchTiming one = subBatchIteration(pass, 4, 1);
  EXPECT_EQ(one.t_iter, 12);
  EXPECT_EQ(one.throughput, 4.0 / 12);
  const SubBatchTiming three = subBatchIteration(pass, 12, 3);
  EXPECT_EQ(three.t_iter, 3 * 10 + 2);
  EXPECT_EQ(three.idle, 3 * 0.75);
  EXPECT_EQ(three.throughput, 12.0 / 32);
  EXPECT_THROW(subBatchIteration(pass, 12, 0), Error);
}

TEST(SubBatches, APlanOfKInSPassesIsThePlanOfOnePassTimedSTimes) {
  const testing::Chain c;
  const PerfModel model = PerfModel::fit(syntheticRun(c.net, 1e6, 1e9));
  const Planner planner(model, c.net);
  const std::int64_t k = 8;
  // A budget below swap-all's peak at 8 but above it at 2: the minibatch trains only split.
  const std::int64_t budget = (c.curve.peak(2) + c.curve.peak(4)) / 2;
  ASSERT_LT(budget, c.curve.peak(4));
  PlanRequest req;
  req.policy = Policy::SwapAll;
  req.budget = budget;
  req.batch = k;
  EXPECT_FALSE(planner.plan(req).trainable);
  for (const std::int64_t s : {1, 2}) {
    const SubBatchPlan p = planSubBatches(planner, req, s);
    EXPECT_FALSE(p.pass.trainable) << s;
  }
  const SubBatchPlan p = planSubBatches(planner, req, 4);
  ASSERT_TRUE(p.pass.trainable) << p.pass.reason;
  EXPECT_EQ(p.pass.best.k, 2);
  // The peak is the analyzer's at k/S, to the byte, and so is the simulated pool's.
  EXPECT_EQ(p.pass.best.peak, c.curve.peak(2));
  const SimResult& pass = p.pass.best.sim;
  std::int64_t simulatedPeak = 0;
  for (const auto& [time, bytes] : pass.pool)
    simulatedPeak = std::max(simulatedPeak, bytes);
  EXPECT_EQ(simulatedPeak, c.curve.peak(2));
  EXPECT_DOUBLE_EQ(p.timing.t_iter,
                   4 * pass.steps.back().finish + (pass.t_iter - pass.steps.back().finish));
  EXPECT_GT(p.timing.t_iter, pass.t_iter);
  EXPECT_EQ(p.lr, scaledLearningRate(req.lr_base, req.k_base, req.lr_c, k));
  const store::PlanFile file = toPlanFile(p, req, model, c.net, "cpu", "synthetic.swapdb");
  EXPECT_EQ(file.k, k);
  EXPECT_EQ(file.sub_batches, 4);
  EXPECT_EQ(file.predictions.peak_bytes, c.curve.peak(2));
  EXPECT_DOUBLE_EQ(file.predictions.t_iter_s, p.timing.t_iter);
  EXPECT_DOUBLE_EQ(file.predictions.stall_s, 4 * pass.idle());
  // A count that does not split k, and a plan without a fixed k, are refused.
  EXPECT_THROW(planSubBatches(planner, req, 3), Error);
  PlanRequest searched = req;
  searched.batch.reset();
  EXPECT_THROW(planSubBatches(planner, searched, 2), Error);
}

TEST(SubBatches, AutoFindsTheDivisorsOfALargeMinibatchWithoutTryingEveryCount) {
  // A prime K near 10^12: its divisors are 1 and K, found by trial division up to sqrt(K); a
  // loop over every count would not finish. 10^12 itself has 169 divisors.
  const testing::Chain c;
  const PerfModel model = PerfModel::fit(syntheticRun(c.net, 1e6, 1e9));
  const Planner planner(model, c.net);
  PlanRequest req;
  req.policy = Policy::SwapAll;
  req.budget = c.curve.peak(4);
  req.batch = 1'000'000'000'039;
  const SubBatchPlan prime = planSubBatches(planner, req, 0);
  EXPECT_EQ(prime.candidates, 2);
  ASSERT_TRUE(prime.pass.trainable) << prime.pass.reason;
  EXPECT_EQ(prime.sub_batches, *req.batch) << "only one sample per pass fits";
  req.batch = 1'000'000'000'000;
  EXPECT_EQ(planSubBatches(planner, req, 0).candidates, 169);
}

TEST(SubBatches, AutoPicksTheDivisorWithTheLeastSimulatedTime) {
  const testing::Chain c;
  const PerfModel model = PerfModel::fit(syntheticRun(c.net, 1e6, 1e9));
  const Planner planner(model, c.net);
  PlanRequest req;
  req.policy = Policy::SwapAll;
  req.batch = 8;
  req.budget = c.curve.peak(4);
  const SubBatchPlan chosen = planSubBatches(planner, req, 0);
  ASSERT_TRUE(chosen.pass.trainable) << chosen.pass.reason;
  EXPECT_EQ(chosen.candidates, 4);  // 1, 2, 4, 8
  double best = 0;
  std::int64_t bestS = 0;
  for (const std::int64_t s : {1, 2, 4, 8}) {
    const SubBatchPlan p = planSubBatches(planner, req, s);
    if (!p.pass.trainable) continue;
    if (bestS == 0 || p.timing.t_iter < best) {
      best = p.timing.t_iter;
      bestS = s;
    }
  }
  ASSERT_GE(bestS, 2) << "k = 8 does not fit whole";
  EXPECT_EQ(chosen.sub_batches, bestS);
  EXPECT_EQ(chosen.timing.t_iter, best);
  // No divisor fits: the reason names the smallest sub-batch.
  req.budget = c.curve.peak(1) - 1;
  const SubBatchPlan none = planSubBatches(planner, req, 0);
  EXPECT_FALSE(none.pass.trainable);
  EXPECT_NE(none.pass.reason.find("in 8 sub-batches of 1"), std::string::npos) << none.pass.reason;
}

/// A run database of the chain network as `profile` or `run --db` records it, by hand: two
/// iterations per pass size in `passSizes`, each at k = `passes` x the pass size, run in `passes`
/// sub-batches (each step once per pass, on the pass's samples, with its own stall and t_ready),
/// then the SGD update. Every time follows from the pass's samples alone: a step takes 1 us + 3
/// ns per sample per layer index, each compute task waits 10 us after the previous one, and each
/// pass loads and offloads 1000 and 2000 bytes per sample at 1 byte per ns before the first step.
store::RunData passRun(const testing::Chain& c, const std::vector<std::int64_t>& passSizes,
                       std::int64_t passes) {
  store::RunData run = syntheticRun(c.net, 1, 1);
  run.iterations.clear();
  run.samples.clear();
  run.transfers.clear();
  const Gmap& g = c.gmap;
  const int n = g.forward_steps;
  std::int64_t t = 0;
  for (const std::int64_t kp : passSizes) {
    const std::int64_t k = kp * passes;
    for (int it = 0; it < 2; ++it) {
      const std::int64_t start = t;
      for (std::int64_t pass = 0; pass < passes; ++pass) {
        for (const bool toHost : {false, true}) {
          store::TransferRow r;
          r.k = k;
          r.iteration = it;
          r.kind = toHost ? store::TransferKind::Offload : store::TransferKind::Load;
          r.to_host = toHost;
          r.bytes = kp * (toHost ? 2000 : 1000);
          r.start_ns = t;
          r.end_ns = t + r.bytes;
          t = r.end_ns;
          run.transfers.push_back(r);
        }
      }
      for (std::int64_t pass = 0; pass < passes; ++pass) {
        for (int step = 1; step <= 2 * n; ++step) {
          const int layer = g.step_layer[static_cast<std::size_t>(step)];
          const LayerCost& cost = c.costs[static_cast<std::size_t>(layer)];
          const bool bwd = g.isBackwardStep(step);
          t += 10000;
          const std::int64_t time = 1000 + 3 * kp * (layer + 1);
          run.samples.push_back(
              {k, it, step, layer, bwd ? store::Direction::Backward : store::Direction::Forward,
               kp * (bwd ? cost.bwd_data_flops + cost.bwd_weight_flops : cost.fwd_flops), t, time,
               10000, start, 0});
          t += time;
        }
      }
      for (int layer = 0; layer < c.net.size(); ++layer) {
        const std::int64_t params = c.costs[static_cast<std::size_t>(layer)].params;
        if (params == 0) continue;
        t += 10000;
        run.samples.push_back({k, it, 2 * n + 1, layer, store::Direction::Update,
                               params * kSgdFlopsPerParam, t, 1000 + params, 0, start, 0});
        t += 1000 + params;
      }
      run.iterations.push_back({k, it, start, t - start, 0, 0, 0, 0, 0});
    }
  }
  return run;
}

TEST(SubBatches, TheSlowdownBesideACopyComparesStepsThatRanOnTheSameSamples) {
  // One file with k = 8 whole (iterations 0, 1) and k = 8 in 2 sub-batches of 4 (iterations 2,
  // 3). In iteration 2 every step ran beside a copy for 2 us and took 1 us longer: a slowdown
  // of exactly 0.5 against the same step without a copy on 4 samples (iteration 3). Against a
  // median that mixes in the steps run whole on 8 samples, which take longer, it comes out
  // lower.
  const testing::Chain c;
  store::RunData run = passRun(c, {8}, 1);
  store::RunData split = passRun(c, {4}, 2);
  for (auto& it : split.iterations)
    it.iteration += 2;
  for (auto& t : split.transfers)
    t.iteration += 2;
  for (auto& s : split.samples) {
    s.iteration += 2;
    if (s.iteration == 2 && s.direction != store::Direction::Update) {
      s.copy_overlap_ns = 2000;
      s.time_ns += 1000;
    }
  }
  run.iterations.insert(run.iterations.end(), split.iterations.begin(), split.iterations.end());
  run.samples.insert(run.samples.end(), split.samples.begin(), split.samples.end());
  run.transfers.insert(run.transfers.end(), split.transfers.begin(), split.transfers.end());
  const PerfModel m = PerfModel::fit(run);
  ASSERT_TRUE(m.contention().present);
  EXPECT_NEAR(m.contention().slowdown.slope, 0.5, 1e-9);
}

TEST(SubBatches, ARunInSubBatchesFitsTheCurvesOfAProfileAtItsPassSize) {
  // A plan's run at k = 2, 4, 8, 16 in 2 sub-batches ran every step on 1, 2, 4 and 8 samples:
  // fitted, it gives the curves of a profile at those k, not curves at twice the work.
  const testing::Chain c;
  const std::vector<std::int64_t> sizes{1, 2, 4, 8};
  const PerfModel profiled = PerfModel::fit(passRun(c, sizes, 1));
  const PerfModel split = PerfModel::fit(passRun(c, sizes, 2));
  for (int layer = 0; layer < c.net.size(); ++layer) {
    if (layer == c.net.inputLayer()) continue;
    for (const StepKind kind : {StepKind::Forward, StepKind::Backward, StepKind::Update}) {
      if (kind == StepKind::Update && c.costs[static_cast<std::size_t>(layer)].params == 0)
        continue;
      for (const std::int64_t k : {1, 3, 8, 12}) {
        const Estimate a = profiled.step(c.net, c.costs, layer, kind, k);
        const Estimate b = split.step(c.net, c.costs, layer, kind, k);
        const std::string what = c.net.layer(layer).name + " " + std::string(stepKindName(kind)) +
                                 " at k " + std::to_string(k);
        EXPECT_NEAR(b.seconds, a.seconds, 1e-9 * a.seconds) << what;
        EXPECT_EQ(b.extrapolated, a.extrapolated) << what;
      }
    }
  }
  EXPECT_GT(profiled.step(c.net, c.costs, 1, StepKind::Forward, 8).seconds,
            profiled.step(c.net, c.costs, 1, StepKind::Forward, 1).seconds);
  // Each pass's own t_ready and stall: the hand-off is the 10 us gap in both.
  ASSERT_TRUE(split.dispatch().present);
  EXPECT_NEAR(split.dispatch().seconds, 10e-6, 1e-12);
  EXPECT_NEAR(profiled.dispatch().seconds, 10e-6, 1e-12);
  EXPECT_NEAR(split.transfer(4000, false), profiled.transfer(4000, false), 1e-12);
}

TEST(SubBatches, CompareMatchesStepsThatRanOnTheSameSamples) {
  // A profile at k = 1..8 against a run at k = 2..16 in 2 sub-batches: both ran every step on
  // 1, 2, 4 and 8 samples, so the per-step differences are taken at 8 samples per step, and
  // every step's time is the same in both (its time follows from its samples alone).
  const testing::Chain c;
  const std::vector<std::int64_t> sizes{1, 2, 4, 8};
  const RunComparison cmp = compareRuns(passRun(c, sizes, 1), passRun(c, sizes, 2), 1000);
  EXPECT_EQ(cmp.step_k, 8);
  ASSERT_EQ(cmp.steps.size(), static_cast<std::size_t>(2 * c.gmap.forward_steps));
  for (const StepDiff& d : cmp.steps)
    EXPECT_DOUBLE_EQ(d.seconds_a, d.seconds_b) << "step " << d.step;
}

TEST(SubBatches, AStepCountThatDoesNotSplitKIsRefusedNamingTheIteration) {
  const testing::Chain c;
  store::RunData run = passRun(c, {1, 2, 4}, 2);
  // A third step-1 sample in k = 8's first iteration: 3 passes do not split 8.
  const auto first = std::find_if(run.samples.begin(), run.samples.end(),
                                  [](const store::SampleRow& s) { return s.k == 8; });
  ASSERT_NE(first, run.samples.end());
  ASSERT_EQ(first->step, 1);
  run.samples.push_back(*first);
  expectFitRefused(run, "'synthetic.swapdb': k 8 iteration 0 has 3 samples of step 1");
}

TEST(SubBatches, AStepRecordedOtherThanOncePerPassIsRefusedNamingIt) {
  // k = 8 in 2 passes: one pass's row of step 3 lost, so step 3 has 1 sample where step 1 has 2.
  const testing::Chain c;
  store::RunData run = passRun(c, {1, 2, 4}, 2);
  const auto lost = std::find_if(run.samples.begin(), run.samples.end(),
                                 [](const store::SampleRow& s) { return s.k == 8 && s.step == 3; });
  ASSERT_NE(lost, run.samples.end());
  run.samples.erase(lost);
  expectFitRefused(run,
                   "'synthetic.swapdb': k 8 iteration 0 has 1 samples of step 3 but 2 of step 1");
}

TEST(SubBatches, AllowedTheyAreChosenOnlyWhereTheMinibatchDoesNotFitWhole) {
  const testing::Chain c;
  const PerfModel model = PerfModel::fit(syntheticRun(c.net, 1e6, 1e9));
  const Planner planner(model, c.net);
  PlanRequest req;
  req.policy = Policy::SwapAll;
  req.batch = 8;
  // K fits whole: the plan at fixed k, in one pass, whatever a split would predict.
  req.budget = c.curve.peak(8);
  const SubBatchPlan whole = planAllowingSubBatches(planner, req);
  ASSERT_TRUE(whole.pass.trainable) << whole.pass.reason;
  EXPECT_EQ(whole.sub_batches, 1);
  EXPECT_EQ(whole.whole_need, 0);
  EXPECT_EQ(whole.pass.best.k, 8);
  EXPECT_EQ(whole.timing.t_iter, planner.plan(req).best.sim.t_iter);
  // K does not fit: the divisor S > 1 with the least simulated t_iter, as auto picks it, and
  // the bytes K alone needs (swap-all's peak at 8).
  req.budget = c.curve.peak(4);
  const SubBatchPlan split = planAllowingSubBatches(planner, req);
  const SubBatchPlan autoPlan = planSubBatches(planner, req, 0);
  ASSERT_TRUE(split.pass.trainable) << split.pass.reason;
  EXPECT_EQ(split.sub_batches, autoPlan.sub_batches);
  EXPECT_GE(split.sub_batches, 2);
  EXPECT_EQ(split.timing.t_iter, autoPlan.timing.t_iter);
  EXPECT_EQ(split.candidates, 4);  // 1, 2, 4, 8
  EXPECT_EQ(split.whole_need, c.curve.peak(8));
  EXPECT_EQ(planner.plan(req).batch_need, c.curve.peak(8));
  // Below every policy's minimum no split helps: the one-pass refusal stands.
  req.budget = c.curve.peak(1) - 1;
  const SubBatchPlan none = planAllowingSubBatches(planner, req);
  EXPECT_FALSE(none.pass.trainable);
  EXPECT_EQ(none.sub_batches, 1);
  EXPECT_NE(none.pass.reason.find("untrainable"), std::string::npos) << none.pass.reason;
  PlanRequest searched = req;
  searched.batch.reset();
  EXPECT_THROW(planAllowingSubBatches(planner, searched), Error);
}

TEST(SubBatches, TheWholeTrainingTimeIsThePlannersOfTheIteration) {
  const testing::Chain c;
  const PerfModel model = PerfModel::fit(syntheticRun(c.net, 1e6, 1e9));
  const Planner planner(model, c.net);
  PlanRequest req;
  req.policy = Policy::SwapAll;
  req.batch = 8;
  req.budget = c.curve.peak(4);
  req.epochs = 3;
  req.dataset_size = 100;
  req.gpus = 2;
  req.link_bandwidth = 1e9;
  const SubBatchPlan p = planSubBatches(planner, req, 2);
  ASSERT_TRUE(p.pass.trainable) << p.pass.reason;
  ASSERT_GT(p.pass.delta, 0);
  // Each of the 2 GPUs takes K = 8 samples an iteration: ceil(3 x 100 / 16) = 19 iterations of
  // K, each the S passes and Δ.
  EXPECT_DOUBLE_EQ(p.t_whole, 19 * (p.timing.t_iter + p.pass.delta));
  EXPECT_DOUBLE_EQ(p.t_whole, wholeTrainingSeconds(8, p.timing.t_iter, p.pass.delta, req));
  req.dataset_size = 0;
  EXPECT_EQ(wholeTrainingSeconds(8, p.timing.t_iter, p.pass.delta, req), 0);
}

}  // namespace
}  // namespace swapscope::perf
