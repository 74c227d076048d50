// SPDX-License-Identifier: MIT
/// The summary's numbers are the planner's, and its warnings say what the numbers rest on.
#include <gtest/gtest.h>

#include <cmath>

#include "common/bytes.h"
#include "common/format.h"
#include "graph/network_json.h"
#include "graph/zoo.h"
#include "perfmodel/planner.h"
#include "perfmodel/stability.h"
#include "sample_runs.h"
#include "store/run_db.h"
#include "views/summary_data.h"

namespace swapscope {
namespace {

struct Sample {
  std::string db = swapscope::testing::resnet56Run();
  store::RunData run;
  Network net;
  perf::PerfModel model;
  Sample()
      : run(store::RunReader(db).load()),
        net(networkFromText(run.network.json, db)),
        model(perf::PerfModel::fit(run)) {}
};

const Sample& sample() {
  static const Sample s;
  return s;
}

SummaryContext contextFor(const std::string& network, bool transferred) {
  SummaryContext c;
  c.network = network;
  c.policy = "accudnn";
  c.mode = "argmin";
  c.profile_device = sample().model.device();
  c.backend = "cpu";
  c.source_db = sample().db;
  c.network_transferred = transferred;
  return c;
}

bool hasWarning(const SummaryData& d, const std::string& start) {
  for (const std::string& w : d.warnings)
    if (w.rfind(start, 0) == 0) return true;
  return false;
}

TEST(SummaryData, AProfileFromABusyMachineIsWarnedAbout) {
  perf::PlanRequest req;
  req.budget = std::int64_t{128} << 20;
  const perf::PlanResult r = perf::plan(sample().model, sample().net, req);
  SummaryContext c = contextFor("resnet56", false);
  EXPECT_FALSE(hasWarning(makeSummaryData(r, req, c), "busy profile"));
  c.profile_warning = "the machine was busy while it was profiled";
  EXPECT_TRUE(hasWarning(makeSummaryData(r, req, c),
                         "busy profile: the machine was busy while it was profiled"));
}

TEST(SummaryData, AProfileThatDidNotFinishIsWarnedAbout) {
  perf::PlanRequest req;
  req.budget = std::int64_t{128} << 20;
  const perf::PlanResult r = perf::plan(sample().model, sample().net, req);
  SummaryContext c = contextFor("resnet56", false);
  EXPECT_FALSE(hasWarning(makeSummaryData(r, req, c), "unfinished profile"));
  store::RunMeta m;
  m.status = store::RunStatus::Incomplete;
  c.unfinished_warning = perf::unfinishedProfileWarning(m);
  EXPECT_TRUE(hasWarning(makeSummaryData(r, req, c),
                         "unfinished profile: the profile is incomplete: the model is fitted"));
}

TEST(SummaryData, ARunDatabaseIsNamedAsNoProfileInTheClisWords) {
  perf::PlanRequest req;
  req.budget = std::int64_t{128} << 20;
  const perf::PlanResult r = perf::plan(sample().model, sample().net, req);
  SummaryContext c = contextFor("resnet56", false);
  EXPECT_TRUE(hasWarning(makeSummaryData(r, req, c), "profiled on "));
  // A plan's run at one k: `swapscope plan` writes "DB: <perf::notAProfileWarning>".
  store::RunData run;
  run.meta.kind = "run";
  run.batches.resize(1);
  run.batches[0].k = 27;
  c.not_profile_warning = perf::notAProfileWarning(run);
  ASSERT_FALSE(c.not_profile_warning.empty());
  const SummaryData d = makeSummaryData(r, req, c);
  EXPECT_TRUE(hasWarning(d, sample().db + ": it is a 'run' database, not a profile: the model is "
                                          "fitted to the one minibatch it ran (k = 27)"));
  EXPECT_FALSE(hasWarning(d, "profiled on "));
  EXPECT_TRUE(hasWarning(d, "recorded on " + sample().model.device()));
}

TEST(SummaryData, NumbersAreThePlannersAndTheDeviceIsNamed) {
  perf::PlanRequest req;
  req.budget = std::int64_t{128} << 20;
  req.dataset_size = 50000;
  req.epochs = 2;
  const perf::PlanResult r = perf::plan(sample().model, sample().net, req);
  ASSERT_TRUE(r.trainable);
  const SummaryData d = makeSummaryData(r, req, contextFor("resnet56", false));
  EXPECT_TRUE(d.trainable);
  EXPECT_EQ(d.k, r.best.k);
  EXPECT_EQ(d.t_iter_s, r.best.sim.t_iter);
  EXPECT_EQ(d.peak_bytes, r.best.peak);
  // The compute stream's idle time, hand-offs included: what `plan` prints and a run measures.
  EXPECT_EQ(d.stall_s, r.best.sim.stall + r.best.sim.dispatch);
  EXPECT_GT(r.best.sim.dispatch, 0);
  EXPECT_EQ(d.bytes_moved, r.best.offload_bytes + r.best.prefetch_bytes);
  EXPECT_EQ(d.lr, perf::scaledLearningRate(req.lr_base, req.k_base, req.lr_c, r.best.k));
  // ceil(E m / k) iterations of t_iter (one GPU: no all-reduce).
  const double iterations = std::ceil(2.0 * 50000 / static_cast<double>(r.best.k));
  EXPECT_NEAR(d.t_whole_s, iterations * r.best.sim.t_iter, 1e-9 * d.t_whole_s);
  EXPECT_FALSE(hasWarning(d, "transferred"));
  EXPECT_FALSE(hasWarning(d, "untrainable"));
  EXPECT_TRUE(hasWarning(d, "profiled on " + sample().model.device()));
  // What the view shows: the rows' text, from the planner's figures.
  auto row = [&](const std::string& label) {
    for (const SummaryRow& x : d.rows)
      if (x.label == label) return x.value;
    return std::string("(no row '" + label + "')");
  };
  EXPECT_EQ(row("k"), std::to_string(r.best.k) + " (k_max " + std::to_string(r.k_max) + ")");
  EXPECT_EQ(
      row("peak").rfind(formatBytes(r.best.peak) + " of " + formatBytes(req.budget) + " (", 0), 0u)
      << row("peak");
  EXPECT_EQ(row("throughput"), formatFixed(r.best.sim.throughput, 1) + " samples/s");
  EXPECT_NE(row("whole training").find("2 epochs of " + formatGrouped(50000) + " samples"),
            std::string::npos)
      << row("whole training");
}

TEST(SummaryData, WarnsOfTransferredAndUntrainable) {
  const Network other = buildZooModel("resnet20");
  perf::PlanRequest req;
  req.budget = std::int64_t{128} << 20;
  const perf::PlanResult r = perf::plan(sample().model, other, req);
  ASSERT_TRUE(r.trainable);
  EXPECT_TRUE(hasWarning(makeSummaryData(r, req, contextFor("resnet20", true)), "transferred"));

  req.budget = 1 << 20;
  const perf::PlanResult none = perf::plan(sample().model, sample().net, req);
  ASSERT_FALSE(none.trainable);
  const SummaryData d = makeSummaryData(none, req, contextFor("resnet56", false));
  EXPECT_FALSE(d.trainable);
  // The planner's reason says "untrainable" itself, and the warning says it once.
  ASSERT_EQ(none.reason.rfind("untrainable: ", 0), 0u) << none.reason;
  ASSERT_TRUE(hasWarning(d, none.reason));
  EXPECT_FALSE(hasWarning(d, "untrainable: untrainable"));
}

TEST(SummaryData, ABudgetAboveTheProfiledDevicesMemoryIsWarnedOf) {
  perf::PlanRequest req;
  req.budget = std::int64_t{128} << 20;
  const perf::PlanResult r = perf::plan(sample().model, sample().net, req);
  ASSERT_TRUE(r.trainable);
  SummaryContext c = contextFor("resnet56", false);
  c.device_memory = std::int64_t{64} << 20;
  EXPECT_TRUE(hasWarning(makeSummaryData(r, req, c),
                         "the budget is above the 64.0 MiB the profiled device has"));
  c.device_memory = std::int64_t{256} << 20;
  EXPECT_FALSE(hasWarning(makeSummaryData(r, req, c), "the budget is above"));
}

TEST(SummaryData, TheMeasurementIsNamedWithItsErrorsAndAnotherDevice) {
  store::RunData run;
  run.path = "run.swapdb";
  run.meta.status = store::RunStatus::Complete;
  run.iterations = {{8, 0}, {8, 1}, {4, 0}};
  perf::RunSide::Check c;
  c.k = 8;
  c.t_iter_predicted = 0.011;
  c.t_iter_measured = 0.010;
  c.stall_predicted = 0.001;
  c.stall_measured = 0.004;
  c.peak_predicted = 1000;
  c.peak_measured = 1000;
  SummaryData d;
  addMeasuredSummary(d, c, run);
  ASSERT_TRUE(d.measured.has_value());
  EXPECT_EQ(d.measured->iterations, 2);
  EXPECT_NEAR(d.measured->t_iter_error_pct, 10.0, 1e-9);
  EXPECT_NEAR(d.measured->stall_error_pct, -75.0, 1e-9);
  EXPECT_EQ(d.measured->peak_error_pct, 0.0);
  bool tIter = false, stall = false, peak = false;
  for (const SummaryRow& r : d.rows) {
    tIter = tIter || (r.label == "t_iter measured" && r.value.find("+10.0 %") != std::string::npos);
    stall = stall ||
            (r.label == "total stall measured" && r.value.find("-75.0 %") != std::string::npos);
    peak = peak || (r.label == "peak measured" && r.value.find("+0.0 %") != std::string::npos);
  }
  EXPECT_TRUE(tIter && stall && peak);
  EXPECT_TRUE(d.warnings.empty());
  // Another device: said as `swapscope run` says it.
  c.device_mismatch = "the plan's model was fitted on A (cuda), but this run is on B (cpu)";
  SummaryData other;
  addMeasuredSummary(other, c, run);
  ASSERT_EQ(other.warnings.size(), 1u);
  EXPECT_EQ(other.warnings[0], "device: " + c.device_mismatch);
  // A measurement of zero has no relative error.
  c.stall_measured = 0;
  SummaryData zero;
  addMeasuredSummary(zero, c, run);
  EXPECT_TRUE(std::isnan(zero.measured->stall_error_pct));
}

}  // namespace
}  // namespace swapscope
