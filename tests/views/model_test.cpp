// SPDX-License-Identifier: MIT
/// The model view against the fitted model of the sample runs: the measured medians it shows are
/// the points the engine fitted (their residuals are the engine's), and the PCIe page holds every
/// recorded copy with the engine's line and duplex factor.
#include <QComboBox>
#include <QSignalSpy>

#include <gtest/gtest.h>

#include <qcustomplot.h>
#include <cmath>

#include "graph/zoo.h"
#include "tests/views/sample_plan.h"
#include "views/log_ticker.h"
#include "views/model_data.h"
#include "views/model_view.h"

namespace swapscope {
namespace {

TEST(ModelData, PointsAreWhatTheModelWasFittedTo) {
  auto s = testing::resnet56();
  const ModelData d = makeModelData(s->run, s->model);
  ASSERT_EQ(d.groups.size(), s->model.groups().size());
  EXPECT_EQ(d.groups.front().scope, "type");  // per-type groups first
  EXPECT_EQ(d.groups.back().scope, "layer");
  for (const ModelGroupData& g : d.groups) {
    const perf::Curve& c = g.chosen();
    ASSERT_EQ(g.points.size(), c.residuals.size()) << g.key;
    EXPECT_EQ(static_cast<int>(g.points.size()), c.points) << g.key;
    for (std::size_t i = 0; i < g.points.size(); ++i) {
      // The engine's residual of point i is its prediction minus this median.
      const double predicted = c.predict(g.points[i].x);
      EXPECT_NEAR(predicted - g.points[i].t, c.residuals[i], 1e-9 * std::abs(predicted) + 1e-15)
          << g.key << " point " << i;
    }
    ASSERT_EQ(g.grid_t.size(), 3u);
    ASSERT_EQ(g.grid_x.size(), g.grid_t[0].size());
  }
}

TEST(ModelData, AMedianByHand) {
  auto s = testing::resnet56();
  const ModelData d = makeModelData(s->run, s->model);
  // The first convolution's forward step at k = 16: the median of its five recorded times.
  int conv = -1;
  for (const store::LayerRow& l : s->run.layers) {
    if (l.kind == "conv2d") {
      conv = l.id;
      break;
    }
  }
  ASSERT_GE(conv, 0);
  std::vector<std::int64_t> ns;
  for (const store::SampleRow& r : s->run.samples) {
    if (r.layer == conv && r.k == 16 && r.direction == store::Direction::Forward)
      ns.push_back(r.time_ns);
  }
  ASSERT_EQ(ns.size(), 5u);
  std::sort(ns.begin(), ns.end());
  const std::string name = s->run.layers[static_cast<std::size_t>(conv)].name;
  const int gi = d.groupIndex(modelGroupKey("layer", name, perf::StepKind::Forward));
  ASSERT_GE(gi, 0);
  const ModelGroupData& g = d.groups[static_cast<std::size_t>(gi)];
  ASSERT_EQ(g.points.size(), 5u);  // one per profiled k
  EXPECT_EQ(g.points[0].k, 16);
  EXPECT_EQ(g.points[0].samples, 5);
  EXPECT_DOUBLE_EQ(g.points[0].t, static_cast<double>(ns[2]) * 1e-9);
  EXPECT_DOUBLE_EQ(
      g.points[0].x,
      static_cast<double>(s->run.layers[static_cast<std::size_t>(conv)].fwd_flops * 16));
  EXPECT_FALSE(g.bytes_axis);
}

TEST(ModelData, PcieHoldsEveryCopyAndMarksTheOverlapped) {
  auto s = testing::fmnist();
  const ModelData d = makeModelData(s->run, s->model);
  std::size_t copies = 0;
  for (const store::TransferRow& t : s->run.transfers)
    copies += t.kind != store::TransferKind::Readback && t.bytes > 0;
  EXPECT_EQ(d.h2d.transfers.size() + d.d2h.transfers.size(), copies);
  EXPECT_EQ(d.h2d.fit.bandwidth, s->model.link(false).bandwidth);
  EXPECT_EQ(d.d2h.fit.latency, s->model.link(true).latency);
  EXPECT_EQ(d.duplex_factor, s->model.duplexFactor());
  // Overlap by brute force: some copy of the other direction in the same iteration intersects.
  std::size_t overlapped = 0;
  for (const store::TransferRow& t : s->run.transfers) {
    if (t.kind == store::TransferKind::Readback || t.bytes <= 0) continue;
    for (const store::TransferRow& o : s->run.transfers) {
      if (o.kind == store::TransferKind::Readback || o.bytes <= 0 || o.to_host == t.to_host ||
          o.k != t.k || o.iteration != t.iteration)
        continue;
      if (o.start_ns < t.end_ns && o.end_ns > t.start_ns) {
        ++overlapped;
        break;
      }
    }
  }
  std::size_t marked = 0;
  for (const PcieDirection* dir : {&d.h2d, &d.d2h}) {
    for (const PcieTransfer& t : dir->transfers)
      marked += t.overlapped;
  }
  EXPECT_EQ(marked, overlapped);
}

/// The graphs of the PCIe page named "<direction> fit...": a direction's line and its line
/// times the duplex factor.
int fitLinesOf(ModelView& view, const QString& direction) {
  int n = 0;
  for (int i = 0; i < view.plot()->graphCount(); ++i)
    n += view.plot()->graph(i)->name().startsWith(direction + QStringLiteral(" fit"));
  return n;
}

TEST(ModelView, ARunThatOffloadedNothingDrawsNoLineItDidNotMeasure) {
  // A run of a plan that offloads nothing copies nothing to the host but its loss: its
  // device-to-host line is the host-to-device one standing in, which the page draws once, as
  // the host-to-device line, and no device-to-host line over no points.
  auto s = testing::fmnist();
  std::erase_if(s->run.transfers, [](const store::TransferRow& t) {
    return t.to_host && t.kind != store::TransferKind::Readback;
  });
  const perf::PerfModel model = perf::PerfModel::fit(s->run);
  ASSERT_TRUE(model.link(true).from_other_direction);
  ModelView view;
  view.resize(1000, 650);
  view.setData(makeModelData(s->run, model));
  view.showPage(-1);
  // Nor was a duplex factor measured (no copy ran beside one the other way): the line alone.
  ASSERT_EQ(model.duplexPoints(), 0);
  EXPECT_EQ(fitLinesOf(view, QStringLiteral("host-to-device")), 1);
  EXPECT_EQ(fitLinesOf(view, QStringLiteral("device-to-host")), 0);
  const std::string dir = testing::pngDir();
  if (!dir.empty())
    view.plot()->savePng(QString::fromStdString(dir + "/model-pcie-no-offloads.png"), 1000, 650);
  // The sample as recorded: both directions measured, both drawn.
  auto full = testing::fmnist();
  view.setData(makeModelData(full->run, full->model));
  view.showPage(-1);
  EXPECT_EQ(fitLinesOf(view, QStringLiteral("device-to-host")), 2);
}

TEST(ModelView, DrawsEveryPointAndFollowsTheSelectedLayer) {
  auto s = testing::resnet56();
  const ModelData d = makeModelData(s->run, s->model);
  ModelView view;
  view.resize(1000, 650);
  view.setPlannedNetwork(s->net);
  view.setData(d);
  ASSERT_EQ(view.currentPage(), 0);
  const ModelGroupData& first = d.groups.front();
  EXPECT_EQ(view.measuredPointsDrawn(), static_cast<int>(first.points.size()));
  EXPECT_EQ(view.pageBox()->count(), static_cast<int>(d.groups.size()) + 1);
  const std::string dir = testing::pngDir();
  const int conv = d.groupIndex(modelGroupKey("type", "conv2d", perf::StepKind::Backward));
  ASSERT_GE(conv, 0);
  view.showPage(conv);
  EXPECT_EQ(view.measuredPointsDrawn(),
            static_cast<int>(d.groups[static_cast<std::size_t>(conv)].points.size()));
  if (!dir.empty())
    view.plot()->savePng(QString::fromStdString(dir + "/model-conv-bwd.png"), 1000, 650);
  view.showPage(-1);
  EXPECT_EQ(view.measuredPointsDrawn(),
            static_cast<int>(d.h2d.transfers.size() + d.d2h.transfers.size()));
  if (!dir.empty())
    view.plot()->savePng(QString::fromStdString(dir + "/model-pcie.png"), 1000, 650);

  // The profiled network: a layer's own forward curve.
  const int layer = 3;
  view.selectLayer(layer);
  const int own =
      d.groupIndex(modelGroupKey("layer", s->net.layer(layer).name, perf::StepKind::Forward));
  ASSERT_GE(own, 0);
  EXPECT_EQ(view.currentPage(), own);
  // Another network: its type's curve.
  const Network other = buildZooModel("resnet20");
  view.setPlannedNetwork(other);
  view.selectLayer(1);
  const std::string kind(layerKindName(other.layer(1).kind));
  EXPECT_EQ(d.groups[static_cast<std::size_t>(view.currentPage())].key,
            modelGroupKey("type", kind, perf::StepKind::Forward));
}

// The legend sat inside the curves' axes, over the fitted lines.
TEST(ModelView, TheLegendCoversNoPointOrCurve) {
  auto s = testing::resnet56();
  ModelView view;
  view.resize(1000, 650);
  view.show();
  view.setData(makeModelData(s->run, s->model));
  for (const int page : {0, -1}) {  // a per-type group, the PCIe page
    view.showPage(page);
    QCustomPlot* p = view.plot();
    p->replot();  // lays the plot out at the view's size
    ASSERT_EQ(p->axisRectCount(), 2);
    ASSERT_GT(p->axisRect(0)->rect().height(), 100);
    for (QCPAxisRect* axes : p->axisRects()) {
      EXPECT_EQ(axes->insetLayout()->elementCount(), 0) << "page " << page;
      EXPECT_FALSE(p->legend->outerRect().intersects(axes->rect())) << "page " << page;
    }
    // Every graph of the upper axes (the points, the fitted lines) has its entry.
    int upper = 0;
    for (int i = 0; i < p->graphCount(); ++i) {
      if (p->graph(i)->valueAxis()->axisRect() != p->axisRect(0)) continue;
      ++upper;
      EXPECT_TRUE(p->legend->hasItemWithPlottable(p->graph(i)))
          << p->graph(i)->name().toStdString();
    }
    EXPECT_GE(upper, 4);
  }
}

TEST(ReadableLogTicker, ANarrowRangeGetsOneTwoFiveTicksInPlainNumbers) {
  ReadableLogTicker ticker;
  QVector<double> ticks, subTicks;
  QVector<QString> labels;
  ticker.generate(QCPRange(7, 130), QLocale::c(), 'e', 0, ticks, &subTicks, &labels);
  EXPECT_EQ(ticks, (QVector<double>{10, 20, 50, 100}));
  EXPECT_EQ(labels, (QVector<QString>{"10", "20", "50", "100"}));
  EXPECT_TRUE(subTicks.isEmpty());
  ticker.generate(QCPRange(0.6, 8), QLocale::c(), 'e', 0, ticks, &subTicks, &labels);
  EXPECT_EQ(ticks, (QVector<double>{1, 2, 5}));
  // Less than 1-2-5 can mark: every integer multiple.
  ticker.generate(QCPRange(2.5, 4.5), QLocale::c(), 'e', 0, ticks, &subTicks, &labels);
  EXPECT_EQ(ticks, (QVector<double>{3, 4}));
  // Two decades or more: powers of ten, as QCPAxisTickerLog draws them.
  ticker.generate(QCPRange(1, 1e6), QLocale::c(), 'e', 0, ticks, &subTicks, &labels);
  ASSERT_FALSE(ticks.isEmpty());
  for (const double t : ticks)
    EXPECT_DOUBLE_EQ(std::log10(t), std::round(std::log10(t))) << t;
}

}  // namespace
}  // namespace swapscope
