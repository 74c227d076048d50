// SPDX-License-Identifier: MIT
/// The trade-off view: the budget sweep's points and the k curve at one budget, against plans of
/// the sample runs made directly with the engine.
#include <QSignalSpy>

#include <gtest/gtest.h>
#include <qcustomplot.h>
#include <cmath>

#include "tests/views/plot_text.h"
#include "tests/views/sample_plan.h"
#include "views/tradeoff_data.h"
#include "views/tradeoff_view.h"

namespace swapscope {
namespace {

using testing::request;

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

TEST(TradeoffData, SweepBudgetsAreGeometricAndCoverTheRange) {
  const auto b = sweepBudgets(1000, 64000, 7);
  // 1000 * 2^i: the ratio 64 over 6 steps is 2.
  EXPECT_EQ(b, (std::vector<std::int64_t>{1000, 2000, 4000, 8000, 16000, 32000, 64000}));
  EXPECT_EQ(sweepBudgets(10, 12, 64), (std::vector<std::int64_t>{10, 11, 12}));
  EXPECT_TRUE(sweepBudgets(5, 4, 8).empty());
  EXPECT_EQ(sweepBudgets(7, 7, 64), (std::vector<std::int64_t>{7}));
}

TEST(TradeoffData, SweepKeepsOnePointPerBudgetInOrder) {
  TradeoffSweep s;
  s.add({300, 3, 30, 0.1, true});
  s.add({100, 1, 10, 0.1, true});
  s.add({200, 0, 0, 0, false});
  s.add({100, 2, 20, 0.1, true});  // replaces the first point of budget 100
  ASSERT_EQ(s.points.size(), 3u);
  EXPECT_EQ(s.points[0].budget, 100);
  EXPECT_EQ(s.points[0].k, 2);
  EXPECT_EQ(s.points[1].budget, 200);
  EXPECT_EQ(s.points[2].budget, 300);
  // Nearest on a log scale: 150 is nearer 200 than 100 (log 1.5 > log 1.33).
  EXPECT_EQ(s.nearest(150)->budget, 200);
  EXPECT_EQ(s.nearest(120)->budget, 100);
}

TEST(TradeoffData, BatchGridIncludesTheEndsAndTheChosenK) {
  EXPECT_EQ(batchGrid(5, 3), (std::vector<std::int64_t>{1, 2, 3, 4, 5}));
  const auto g = batchGrid(1000, 333, 10);
  EXPECT_EQ(g.front(), 1);
  EXPECT_EQ(g.back(), 1000);
  EXPECT_TRUE(std::binary_search(g.begin(), g.end(), 333));
  EXPECT_TRUE(std::is_sorted(g.begin(), g.end()));
  EXPECT_LE(g.size(), 11u);
  EXPECT_TRUE(batchGrid(0, 0).empty());
}

TEST(TradeoffData, SweepPointIsThePlansKAndThroughput) {
  auto s = testing::fmnist();
  const perf::PlanResult p = s->plan(request(Policy::AccUdnn, 24 * kMiB));
  ASSERT_TRUE(p.trainable);
  const SweepPoint pt = sweepPoint(24 * kMiB, p);
  EXPECT_TRUE(pt.feasible);
  EXPECT_EQ(pt.k, p.best.k);
  EXPECT_DOUBLE_EQ(pt.throughput, static_cast<double>(p.best.k) / p.best.sim.t_iter);
  const SweepPoint none = sweepPoint(1000, s->plan(request(Policy::AccUdnn, 1000)));
  EXPECT_FALSE(none.feasible);
  EXPECT_EQ(none.k, 0);
}

TEST(TradeoffData, BatchCurveIsThePlannerAtFixedK) {
  auto s = testing::fmnist();
  // Swap-all has one swap set, so the argmin k (over every k when k_max <= 48) has the highest
  // throughput on the curve, and the curve's point at that k is the plan itself.
  const std::int64_t budget = 8 * kMiB;
  const perf::PlanResult p = s->plan(request(Policy::SwapAll, budget));
  ASSERT_TRUE(p.trainable) << p.reason;
  ASSERT_LE(p.k_max, 48);
  ASSERT_GT(p.k_max, 4);
  const BatchCurve c = makeBatchCurve(s->planner, s->request, p, 64);
  ASSERT_EQ(c.points.size(), static_cast<std::size_t>(p.k_max));  // every k
  EXPECT_EQ(c.chosen_k, p.best.k);
  double bestThroughput = 0;
  for (const BatchPoint& b : c.points) {
    ASSERT_TRUE(b.trainable) << b.k;
    EXPECT_LE(b.peak, budget);
    EXPECT_NEAR(b.throughput, static_cast<double>(b.k) / b.t_iter, 1e-9 * b.throughput);
    bestThroughput = std::max(bestThroughput, b.throughput);
    // Each point is an independent plan at that k.
    const perf::PlanResult at = s->planner.plan(request(Policy::SwapAll, budget, b.k));
    EXPECT_EQ(b.t_iter, at.best.sim.t_iter);
    if (b.k == p.best.k) {
      EXPECT_EQ(b.t_iter, p.best.sim.t_iter);
    }
  }
  const BatchPoint& chosen = c.points[static_cast<std::size_t>(p.best.k - 1)];
  EXPECT_EQ(chosen.throughput, bestThroughput);
  // Untrainable: no curve, the reason.
  const perf::PlanResult none = s->plan(request(Policy::SwapAll, 1000));
  const BatchCurve empty = makeBatchCurve(s->planner, s->request, none);
  EXPECT_TRUE(empty.points.empty());
  EXPECT_FALSE(empty.reason.empty());
}

TEST(TradeoffView, AnUntrainableBudgetsReasonFitsTheKChart) {
  auto s = testing::fmnist();
  TradeoffView view;
  const perf::PlanResult none = s->plan(request(Policy::AccUdnn, 1000));
  ASSERT_FALSE(none.trainable);
  view.setBatchCurve(makeBatchCurve(s->planner, s->request, none));
  for (const int width : {1200, 600}) {
    view.plot()->setViewport(QRect(0, 0, width, 420));  // as a resize of the shown view
    view.plot()->replot();
    // Within the k chart (the right one of two), every line.
    EXPECT_TRUE(testing::statesWithin(view.plot(), QStringLiteral("untrainable"),
                                      view.plot()->axisRect(1)->width()))
        << width;
  }
}

TEST(TradeoffView, PointsArriveOneByOneAndClicksAdoptThem) {
  auto s = testing::fmnist();
  TradeoffView view;
  view.resize(1200, 420);
  const auto budgets = sweepBudgets(s->planner.minBudget() / 2, 64 * kMiB, 16);
  int feasible = 0;
  for (const std::int64_t b : budgets) {
    const SweepPoint pt = sweepPoint(b, s->planner.plan(request(Policy::AccUdnn, b)));
    feasible += pt.feasible;
    view.addPoint(pt);
    EXPECT_EQ(view.sweepPointsDrawn(), static_cast<int>(view.sweep().points.size()));
  }
  EXPECT_EQ(view.sweepPointsDrawn(), static_cast<int>(budgets.size()));
  EXPECT_GT(feasible, 0);
  EXPECT_LT(feasible, static_cast<int>(budgets.size()));  // half the minimum cannot train
  const std::int64_t current = 24 * kMiB;
  const perf::PlanResult p = s->plan(request(Policy::AccUdnn, current));
  view.setCurrentBudget(current);
  const BatchCurve curve = makeBatchCurve(s->planner, s->request, p, 16);
  view.setBatchCurve(curve);
  EXPECT_EQ(view.batchPointsDrawn(), static_cast<int>(curve.points.size()));
  if (!testing::pngDir().empty()) {
    view.plot()->savePng(QString::fromStdString(testing::pngDir() + "/tradeoff-fmnist.png"), 1200,
                         420);
  }

  // A click on a sweep point adopts that exact budget; one on the k curve, that k.
  QSignalSpy budget(&view, &TradeoffView::budgetChosen);
  QSignalSpy batch(&view, &TradeoffView::batchChosen);
  view.plot()->replot();
  QCPGraph* thr = view.plot()->graph(0);
  const int i = thr->dataCount() / 2;
  emit view.plot()->plottableClick(thr, i, nullptr);
  ASSERT_EQ(budget.count(), 1);
  const qint64 chosen = budget.takeFirst().at(0).toLongLong();
  EXPECT_NEAR(static_cast<double>(chosen) / kMiB, thr->data()->at(i)->key, 1e-9);
  EXPECT_NE(std::find(budgets.begin(), budgets.end(), chosen), budgets.end());
  QCPGraph* tIter = view.plot()->graph(3);
  emit view.plot()->plottableClick(tIter, 2, nullptr);
  ASSERT_EQ(batch.count(), 1);
  EXPECT_EQ(batch.takeFirst().at(0).toLongLong(), curve.points[2].k);

  // A new sweep starts empty.
  view.clearSweep();
  EXPECT_EQ(view.sweepPointsDrawn(), 0);
}

}  // namespace
}  // namespace swapscope
