// SPDX-License-Identifier: MIT
/// The memory chart, headless: the data it is given comes from the analyzer unchanged, and the
/// plot holds one graph per policy with one point per step.
#include <QApplication>

#include <gtest/gtest.h>
#include <qcustomplot.h>

#include "graph/zoo.h"
#include "views/memory_chart_data.h"
#include "views/memory_chart_view.h"

namespace swapscope {
namespace {

TEST(MemoryChartData, SeriesAreTheAnalyzerCurves) {
  const Network net = buildZooModel("resnet20");
  const NetworkAnalysis a = analyzeNetwork(net);
  const MemoryPlan vdnn = planMemory(net, a.costs, makeSwapSet(SwapPolicy::VdnnConv, net, a.costs));
  const std::int64_t budget = std::int64_t{64} << 20;
  const MemoryChartData d = makeMemoryChartData(net, a, vdnn, 48, budget);
  ASSERT_EQ(d.series.size(), 3u);
  EXPECT_EQ(d.forward_steps, net.size() - 1);
  const MemorySeries& swapAll = d.series[2];
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
  const MemoryPlan vdnn = planMemory(net, a.costs, makeSwapSet(SwapPolicy::VdnnConv, net, a.costs));
  MemoryChartView view;
  view.setData(makeMemoryChartData(net, a, vdnn, 64, std::int64_t{16} << 20));
  ASSERT_EQ(view.plot()->graphCount(), 3);
  for (int g = 0; g < 3; ++g)
    EXPECT_EQ(view.plot()->graph(g)->dataCount(), 2 * (net.size() - 1));
  EXPECT_TRUE(view.plot()->graph(0)->name().startsWith("keep-all: peak"));
  // A budget above every curve stays on the chart.
  view.setBudget(std::int64_t{1} << 30);
  EXPECT_GE(view.plot()->yAxis->range().upper, 1024.0);
  // ... and a small one leaves the range fitted to the curves.
  view.setBudget(1);
  EXPECT_LT(view.plot()->yAxis->range().upper, 1024.0);
  // The y axis shows every peak and the budget.
  EXPECT_GE(view.plot()->yAxis->range().upper,
            static_cast<double>(a.keep_all.curve.peak(64)) / (1 << 20));
}

}  // namespace
}  // namespace swapscope

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
