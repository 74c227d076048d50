// SPDX-License-Identifier: MIT
// The Compare view's data and tables: the engine's comparison kept whole, the recorded iteration
// times and pool curves, and the tables' rows in the comparison's order.
#include <qcustomplot.h>
#include <QStandardItemModel>
#include <QTableView>

#include <gtest/gtest.h>

#include "sample_runs.h"
#include "store/run_db.h"
#include "views/compare_data.h"
#include "views/compare_view.h"

namespace swapscope {
namespace {

const std::string kFmnist = swapscope::testing::fmnistRun();
const std::string kResnet = swapscope::testing::resnet56Run();

TEST(CompareData, KeepsEveryStepAndTheRecordedTimes) {
  const store::RunData a = store::RunReader(kFmnist).load();
  const CompareData d = makeCompareData(a, a);
  const perf::RunComparison& c = d.comparison;
  // One run against itself: the same network, every step at its largest k, no difference.
  ASSERT_TRUE(c.same_network);
  EXPECT_EQ(c.step_k, 94);
  EXPECT_EQ(c.steps.size(), c.steps_total);
  EXPECT_EQ(c.steps.size(), a.steps.size());  // the 2N steps, none cut by `top`
  for (const perf::StepDiff& s : c.steps)
    EXPECT_EQ(s.seconds_a, s.seconds_b);
  // Iteration times per recorded k, in iteration order, from the iterations table.
  ASSERT_EQ(d.times_a.size(), 5u);
  EXPECT_EQ(d.times_a[1].k, 24);
  ASSERT_EQ(d.times_a[1].seconds.size(), 5u);
  for (const store::IterationRow& r : a.iterations) {
    if (r.k == 24) {
      EXPECT_DOUBLE_EQ(d.times_a[1].seconds[static_cast<std::size_t>(r.iteration)],
                       static_cast<double>(r.duration_ns) * 1e-9);
    }
  }
  // The pool curve at the common k, iteration 0.
  EXPECT_EQ(d.pool_a.k, 94);
  EXPECT_EQ(d.pool_a.iteration, 0);
  std::size_t rows = 0;
  for (const store::MemoryRow& m : a.memory)
    rows += m.k == 94 && m.iteration == 0;
  EXPECT_EQ(d.pool_a.points.size(), rows);
  EXPECT_EQ(d.pool_a.budget, a.meta.budget);
}

TEST(CompareData, RunsOfDifferentNetworksShowTheirOwnLargestK) {
  const store::RunData a = store::RunReader(kFmnist).load();
  const store::RunData b = store::RunReader(kResnet).load();
  const CompareData d = makeCompareData(a, b);
  EXPECT_FALSE(d.comparison.same_network);
  EXPECT_EQ(d.comparison.step_k, 0);
  EXPECT_TRUE(d.comparison.steps.empty());
  EXPECT_FALSE(d.comparison.curves.empty());  // layer types both fitted (conv, relu, ...)
  EXPECT_EQ(d.pool_a.k, 94);
  EXPECT_EQ(d.pool_b.k, 128);
  EXPECT_EQ(d.label_a, "A: fmnist-cnn (fmnist-cnn-cpu-profile.swapdb)");
  EXPECT_GT(d.largest_transfer, 0);
}

TEST(CompareView, TablesHoldTheComparisonsRowsLargestDifferenceFirst) {
  // A made-up comparison: the table must keep its order and values, whatever they are.
  CompareData d;
  d.label_a = "A: x (a.swapdb)";
  d.label_b = "B: x (b.swapdb)";
  d.comparison.same_network = true;
  d.comparison.step_k = 32;
  d.comparison.steps = {{3, "conv1", "fwd", 0.010, 0.004},
                        {7, "fc", "bwd", 0.001, 0.005},
                        {1, "conv0", "fwd", 0.002, 0.0025}};
  d.comparison.steps_total = 3;
  d.comparison.curves = {{"conv", "fwd", 1e9, false, 0.002, 0.003, "affine", "loglog", false},
                         {"linear", "bwd", 2e6, false, 0.0001, 0.00005, "affine", "affine", true}};
  CompareView view;
  view.resize(1000, 700);
  view.show();
  // Before a comparison: the message alone, no empty tables or plots.
  EXPECT_FALSE(view.curvesPlot()->isVisible());
  EXPECT_FALSE(view.stepTable()->isVisible());
  view.setData(d);
  EXPECT_TRUE(view.curvesPlot()->isVisible());
  QStandardItemModel* steps = view.stepModel();
  ASSERT_EQ(steps->rowCount(), 3);
  const std::vector<int> order = {3, 7, 1};  // |B - A|: 6, 4, 0.5 ms
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(steps->item(r, 0)->data(Qt::UserRole).toInt(), order[static_cast<std::size_t>(r)]);
    const perf::StepDiff& s = d.comparison.steps[static_cast<std::size_t>(r)];
    EXPECT_EQ(steps->item(r, 3)->data(Qt::UserRole).toDouble(), s.seconds_a);
    EXPECT_EQ(steps->item(r, 4)->data(Qt::UserRole).toDouble(), s.seconds_b);
  }
  EXPECT_EQ(steps->item(0, 5)->text(), "-6.000");
  // Sorting by a column sorts by the value, not the text.
  view.stepTable()->sortByColumn(4, Qt::AscendingOrder);  // B ms: 2.5, 4, 5
  EXPECT_EQ(steps->item(0, 0)->text(), "1");
  EXPECT_EQ(steps->item(2, 0)->text(), "7");
  QStandardItemModel* curves = view.curveModel();
  ASSERT_EQ(curves->rowCount(), 2);
  EXPECT_EQ(curves->item(1, 0)->text(), "linear");
  EXPECT_TRUE(curves->item(1, 2)->text().endsWith(" *"));  // extrapolated
  EXPECT_EQ(curves->item(0, 5)->text(), "1.50x");
  // The curves plot: A's and B's bars, one per curve, the first curve at the top.
  ASSERT_EQ(view.curvesPlot()->plottableCount(), 2);
  auto* barsA = qobject_cast<QCPBars*>(view.curvesPlot()->plottable(0));
  ASSERT_TRUE(barsA);
  ASSERT_EQ(barsA->dataCount(), 2);
  EXPECT_DOUBLE_EQ(barsA->data()->at(1)->key, 1);
  EXPECT_DOUBLE_EQ(barsA->data()->at(1)->value, 2.0);  // conv fwd, ms
  EXPECT_DOUBLE_EQ(barsA->data()->at(0)->value, 0.1);  // linear bwd
  // Selecting a curve's row marks its bars.
  view.curveTable()->selectRow(1);
  EXPECT_EQ(barsA->selection(), QCPDataSelection(QCPDataRange(0, 1)));
}

}  // namespace
}  // namespace swapscope
