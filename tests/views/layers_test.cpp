// SPDX-License-Identifier: MIT
/// The layers table against a real accudnn plan of the resnet56 sample: one row per layer with
/// the analyzer's bytes and FLOPs, the simulator's step times, the plan file's swap set and
/// stalls; sorting by value; the filter; selection both ways.
#include <QAbstractItemModelTester>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <algorithm>

#include <gtest/gtest.h>

#include "graph/zoo.h"
#include "tests/views/sample_plan.h"
#include "views/layers_data.h"
#include "views/layers_view.h"

namespace swapscope {
namespace {

using testing::request;

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

/// accudnn at a budget between swap-all's and keep-all's peak at k = 128: some FMs swapped, some
/// pinned.
struct Fixture {
  std::unique_ptr<testing::SamplePlan> s = testing::resnet56();
  perf::PlanResult p;
  store::PlanFile file;
  LayersData d;
  Fixture() {
    const auto kept = s->planner.evaluate(
        128, SwapSet(static_cast<std::size_t>(s->net.size()), false), INT64_MAX);
    const auto all = s->planner.evaluate(
        128, makeSwapSet(Policy::SwapAll, s->net, s->planner.costs()), INT64_MAX);
    const std::int64_t budget = (kept->peak + all->peak) / 2;
    p = s->plan(request(Policy::AccUdnn, budget, 128));
    file = perf::toPlanFile(p, s->request, s->model, s->net, "cpu", "x");
    d = makeLayersData(s->net, s->planner.costs(), s->model, s->request, p);
  }
};

TEST(LayersData, RowsAreTheAnalyzerSimulatorAndPlanFile) {
  Fixture f;
  ASSERT_TRUE(f.p.trainable) << f.p.reason;
  const LayersData& d = f.d;
  const auto& costs = f.s->planner.costs();
  ASSERT_EQ(d.rows.size(), static_cast<std::size_t>(f.s->net.size()));
  EXPECT_EQ(d.k, 128);
  int swapped = 0, pinned = 0;
  for (const LayerRowData& r : d.rows) {
    const auto i = static_cast<std::size_t>(r.layer);
    EXPECT_EQ(r.name, f.s->net.layer(r.layer).name);
    EXPECT_EQ(r.fm_bytes, costs[i].fm.per_sample * 128 + costs[i].fm.fixed);
    EXPECT_EQ(r.fwd_flops, costs[i].fwd_flops * 128);
    if (r.layer == f.s->net.inputLayer()) {
      EXPECT_EQ(r.fwd_step, 0);
      EXPECT_EQ(r.bwd_step, 0);
    } else {
      ASSERT_GT(r.fwd_step, 0);
      ASSERT_GT(r.bwd_step, r.fwd_step);
      // The predicted time is the model's for the step; the simulated step takes at least that
      // (the simulator adds copy contention, never removes time); the stall is the wait before.
      const perf::StepTiming& fw = f.p.best.sim.steps[static_cast<std::size_t>(r.fwd_step)];
      const perf::StepTiming& bw = f.p.best.sim.steps[static_cast<std::size_t>(r.bwd_step)];
      EXPECT_GT(r.fwd.seconds, 0);
      EXPECT_GT(r.bwd.seconds, 0);
      EXPECT_LE(r.fwd.seconds, fw.finish - fw.start + 1e-12);
      EXPECT_LE(r.bwd.seconds, bw.finish - bw.start + 1e-12);
      EXPECT_FALSE(r.fwd.transferred);  // the profiled network: its own curves
    }
    swapped += r.state == FmState::Swapped;
    pinned += r.state == FmState::Pinned;
    if (r.state == FmState::Pinned) {
      EXPECT_TRUE(r.swappable);
    }
  }
  // The plan file's swap set, with its steps.
  ASSERT_GT(f.file.swap_set.size(), 0u);
  EXPECT_EQ(swapped, static_cast<int>(f.file.swap_set.size()));
  EXPECT_GT(pinned, 0);
  for (const store::PlanSwap& sw : f.file.swap_set) {
    const LayerRowData* row = nullptr;
    for (const LayerRowData& r : d.rows) {
      if (r.name == sw.fm) row = &r;
    }
    ASSERT_NE(row, nullptr) << sw.fm;
    EXPECT_EQ(row->state, FmState::Swapped);
    EXPECT_EQ(row->release_step, sw.release_step);
    EXPECT_EQ(row->prefetch_step, sw.prefetch_step);
  }
  // Each plan-file stall is on its layer's row, and no other row shows one.
  ASSERT_GT(f.file.predictions.stalls.size(), 0u);
  for (const store::PlanStall& st : f.file.predictions.stalls) {
    for (const LayerRowData& r : d.rows) {
      if (r.name != st.layer) continue;
      EXPECT_EQ(st.direction == "bwd" ? r.bwd_stall : r.fwd_stall, st.seconds) << st.layer;
    }
  }
  std::size_t shown = 0;
  for (const LayerRowData& r : d.rows)
    shown += (r.fwd_stall > 0) + (r.bwd_stall > 0);
  EXPECT_EQ(shown, f.file.predictions.stalls.size());
}

TEST(LayersData, KeepAllKeepsAndATransferredNetworkIsFlagged) {
  auto s = testing::fmnist();
  const perf::PlanResult p = s->plan(request(Policy::KeepAll, 64 * kMiB, 8));
  ASSERT_TRUE(p.trainable);
  const LayersData d = makeLayersData(s->net, s->planner.costs(), s->model, s->request, p);
  for (const LayerRowData& r : d.rows) {
    EXPECT_EQ(r.state, FmState::Kept) << r.name;
    EXPECT_EQ(r.release_step, 0);
  }
  // resnet20 planned with the resnet56 model: every time comes from a per-type curve.
  auto r = testing::resnet56();
  const Network other = buildZooModel("resnet20");
  const perf::Planner planner(r->model, other);
  perf::PlanRequest req = request(Policy::SwapAll, 256 * kMiB, 32);
  const perf::PlanResult op = planner.plan(req);
  ASSERT_TRUE(op.trainable);
  const LayersData od = makeLayersData(other, planner.costs(), r->model, req, op);
  for (const LayerRowData& row : od.rows) {
    if (row.fwd_step > 0 && !row.fwd.missing) {
      EXPECT_TRUE(row.fwd.transferred) << row.name;
    }
  }
}

/// recompute-light: the recomputed FMs' rows say so, with the release and re-make steps of the
/// plan file's recompute list; the swapped ones keep their prefetch steps.
TEST(LayersData, RecomputedFmsAreThePlanFilesRecomputeList) {
  auto s = testing::resnet56();
  const perf::PlanResult p = s->plan(request(Policy::RecomputeLight, 64 * kMiB, 16));
  ASSERT_TRUE(p.trainable) << p.reason;
  const store::PlanFile file = perf::toPlanFile(p, s->request, s->model, s->net, "cpu", "x");
  ASSERT_FALSE(file.recompute.empty());
  const LayersData d = makeLayersData(s->net, s->planner.costs(), s->model, s->request, p);
  int recomputed = 0;
  for (const LayerRowData& r : d.rows) {
    recomputed += r.state == FmState::Recomputed;
    if (r.state != FmState::Recomputed) {
      EXPECT_EQ(r.remake_step, 0) << r.name;
    }
  }
  EXPECT_EQ(recomputed, static_cast<int>(file.recompute.size()));
  for (const store::PlanRecompute& fm : file.recompute) {
    const auto row = std::find_if(d.rows.begin(), d.rows.end(),
                                  [&](const LayerRowData& r) { return r.name == fm.fm; });
    ASSERT_NE(row, d.rows.end()) << fm.fm;
    EXPECT_EQ(row->state, FmState::Recomputed);
    EXPECT_STREQ(fmStateName(row->state), "recomputed");
    EXPECT_EQ(row->release_step, fm.release_step);
    EXPECT_EQ(row->remake_step, fm.recompute_step);
    EXPECT_EQ(row->prefetch_step, 0);
  }
  for (const store::PlanSwap& fm : file.swap_set) {
    const auto row = std::find_if(d.rows.begin(), d.rows.end(),
                                  [&](const LayerRowData& r) { return r.name == fm.fm; });
    ASSERT_NE(row, d.rows.end()) << fm.fm;
    EXPECT_EQ(row->state, FmState::Swapped);
    EXPECT_EQ(row->prefetch_step, fm.prefetch_step);
  }
}

TEST(LayersView, SortsByValueFiltersAndSelects) {
  Fixture f;
  LayersView view;
  QAbstractItemModelTester tester(view.model(),
                                  QAbstractItemModelTester::FailureReportingMode::Fatal);
  view.resize(1200, 500);
  view.setData(f.d);
  ASSERT_EQ(view.proxy()->rowCount(), f.s->net.size());
  if (!testing::pngDir().empty())
    view.grab().save(QString::fromStdString(testing::pngDir() + "/layers-resnet56.png"));

  // Sorted by FM bytes, descending: by value, not by the text ("9.00 MiB" < "18.0 MiB").
  view.table()->sortByColumn(LayersTableModel::FmBytes, Qt::DescendingOrder);
  std::int64_t previous = INT64_MAX;
  for (int row = 0; row < view.proxy()->rowCount(); ++row) {
    const auto layer = view.proxy()->index(row, 0).data(LayersTableModel::LayerRole).toInt();
    const std::int64_t bytes = f.d.rows[static_cast<std::size_t>(layer)].fm_bytes;
    EXPECT_LE(bytes, previous);
    previous = bytes;
  }

  // The filter: "swapped" leaves the swapped rows.
  view.filter()->setText(QStringLiteral("swapped"));
  EXPECT_EQ(view.proxy()->rowCount(), static_cast<int>(f.file.swap_set.size()));
  view.filter()->clear();

  // A re-plan of the same network updates in place: sort and selection stay.
  QSignalSpy selected(&view, &LayersView::layerSelected);
  view.selectLayer(5);
  EXPECT_EQ(selected.count(), 0);  // no echo
  const QModelIndex cur = view.table()->currentIndex();
  EXPECT_EQ(cur.data(LayersTableModel::LayerRole).toInt(), 5);
  const perf::PlanResult again = f.s->plan(request(Policy::SwapAll, 256 * kMiB, 64));
  view.setData(makeLayersData(f.s->net, f.s->planner.costs(), f.s->model, f.s->request, again));
  EXPECT_EQ(view.table()->currentIndex().data(LayersTableModel::LayerRole).toInt(), 5);
  EXPECT_EQ(view.proxy()->sortColumn(), LayersTableModel::FmBytes);
  // The user picks a row: the view says which layer.
  const QModelIndex other = view.proxy()->index(0, 1);
  view.table()->selectionModel()->setCurrentIndex(
      other, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  ASSERT_EQ(selected.count(), 1);
  EXPECT_EQ(selected.takeFirst().at(0).toInt(), other.data(LayersTableModel::LayerRole).toInt());
}

}  // namespace
}  // namespace swapscope
