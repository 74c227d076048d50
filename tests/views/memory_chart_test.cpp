// SPDX-License-Identifier: MIT
/// The memory chart, headless: the data it is given comes from the analyzer unchanged, and the
/// plot holds one graph per policy with one point per step.
#include <QApplication>
#include <algorithm>

#include <gtest/gtest.h>

#include <qcustomplot.h>
#include <set>

#include "graph/network_json.h"
#include "graph/zoo.h"
#include "perfmodel/planner.h"
#include "sample_runs.h"
#include "store/run_db.h"
#include "views/memory_chart_data.h"
#include "views/memory_chart_view.h"

namespace swapscope {
namespace {

TEST(MemoryChartData, SeriesAreTheAnalyzerCurves) {
  const Network net = buildZooModel("resnet20");
  const NetworkAnalysis a = analyzeNetwork(net);
  const std::int64_t budget = std::int64_t{64} << 20;
  const MemoryChartData d = makeMemoryChartData(net, a, 48, budget);
  // keep-all, each other fixed policy of the table, swap-all.
  ASSERT_EQ(d.series.size(), 2 + a.other_fixed.size());
  for (std::size_t i = 0; i < a.other_fixed.size(); ++i) {
    EXPECT_EQ(d.series[1 + i].policy, policyName(a.other_fixed[i].first));
    EXPECT_EQ(d.series[1 + i].peak, a.other_fixed[i].second.curve.peak(48));
  }
  EXPECT_EQ(d.forward_steps, net.size() - 1);
  const MemorySeries& swapAll = d.series.back();
  EXPECT_EQ(swapAll.policy, "swap-all");
  ASSERT_EQ(swapAll.bytes.size(), static_cast<std::size_t>(2 * d.forward_steps));
  for (int s = 1; s <= 2 * d.forward_steps; ++s) {
    EXPECT_EQ(swapAll.bytes[s - 1], static_cast<double>(a.swap_all.curve.resident[s].at(48)));
  }
  EXPECT_EQ(d.budget, budget);
  EXPECT_EQ(d.series[0].peak, a.keep_all.curve.peak(48));
}

TEST(MemoryChartView, OneGraphPerPolicyWithAPointPerStep) {
  const Network net = buildZooModel("fmnist-cnn");
  const NetworkAnalysis a = analyzeNetwork(net);
  MemoryChartView view;
  view.setData(makeMemoryChartData(net, a, 64, std::int64_t{16} << 20));
  // One curve per fixed policy and the budget's legend entry (a graph without points).
  const int curves = 2 + static_cast<int>(a.other_fixed.size());
  ASSERT_EQ(view.plot()->graphCount(), curves + 1);
  for (int g = 0; g < curves; ++g)
    EXPECT_EQ(view.plot()->graph(g)->dataCount(), 2 * (net.size() - 1));
  EXPECT_EQ(view.plot()->graph(curves)->dataCount(), 0);
  EXPECT_TRUE(view.plot()->graph(0)->name().startsWith("keep-all: peak"));
  // Without a plan the policies are peers: each its own colour, so the legend tells them apart.
  std::set<QRgb> colours;
  for (int g = 0; g < curves; ++g)
    colours.insert(view.plot()->graph(g)->pen().color().rgb());
  EXPECT_EQ(colours.size(), static_cast<std::size_t>(curves));
  const double top = static_cast<double>(a.keep_all.curve.peak(64)) / (1 << 20);
  // A budget a little above every curve stays on the chart.
  view.setBudget(static_cast<std::int64_t>(1.2 * top * (1 << 20)));
  EXPECT_GE(view.plot()->yAxis->range().upper, 1.2 * top);
  EXPECT_FALSE(view.plot()->graph(curves)->name().contains("above"));
  // A budget far above them does not squash the curves: the axis follows the data and the
  // legend says where the budget is.
  view.setBudget(std::int64_t{1} << 30);
  EXPECT_LT(view.plot()->yAxis->range().upper, 1.5 * top);
  EXPECT_GE(view.plot()->yAxis->range().upper, top);
  EXPECT_EQ(view.plot()->graph(curves)->name(), "budget 1.00 GiB (above the curves)");
  view.setBudget(std::int64_t{1} << 40);
  EXPECT_EQ(view.plot()->graph(curves)->name(), "budget 1.00 TiB (above the curves)");
  // ... and a small one leaves the range fitted to the curves, named in bytes (not "0.0 MiB").
  view.setBudget(1);
  EXPECT_LT(view.plot()->yAxis->range().upper, 1.5 * top);
  EXPECT_GE(view.plot()->yAxis->range().upper, top);
  EXPECT_EQ(view.plot()->graph(curves)->name(), "budget 1 B");
}

/// A recompute-light plan: the swapped FMs' spans are the plan file's swap set, then the
/// recomputed FMs' spans are its recompute list, drawn in their own colour.
TEST(MemoryChartData, RecomputedSpansAreThePlanFilesRecomputeList) {
  const std::string db = swapscope::testing::resnet56Run();
  const store::RunData run = store::RunReader(db).load();
  const Network net = networkFromText(run.network.json, db);
  const perf::PerfModel model = perf::PerfModel::fit(run);
  perf::PlanRequest req;
  req.policy = Policy::RecomputeLight;
  req.budget = std::int64_t{64} << 20;
  req.batch = 16;
  const perf::PlanResult r = perf::plan(model, net, req);
  ASSERT_TRUE(r.trainable) << r.reason;
  const store::PlanFile file = perf::toPlanFile(r, req, model, net, "cpu", db);
  ASSERT_FALSE(file.recompute.empty());
  const MemoryChartData d =
      makePlanMemoryChartData(net, analyzeNetwork(net), r, "recompute-light", req.budget);
  ASSERT_EQ(d.spans.size(), file.swap_set.size() + file.recompute.size());
  for (std::size_t i = 0; i < file.swap_set.size(); ++i) {
    EXPECT_FALSE(d.spans[i].recomputed);
    EXPECT_EQ(d.spans[i].fm, file.swap_set[i].fm);
  }
  for (std::size_t i = 0; i < file.recompute.size(); ++i) {
    const SwapSpan& span = d.spans[file.swap_set.size() + i];
    EXPECT_TRUE(span.recomputed);
    EXPECT_EQ(span.fm, file.recompute[i].fm);
    EXPECT_EQ(span.release_step, file.recompute[i].release_step);
    EXPECT_EQ(span.prefetch_step, file.recompute[i].recompute_step);
    EXPECT_EQ(net.layer(span.layer).name, span.fm);
  }
  MemoryChartView view;
  view.setData(d);
  view.plot()->replot();
  EXPECT_EQ(view.drawnSpans(), static_cast<int>(d.spans.size()));
  EXPECT_EQ(view.drawnRecomputedSpans(), static_cast<int>(file.recompute.size()));
}

/// The plan's curve, its spans and the references, against the planner and its plan file.
TEST(MemoryChartData, PlanSeriesAndSpansAreThePlanners) {
  const std::string db = swapscope::testing::resnet56Run();
  store::RunReader reader(db);
  const store::RunData run = reader.load();
  const Network net = networkFromText(run.network.json, db);
  const perf::PerfModel model = perf::PerfModel::fit(run);
  const NetworkAnalysis a = analyzeNetwork(net);
  perf::PlanRequest req;
  // At k = 16 keep-all needs 76 MiB: a plan in 64 MiB swaps (a searched k could swap nothing).
  req.budget = std::int64_t{64} << 20;
  req.batch = 16;
  const perf::PlanResult r = perf::plan(model, net, req);
  ASSERT_TRUE(r.trainable);
  const store::PlanFile file = perf::toPlanFile(r, req, model, net, "cpu", db);
  ASSERT_FALSE(file.swap_set.empty());
  const MemoryChartData d = makePlanMemoryChartData(net, a, r, "accudnn", req.budget);
  EXPECT_EQ(d.k, r.best.k);
  EXPECT_TRUE(d.untrainable.empty());
  ASSERT_EQ(d.series.size(), 3u);
  EXPECT_FALSE(d.series[0].reference);
  EXPECT_EQ(d.series[0].peak, r.best.peak);
  EXPECT_EQ(d.series[1].policy, "keep-all");
  EXPECT_EQ(d.series[1].peak, a.keep_all.curve.peak(r.best.k));
  EXPECT_EQ(d.series[2].peak, a.swap_all.curve.peak(r.best.k));
  double top = 0;
  for (double b : d.series[0].bytes)
    top = std::max(top, b);
  EXPECT_EQ(top, static_cast<double>(r.best.peak));
  ASSERT_EQ(d.spans.size(), file.swap_set.size());
  for (std::size_t i = 0; i < d.spans.size(); ++i) {
    EXPECT_EQ(d.spans[i].fm, file.swap_set[i].fm);
    EXPECT_EQ(d.spans[i].release_step, file.swap_set[i].release_step);
    EXPECT_EQ(d.spans[i].prefetch_step, file.swap_set[i].prefetch_step);
    EXPECT_EQ(net.layer(d.spans[i].layer).name, d.spans[i].fm);
  }
  // The view shades one span per swapped FM and keeps the budget line on the chart.
  MemoryChartView view;
  view.setData(d);
  EXPECT_EQ(view.spanCount(), static_cast<int>(file.swap_set.size()));
  EXPECT_EQ(view.drawnSpans(), 0);  // nothing replotted yet
  view.plot()->replot();
  EXPECT_EQ(view.drawnSpans(), static_cast<int>(file.swap_set.size()));
  EXPECT_EQ(view.drawnSelectedSpans(), 0);
  EXPECT_GE(view.plot()->yAxis->range().upper, 64.0);

  // Below the minimum: no plan, the references at k = 1 and the reason.
  req.budget = r.min_budget - 1;
  const perf::PlanResult none = perf::plan(model, net, req);
  ASSERT_FALSE(none.trainable);
  const MemoryChartData u = makePlanMemoryChartData(net, a, none, "accudnn", req.budget);
  EXPECT_EQ(u.untrainable, none.reason);
  ASSERT_EQ(u.series.size(), 2u);
  EXPECT_TRUE(u.spans.empty());
  // ... which the legend names: not the k that was asked for.
  EXPECT_EQ(u.series[0].policy, "keep-all at k = 1");
  EXPECT_EQ(u.series[1].policy, "swap-all at k = 1");
  EXPECT_EQ(u.series[0].peak, a.keep_all.curve.peak(1));
}

TEST(MemoryChartView, ZoomStaysPutWhenTheBudgetMoves) {
  const Network net = buildZooModel("fmnist-cnn");
  const NetworkAnalysis a = analyzeNetwork(net);
  MemoryChartView view;
  view.resize(600, 400);
  view.setData(makeMemoryChartData(net, a, 64, std::int64_t{16} << 20));
  // A wheel event zooms; the axes then keep the user's range through budget changes.
  QWheelEvent wheel(QPointF(300, 200), view.plot()->mapToGlobal(QPointF(300, 200)), QPoint(),
                    QPoint(0, 120), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
  QCoreApplication::sendEvent(view.plot(), &wheel);
  ASSERT_TRUE(view.userZoomed());
  const QCPRange x = view.plot()->xAxis->range(), y = view.plot()->yAxis->range();
  view.setBudget(std::int64_t{1} << 30);
  EXPECT_EQ(view.plot()->xAxis->range(), x);
  EXPECT_EQ(view.plot()->yAxis->range(), y);
}

TEST(MemoryChartView, LegendIsOutsideThePlotArea) {
  MemoryChartView view;
  // The legend is laid out in its own row, not inside the axis rect where the budget line runs.
  EXPECT_EQ(view.plot()->axisRect()->insetLayout()->elementCount(), 0);
  EXPECT_TRUE(view.plot()->plotLayout()->hasElement(0, 0));
  EXPECT_EQ(view.plot()->plotLayout()->element(0, 0), view.plot()->legend);
}

TEST(MemoryChartData, TheMeasuredPoolCurveIsTheRunsAndMeetsThePrediction) {
  // The sample profile ran swap-all; its pool bytes at k = 32 against swap-all's plan at 32.
  const std::string db = swapscope::testing::resnet56Run();
  const store::RunData run = store::RunReader(db).load();
  const Network net = networkFromText(run.network.json, db);
  const perf::PerfModel model = perf::PerfModel::fit(run);
  const NetworkAnalysis a = analyzeNetwork(net);
  perf::PlanRequest req;
  req.policy = Policy::SwapAll;
  req.budget = std::int64_t{256} << 20;
  req.batch = 32;
  const perf::PlanResult r = perf::plan(model, net, req);
  ASSERT_TRUE(r.trainable);
  MemoryChartData d = makePlanMemoryChartData(net, a, r, "swap-all", req.budget);
  const std::size_t before = d.series.size();
  ASSERT_TRUE(addMeasuredMemory(d, run, 32));
  ASSERT_EQ(d.series.size(), before + 1);
  const MemorySeries& m = d.series.back();
  EXPECT_TRUE(m.measured);
  ASSERT_EQ(m.bytes.size(), d.step_layer.size());
  // Its peak is the pool's high water the run recorded, which is the plan's to the byte.
  std::int64_t recorded = 0;
  for (const store::BatchRow& b : run.batches)
    if (b.k == 32) recorded = b.measured_peak;
  EXPECT_EQ(m.peak, recorded);
  EXPECT_EQ(m.peak, d.series.front().peak);
  // No step holds more than the pool's high water, and the busiest step reaches it.
  EXPECT_EQ(*std::max_element(m.bytes.begin(), m.bytes.end()), static_cast<double>(recorded));
  // A k the run did not record adds nothing.
  MemoryChartData none = makePlanMemoryChartData(net, a, r, "swap-all", req.budget);
  EXPECT_FALSE(addMeasuredMemory(none, run, 31));
  EXPECT_EQ(none.series.size(), before);
  // The view draws it as one more graph, kept across plans until removed.
  MemoryChartView view;
  view.setData(makePlanMemoryChartData(net, a, r, "swap-all", req.budget));
  const int graphs = view.plot()->graphCount();
  auto overlay = std::make_shared<MeasuredOverlay>();
  overlay->memory = m;
  view.setOverlay(overlay);
  EXPECT_EQ(view.plot()->graphCount(), graphs + 1);
  view.setData(makePlanMemoryChartData(net, a, r, "swap-all", req.budget));
  EXPECT_EQ(view.plot()->graphCount(), graphs + 1);
  view.setOverlay(nullptr);
  EXPECT_EQ(view.plot()->graphCount(), graphs);
}

}  // namespace
}  // namespace swapscope
