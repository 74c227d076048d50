// SPDX-License-Identifier: MIT
/// The streams view against real plans of the sample runs: one compute bar per step at the
/// simulator's times, one bar per offload and prefetch of the swap set, one stall marker per
/// stalled step of the plan file, and a zoom that survives a re-plan of the same network.
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <algorithm>

#include "common/format.h"
#include "graph/zoo.h"
#include "store/run_db.h"
#include "tests/views/plot_text.h"
#include "tests/views/sample_plan.h"
#include "views/streams_data.h"
#include "views/streams_view.h"

namespace swapscope {
namespace {

using testing::request;

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

/// The swap set's copies, counted on the GMAP: every offload, and every prefetch but the
/// minibatch's load at step 1.
int gmapSwapCopies(const Gmap& g) {
  int n = 0;
  for (const GmapOp& op : g.ops) {
    n += op.kind == GmapOpKind::Offload || (op.kind == GmapOpKind::Prefetch && op.step > 1);
  }
  return n;
}

TEST(StreamsData, BarsAreTheSimulatedStepsAndTransfers) {
  auto s = testing::resnet56();
  const perf::PlanResult& p = s->plan(request(Policy::SwapAll, 256 * kMiB, 32));
  ASSERT_TRUE(p.trainable) << p.reason;
  const StreamsData d = makeStreamsData(s->net, p, &s->model, &s->planner.costs());
  const int steps = p.gmap.steps();
  ASSERT_EQ(steps, 2 * (s->net.size() - 1));

  int compute = 0, updates = 0;
  for (const StreamBar& b : d.bars) {
    if (b.lane != StreamLane::Compute) continue;
    if (b.kind == StreamBarKind::Update) {
      ++updates;
      continue;
    }
    ++compute;
    const perf::StepTiming& t = p.best.sim.steps[static_cast<std::size_t>(b.step)];
    EXPECT_EQ(b.start, t.start);
    EXPECT_EQ(b.finish, t.finish);
    EXPECT_EQ(b.kind, b.step > steps / 2 ? StreamBarKind::Backward : StreamBarKind::Forward);
    EXPECT_EQ(b.label, s->net.layer(p.gmap.step_layer[static_cast<std::size_t>(b.step)]).name);
  }
  EXPECT_EQ(compute, steps);
  EXPECT_EQ(updates, 1);  // resnet56 has parameters
  // The total stall is the plan file's: the compute stream's idle time, hand-offs included.
  EXPECT_EQ(d.total_stall,
            perf::toPlanFile(p, s->request, s->model, s->net, "cpu", "x").predictions.stall_s);
  EXPECT_GT(d.total_stall, p.best.sim.stall);
  // The update starts where the last backward step ends and, its tasks' hand-offs included,
  // ends where the iteration does (no copy runs after it here): the lane reaches t_iter.
  const StreamBar& update = d.bars[static_cast<std::size_t>(steps)];
  EXPECT_EQ(update.kind, StreamBarKind::Update);
  EXPECT_EQ(update.start, p.best.sim.steps.back().finish);
  double copiesEnd = 0;
  for (const auto* lane : {&p.best.sim.h2d, &p.best.sim.d2h})
    for (const perf::BusyInterval& iv : *lane)
      copiesEnd = std::max(copiesEnd, iv.end);
  ASSERT_LT(copiesEnd, update.finish);
  EXPECT_NEAR(update.finish, p.best.sim.t_iter, 1e-9 * p.best.sim.t_iter);

  // Swap-all at k = 32: every swappable FM goes out and comes back once.
  const store::PlanFile file = perf::toPlanFile(p, s->request, s->model, s->net, "cpu", "x");
  ASSERT_GT(file.swap_set.size(), 0u);
  EXPECT_EQ(d.swapTransfers(), gmapSwapCopies(p.gmap));
  // Each swapped FM goes out once and comes back once, except the minibatch: its host copy is
  // the data set's, so it is only prefetched back.
  const bool minibatchSwapped =
      std::any_of(file.swap_set.begin(), file.swap_set.end(),
                  [&](const auto& sw) { return sw.fm == s->net.layer(s->net.inputLayer()).name; });
  EXPECT_TRUE(minibatchSwapped);  // swap-all swaps it
  EXPECT_EQ(d.swapTransfers(), static_cast<int>(2 * file.swap_set.size()) - 1);
  for (const StreamBar& b : d.bars) {
    if (b.kind == StreamBarKind::Offload) {
      EXPECT_EQ(b.lane, StreamLane::SwapOut);
    }
    if (b.kind == StreamBarKind::Prefetch || b.kind == StreamBarKind::Load) {
      EXPECT_EQ(b.lane, StreamLane::SwapIn);
    }
    if (b.lane != StreamLane::Compute) {
      EXPECT_GT(b.bytes, 0) << b.label;
    }
  }

  // One marker per stalled step of the plan file, with its duration.
  ASSERT_EQ(d.stalls.size(), file.predictions.stalls.size());
  double total = 0;
  for (std::size_t i = 0; i < d.stalls.size(); ++i) {
    EXPECT_EQ(d.stalls[i].step, file.predictions.stalls[i].step);
    EXPECT_EQ(d.stalls[i].label, file.predictions.stalls[i].layer);
    EXPECT_NEAR(d.stalls[i].seconds(), file.predictions.stalls[i].seconds, 1e-15);
    total += d.stalls[i].seconds();
  }
  // The markers hold every stall (and the hand-offs before the stalled steps only).
  EXPECT_GE(total, p.best.sim.stall - 1e-12);
  EXPECT_LE(total, p.best.sim.idle() + 1e-12);
  EXPECT_EQ(d.k, 32);
}

/// recompute-light: the backward steps that re-make recomputed FMs (the GMAP's Recompute ops'
/// steps) are their own bar kind, the others stay backward bars.
TEST(StreamsData, StepsThatReMakeFmsAreTheirOwnKind) {
  auto s = testing::resnet56();
  const perf::PlanResult p = s->plan(request(Policy::RecomputeLight, std::int64_t{64} << 20, 16));
  ASSERT_TRUE(p.trainable) << p.reason;
  std::vector<int> remakeSteps;
  for (const GmapOp& op : p.gmap.ops) {
    if (op.kind == GmapOpKind::Recompute) remakeSteps.push_back(op.step);
  }
  std::sort(remakeSteps.begin(), remakeSteps.end());
  remakeSteps.erase(std::unique(remakeSteps.begin(), remakeSteps.end()), remakeSteps.end());
  ASSERT_FALSE(remakeSteps.empty());
  const StreamsData d = makeStreamsData(s->net, p);
  std::vector<int> drawn;
  int backward = 0;
  for (const StreamBar& b : d.bars) {
    if (b.kind == StreamBarKind::Remake) drawn.push_back(b.step);
    backward += b.kind == StreamBarKind::Backward;
  }
  EXPECT_EQ(drawn, remakeSteps);
  EXPECT_EQ(backward + static_cast<int>(drawn.size()), p.gmap.forward_steps);
}

TEST(StreamsData, HoverFindsTheBarUnderTheCursor) {
  auto s = testing::fmnist();
  const perf::PlanResult& p = s->plan(request(Policy::SwapAll, 32 * kMiB, 16));
  ASSERT_TRUE(p.trainable) << p.reason;
  const StreamsData d = makeStreamsData(s->net, p);
  const perf::StepTiming& t3 = p.best.sim.steps[3];
  const StreamBar* b = d.barAt(StreamLane::Compute, (t3.start + t3.finish) / 2);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->step, 3);
  // Past the end of the iteration there is nothing; a slack reaches the last bar.
  EXPECT_EQ(d.barAt(StreamLane::Compute, p.best.sim.t_iter * 2), nullptr);
  const perf::BusyInterval& first = p.best.sim.d2h.front();
  const StreamBar* out = d.barAt(StreamLane::SwapOut, first.start);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->kind, StreamBarKind::Offload);
  EXPECT_EQ(out->label, p.gmap.buffers[static_cast<std::size_t>(first.buffer)].name);
}

TEST(StreamsData, AnUntrainableBudgetGivesItsReasonAndNoBars) {
  auto s = testing::fmnist();
  const perf::PlanResult& p = s->plan(request(Policy::AccUdnn, 1024));
  ASSERT_FALSE(p.trainable);
  const StreamsData d = makeStreamsData(s->net, p);
  EXPECT_FALSE(d.trainable);
  EXPECT_TRUE(d.bars.empty());
  EXPECT_NE(d.reason.find("untrainable"), std::string::npos) << d.reason;
}

TEST(StreamsView, AStallAtTheStartIsLabelledInsideTheChart) {
  // Step 1 waits for the minibatch's load: a stall from t = 0. Its label would be cut in half
  // at the axis; it moves inside instead of disappearing.
  auto s = testing::fmnist();
  const perf::PlanResult& p = s->plan(request(Policy::KeepAll, 256 * kMiB, 8));
  ASSERT_TRUE(p.trainable);
  const StreamsData d = makeStreamsData(s->net, p, &s->model, &s->planner.costs());
  ASSERT_FALSE(d.stalls.empty());
  ASSERT_NEAR(d.stalls.front().start, 0.0, 1e-12);
  StreamsView view;
  view.plot()->setViewport(QRect(0, 0, 1400, 420));
  view.setData(d);
  view.plot()->replot();
  const QString first = QString::fromStdString(formatMilliseconds(d.stalls.front().seconds()));
  bool labelled = false;
  for (int i = 0; i < view.plot()->itemCount(); ++i) {
    auto* t = qobject_cast<QCPItemText*>(view.plot()->item(i));
    if (!t || !t->visible() || t->property("swapscopeItem") != "stall-label") continue;
    if (!t->text().startsWith(first)) continue;
    labelled = true;
    const QFontMetrics metrics(t->font());
    const double x = view.plot()->xAxis->coordToPixel(t->position->key());
    EXPECT_GE(x - metrics.horizontalAdvance(t->text()) / 2.0,
              view.plot()->axisRect()->rect().left() - 1);
  }
  EXPECT_TRUE(labelled);
}

TEST(StreamsView, DrawsOneMarkerPerStallAndOneBarPerSwapCopy) {
  auto s = testing::resnet56();
  const perf::PlanResult& p = s->plan(request(Policy::SwapAll, 256 * kMiB, 32));
  ASSERT_TRUE(p.trainable);
  const store::PlanFile file = perf::toPlanFile(p, s->request, s->model, s->net, "cpu", "x");
  StreamsView view;
  view.resize(1400, 420);
  view.setData(makeStreamsData(s->net, p, &s->model, &s->planner.costs()));
  view.plot()->replot();  // the counts are of what a replot drew
  EXPECT_EQ(view.stallMarkerCount(), static_cast<int>(file.predictions.stalls.size()));
  EXPECT_EQ(view.transferBarCount(), gmapSwapCopies(p.gmap));
  if (!testing::pngDir().empty()) {
    view.plot()->savePng(QString::fromStdString(testing::pngDir() + "/streams-resnet56.png"), 1400,
                         420);
  }

  // A plan with fewer swaps draws fewer transfers.
  const perf::PlanResult& vdnn = s->plan(request(Policy::VdnnConv, 256 * kMiB, 32));
  ASSERT_TRUE(vdnn.trainable);
  const store::PlanFile vf = perf::toPlanFile(vdnn, s->request, s->model, s->net, "cpu", "x");
  view.setData(makeStreamsData(s->net, vdnn, &s->model, &s->planner.costs()));
  view.plot()->replot();
  EXPECT_EQ(view.transferBarCount(), gmapSwapCopies(vdnn.gmap));
  EXPECT_LT(view.transferBarCount(), gmapSwapCopies(p.gmap));
  EXPECT_EQ(view.stallMarkerCount(), static_cast<int>(vf.predictions.stalls.size()));
}

TEST(StreamsView, KeepsTheZoomWhileTheNetworkStays) {
  auto s = testing::fmnist();
  StreamsView view;
  view.resize(900, 300);
  const perf::PlanResult a = s->plan(request(Policy::SwapAll, 32 * kMiB, 16));
  view.setData(makeStreamsData(s->net, a));
  // Fitted to the iteration.
  EXPECT_NEAR(view.plot()->xAxis->range().upper, a.best.sim.t_iter * 1e3 * 1.01, 1e-9);
  view.plot()->xAxis->setRange(0.1, 0.2);  // the user zooms in
  const perf::PlanResult b = s->plan(request(Policy::SwapAll, 32 * kMiB, 64));
  ASSERT_NE(a.best.sim.t_iter, b.best.sim.t_iter);
  view.setData(makeStreamsData(s->net, b));
  EXPECT_DOUBLE_EQ(view.plot()->xAxis->range().lower, 0.1);
  EXPECT_DOUBLE_EQ(view.plot()->xAxis->range().upper, 0.2);
  // Another network fits again.
  auto r = testing::resnet56();
  const perf::PlanResult c = r->plan(request(Policy::SwapAll, 256 * kMiB, 16));
  view.setData(makeStreamsData(r->net, c));
  EXPECT_NEAR(view.plot()->xAxis->range().upper, c.best.sim.t_iter * 1e3 * 1.01, 1e-9);
}

TEST(StreamsView, TooltipAndSelectionNameTheLayer) {
  auto s = testing::fmnist();
  const perf::PlanResult& p = s->plan(request(Policy::SwapAll, 32 * kMiB, 16));
  StreamsView view;
  view.setData(makeStreamsData(s->net, p));
  const perf::StepTiming& t = p.best.sim.steps[2];
  const QString tip = view.toolTipAt((t.start + t.finish) / 2 * 1e3, 2.0);
  const std::string layer = s->net.layer(p.gmap.step_layer[2]).name;
  EXPECT_TRUE(tip.contains(QString::fromStdString(layer))) << tip.toStdString();
  EXPECT_TRUE(tip.contains(QStringLiteral("step 2"))) << tip.toStdString();
  EXPECT_TRUE(tip.contains(QStringLiteral("stall before it"))) << tip.toStdString();
  EXPECT_TRUE(view.toolTipAt((t.start + t.finish) / 2 * 1e3, 1.5).isEmpty());  // between lanes
  // selectLayer does not echo layerSelected (the window links the views both ways).
  int emitted = 0;
  QObject::connect(&view, &StreamsView::layerSelected, [&](int) { ++emitted; });
  view.selectLayer(p.gmap.step_layer[2]);
  EXPECT_EQ(emitted, 0);
}

TEST(StreamsView, StatesAnUntrainableBudget) {
  auto s = testing::fmnist();
  StreamsView view;
  view.setData(makeStreamsData(s->net, s->plan(request(Policy::AccUdnn, 1024))));
  view.plot()->replot();
  EXPECT_EQ(view.stallMarkerCount(), 0);
  EXPECT_EQ(view.transferBarCount(), 0);
  // At a narrow width too, the reason is broken into lines that each fit the chart.
  for (const int width : {1200, 420}) {
    view.plot()->setViewport(QRect(0, 0, width, 400));  // as a resize of the shown view
    view.plot()->replot();
    EXPECT_TRUE(testing::statesWithin(view.plot(), QStringLiteral("untrainable"),
                                      view.plot()->axisRect()->width()))
        << width;
  }
}

/// The recorded iteration at k whose t_iter is the median (the lower middle one).
const store::IterationRow& medianIteration(const store::RunData& run, std::int64_t k) {
  std::vector<const store::IterationRow*> its;
  for (const store::IterationRow& it : run.iterations)
    if (it.k == k) its.push_back(&it);
  std::sort(its.begin(), its.end(),
            [](const auto* a, const auto* b) { return a->duration_ns < b->duration_ns; });
  return *its.at((its.size() - 1) / 2);
}

TEST(StreamsData, TheMeasuredIterationIsTheRunsRowsOfTheMedianIteration) {
  // The sample profile ran swap-all: its iterations at k = 32 against swap-all's plan at 32.
  auto s = testing::resnet56();
  const std::int64_t k = 32;
  StreamsData d = makeStreamsData(s->net, s->plan(request(Policy::SwapAll, 256 * kMiB, k)),
                                  &s->model, &s->planner.costs());
  ASSERT_TRUE(d.trainable);
  const std::size_t simulated = d.bars.size();
  ASSERT_TRUE(addMeasuredStreams(d, s->run, k));
  EXPECT_EQ(d.bars.size(), simulated);  // the simulated iteration is left as it was
  const store::IterationRow& it = medianIteration(s->run, k);
  EXPECT_EQ(d.measured_iteration, it.iteration);
  EXPECT_DOUBLE_EQ(d.measured_t_iter, static_cast<double>(it.duration_ns) * 1e-9);
  EXPECT_DOUBLE_EQ(d.measured_stall, static_cast<double>(it.stall_ns) * 1e-9);
  std::size_t samples = 0, transfers = 0, stalled = 0, offloads = 0;
  for (const store::SampleRow& r : s->run.samples) {
    if (r.k != k || r.iteration != it.iteration) continue;
    ++samples;
    stalled += r.direction != store::Direction::Update &&
               static_cast<double>(r.stall_ns) > 0.01 * static_cast<double>(it.duration_ns);
  }
  for (const store::TransferRow& r : s->run.transfers) {
    if (r.k != k || r.iteration != it.iteration) continue;
    ++transfers;
    offloads += r.kind == store::TransferKind::Offload;
  }
  ASSERT_GT(samples, 0u);
  ASSERT_GT(offloads, 0u);
  EXPECT_EQ(d.measured_bars.size(), samples + transfers);
  EXPECT_EQ(d.measured_stalls.size(), stalled);
  std::size_t measuredOffloads = 0;
  for (const StreamBar& b : d.measured_bars) {
    EXPECT_GE(b.start, 0.0) << b.label;  // from the iteration's start
    EXPECT_LE(b.start, b.finish) << b.label;
    measuredOffloads += b.kind == StreamBarKind::Offload && b.lane == StreamLane::SwapOut;
  }
  EXPECT_EQ(measuredOffloads, offloads);
  for (const StallMarker& m : d.measured_stalls) {
    const StreamBar* b = d.measuredBarAt(StreamLane::Compute, m.end);
    ASSERT_NE(b, nullptr);
    EXPECT_DOUBLE_EQ(m.end - m.start, b->stall);
  }
  // Another network's run is refused: its steps are not the plan's.
  auto f = testing::fmnist();
  StreamsData other = makeStreamsData(f->net, f->plan(request(Policy::SwapAll, 256 * kMiB, 8)));
  EXPECT_FALSE(addMeasuredStreams(other, s->run, 8));
  EXPECT_FALSE(other.hasMeasured());
  EXPECT_FALSE(addMeasuredStreams(d, s->run, 7));  // no iteration at k = 7
}

TEST(StreamsView, DrawsTheMeasuredRowBesideEveryPlanUntilRemoved) {
  auto s = testing::resnet56();
  const std::int64_t k = 32;
  const perf::PlanResult p = s->plan(request(Policy::SwapAll, 256 * kMiB, k));
  StreamsData measured = makeStreamsData(s->net, p);
  ASSERT_TRUE(addMeasuredStreams(measured, s->run, k));
  StreamsView view;
  view.resize(1200, 500);
  view.setData(makeStreamsData(s->net, p));
  auto overlay = std::make_shared<MeasuredOverlay>();
  overlay->streams = measured;
  view.setOverlay(overlay);
  view.plot()->replot();
  EXPECT_EQ(view.measuredBarCount(), static_cast<int>(measured.measured_bars.size()));
  EXPECT_EQ(view.measuredStallCount(), static_cast<int>(measured.measured_stalls.size()));
  // A new plan keeps the measurement; removing it draws none.
  view.setData(makeStreamsData(s->net, p));
  view.plot()->replot();
  EXPECT_EQ(view.measuredBarCount(), static_cast<int>(measured.measured_bars.size()));
  const StreamBar& first = measured.measured_bars.front();
  const QString tip = view.toolTipAt((first.start + first.finish) / 2 * 1e3, 2 - 0.3);
  EXPECT_TRUE(tip.contains(QStringLiteral("measured"))) << tip.toStdString();
  if (!testing::pngDir().empty())
    view.plot()->savePng(QString::fromStdString(testing::pngDir() + "/streams-measured.png"), 1400,
                         520);
  view.setOverlay(nullptr);
  view.plot()->replot();
  EXPECT_EQ(view.measuredBarCount(), 0);
  EXPECT_EQ(view.measuredStallCount(), 0);
}

}  // namespace
}  // namespace swapscope
