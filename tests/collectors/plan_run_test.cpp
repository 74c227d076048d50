// SPDX-License-Identifier: MIT
// A plan's run (runPlan) on the CPU backend, and the status rules it shares with the profile:
// complete; incomplete when cancelled, after the current iteration; failed, with the error's
// message, when an error ends it. Also the progress both report.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "analysis/gmap.h"
#include "analysis/network_analysis.h"
#include "collectors/profiler.h"
#include "store/run_db.h"
#include "store/tiny_network.h"

namespace swapscope::collect {
namespace {

namespace fs = std::filesystem;

/// A swap-all plan of `net` at k on `device`, as `swapscope plan --policy swap-all` writes it.
store::PlanFile swapAllPlan(const Network& net, const rt::Device& device, std::int64_t k,
                            std::int64_t budget) {
  const auto costs = computeLayerCosts(net);
  const Gmap g = buildGmap(net, costs, makeSwapSet(Policy::SwapAll, net, costs));
  store::PlanFile p;
  p.network_name = net.name();
  p.structure_hash = net.structureHash();
  p.device_name = device.deviceName();
  p.backend = device.backendName();
  p.policy = "swap-all";
  p.mode = "fixed";
  p.budget = budget;
  p.k = k;
  const std::vector<SwapSteps> steps = swapSteps(g);
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    if (steps[b].prefetch > 0)
      p.swap_set.push_back({g.buffers[b].name, steps[b].release, steps[b].prefetch});
  }
  p.predictions.t_iter_s = 0.001;
  p.predictions.throughput = static_cast<double>(k) / p.predictions.t_iter_s;
  p.predictions.peak_bytes = computeMemoryCurve(g).peak(k);
  return p;
}

class PlanRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_path = (fs::temp_directory_path() /
              ("swapscope-planrun-" + std::to_string(getpid()) + "-" + info->name() + ".swapdb"))
                 .string();
    fs::remove(m_path);
    m_plan = swapAllPlan(m_net, *m_device, 4, 4 << 20);
    const auto costs = computeLayerCosts(m_net);
    m_swapped = makeSwapSet(Policy::SwapAll, m_net, costs);
  }
  void TearDown() override {
    for (const char* suffix : {"", "-wal", "-shm"})
      fs::remove(m_path + suffix);
  }
  store::RunMeta meta() const { return runMeta(*m_device, "run", m_plan.budget, m_plan.policy); }
  /// runPlan into the database, asking to cancel from the `cancelAt`-th progress report on;
  /// `calls` counts the reports.
  PlanRunResult runCancellingAt(const PlanRunConfig& cfg, int cancelAt, int& calls) {
    PlanRun run(*m_device, m_net, m_plan, "swap-all.json", m_swapped, cfg);
    std::atomic<bool> cancel{false};
    calls = 0;
    store::RunWriter db(m_path, meta());
    return runPlan(
        run, &db, [&](const RunProgress&) { cancel.store(++calls == cancelAt); }, &cancel);
  }

  const Network m_net = testing::tinyNetwork();
  std::unique_ptr<rt::Device> m_device = rt::openDevice("cpu");
  store::PlanFile m_plan;
  SwapSet m_swapped;
  std::string m_path;
};

// The collector modes are `run --collector`'s choices (less "auto", which the CLI resolves by
// device), each name naming its mode and no other name any.
TEST(CollectorMode, EachModeIsNamedByItsCollectorChoice) {
  const std::pair<CollectorMode, std::string_view> modes[] = {
      {CollectorMode::Off, "off"},
      {CollectorMode::Events, "events"},
      {CollectorMode::Cupti, "cupti"},
      {CollectorMode::CuptiAllApi, "cupti-all-api"}};
  for (const auto& [mode, name] : modes) {
    EXPECT_EQ(collectorModeName(mode), name);
    EXPECT_EQ(collectorModeFromName(name), mode) << name;
  }
  EXPECT_FALSE(collectorModeFromName("auto").has_value());
  EXPECT_FALSE(collectorModeFromName("CUPTI").has_value());
  EXPECT_FALSE(collectorModeFromName("nvprof").has_value());
}

TEST_F(PlanRunTest, TrainsAtThePlansLearningRate) {
  // At a rate of 0 SGD moves no weight, whatever the gradients; at the plan's own it moves them
  // (the run trained at the engine's default rate, whatever the plan said).
  PlanRunConfig cfg;
  cfg.warmup = 0;
  cfg.iterations = 2;
  for (const double lr : {0.0, 0.05}) {
    m_plan.learning_rate = lr;
    PlanRun run(*m_device, m_net, m_plan, "swap-all.json", m_swapped, cfg);
    const auto before = run.executor().readWeights();
    runPlan(run, nullptr, {}, nullptr);
    const auto after = run.executor().readWeights();
    if (lr == 0) {
      EXPECT_EQ(after, before);
    } else {
      EXPECT_NE(after, before);
    }
  }
}

TEST_F(PlanRunTest, RecordsThePlanEveryMeasuredIterationAndTheBatch) {
  PlanRunConfig cfg;
  cfg.warmup = 1;
  cfg.iterations = 3;
  PlanRun run(*m_device, m_net, m_plan, "swap-all.json", m_swapped, cfg);
  std::vector<RunProgress> reports;
  PlanRunResult result;
  {
    store::RunWriter db(m_path, meta());
    result = runPlan(run, &db, [&](const RunProgress& p) { reports.push_back(p); });
  }
  EXPECT_EQ(result.status, store::RunStatus::Complete);
  EXPECT_FALSE(result.cancelled);
  ASSERT_EQ(result.t_iter.size(), 3u);
  EXPECT_EQ(result.steps.size(), 3u);
  // The pool's peak is the analyzer's, to the byte.
  EXPECT_EQ(result.peak, m_plan.predictions.peak_bytes);
  const store::RunData d = store::RunReader(m_path).load();
  EXPECT_EQ(d.meta.status, store::RunStatus::Complete);
  EXPECT_EQ(d.meta.status_message, "");
  ASSERT_EQ(d.plans.size(), 1u);
  EXPECT_EQ(d.plans[0].k, 4);
  EXPECT_EQ(d.plans[0].json, store::planToJson(m_plan).dump());
  ASSERT_EQ(d.iterations.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(d.iterations[i].k, 4);
    EXPECT_EQ(d.iterations[i].iteration, static_cast<int>(i));
    EXPECT_EQ(static_cast<double>(d.iterations[i].duration_ns) * 1e-9, result.t_iter[i]);
  }
  ASSERT_EQ(d.batches.size(), 1u);
  EXPECT_EQ(d.batches[0].measured_peak, result.peak);
  EXPECT_EQ(d.batches[0].warmup, 1);
  // One report per iteration, warm-up first; the last one has nothing left to run.
  ASSERT_EQ(reports.size(), 4u);
  for (std::size_t i = 0; i < reports.size(); ++i) {
    EXPECT_EQ(reports[i].iteration, static_cast<int>(i) + 1);
    EXPECT_EQ(reports[i].iterations, 4);
    EXPECT_EQ(reports[i].k, 4);
    EXPECT_EQ(reports[i].stage, i == 0 ? RunStage::Warmup : RunStage::Recorded);
    if (i + 1 < reports.size()) {
      EXPECT_GT(reports[i].eta_seconds, 0.0);
    }
  }
  EXPECT_EQ(reports.back().eta_seconds, 0.0);
  // A recorded iteration's report carries its rows as committed, the pool bytes included for
  // every iteration (the database keeps them for the first only); a warm-up's carries none.
  EXPECT_EQ(reports[0].rows, nullptr);
  for (std::size_t i = 1; i < reports.size(); ++i) {
    ASSERT_NE(reports[i].rows, nullptr) << "report " << i;
    const store::IterationRows& rows = *reports[i].rows;
    const int recorded = static_cast<int>(i) - 1;
    EXPECT_EQ(rows.iteration, d.iterations[static_cast<std::size_t>(recorded)]);
    std::size_t samples = 0, transfers = 0, memory = 0;
    for (const auto& s : d.samples)
      samples += s.iteration == recorded;
    for (const auto& t : d.transfers)
      transfers += t.iteration == recorded;
    for (const auto& m : d.memory)
      memory += m.iteration == recorded;
    EXPECT_EQ(rows.samples.size(), samples);
    EXPECT_EQ(rows.transfers.size(), transfers);
    EXPECT_EQ(memory, recorded == 0 ? rows.memory.size() : 0u);
    EXPECT_FALSE(rows.memory.empty());
    std::int64_t high = 0;
    for (const auto& m : rows.memory)
      high = std::max(high, m.in_use);
    EXPECT_EQ(high, result.peak);  // the pool's high water, reached in every iteration
  }
}

TEST_F(PlanRunTest, CancellingStopsAfterTheIterationAndLeavesAnIncompleteReadableDatabase) {
  PlanRunConfig cfg;
  cfg.warmup = 0;
  cfg.iterations = 10;
  cfg.collector = CollectorMode::Events;  // the collector's pass is skipped too
  int calls = 0;
  const PlanRunResult result = runCancellingAt(cfg, 3, calls);
  EXPECT_EQ(calls, 3);
  EXPECT_TRUE(result.cancelled);
  EXPECT_EQ(result.status, store::RunStatus::Incomplete);
  EXPECT_EQ(result.t_iter.size(), 3u);
  EXPECT_TRUE(result.collector_source.empty());
  store::RunReader reader(m_path);
  const store::RunData d = reader.load();
  EXPECT_EQ(d.meta.status, store::RunStatus::Incomplete);
  EXPECT_EQ(d.meta.status_message, "interrupted after 3 measured iterations");
  EXPECT_EQ(d.iterations.size(), 3u);
  EXPECT_EQ(d.batches.size(), 1u);
  EXPECT_EQ(d.meta.extra.count("collector"), 0u);
  EXPECT_FALSE(fs::exists(m_path + "-wal"));  // finished: one self-contained file
}

TEST_F(PlanRunTest, ACancelDuringTheLastIterationLeavesTheRunComplete) {
  // Nothing is left to stop: every iteration ran, so the database is complete.
  PlanRunConfig cfg;
  cfg.warmup = 0;
  cfg.iterations = 3;
  cfg.collector = CollectorMode::Off;
  int calls = 0;
  const PlanRunResult result = runCancellingAt(cfg, 3, calls);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(result.t_iter.size(), 3u);
  EXPECT_FALSE(result.cancelled);
  EXPECT_EQ(result.status, store::RunStatus::Complete);
  EXPECT_EQ(store::RunReader(m_path).load().meta.status, store::RunStatus::Complete);
}

TEST_F(PlanRunTest, AnErrorMidRunMarksTheDatabaseFailedWithItsMessage) {
  PlanRunConfig cfg;
  cfg.warmup = 0;
  cfg.iterations = 10;
  PlanRun run(*m_device, m_net, m_plan, "swap-all.json", m_swapped, cfg);
  int calls = 0;
  {
    store::RunWriter db(m_path, meta());
    try {
      runPlan(run, &db, [&](const RunProgress&) {
        if (++calls == 2) throw std::runtime_error("the device was lost (injected)");
      });
      FAIL() << "the error was not passed on";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "the device was lost (injected)");
    }
  }
  const store::RunData d = store::RunReader(m_path).load();
  EXPECT_EQ(d.meta.status, store::RunStatus::Failed);
  EXPECT_EQ(d.meta.status_message, "the device was lost (injected)");
  EXPECT_EQ(d.iterations.size(), 2u);  // both committed before the error
}

TEST_F(PlanRunTest, WithoutADatabaseItMeasuresAndReportsTheCollectorsPass) {
  PlanRunConfig cfg;
  cfg.warmup = 0;
  cfg.iterations = 2;
  cfg.collector = CollectorMode::Events;
  PlanRun run(*m_device, m_net, m_plan, "swap-all.json", m_swapped, cfg);
  std::vector<RunStage> stages;
  const PlanRunResult result =
      runPlan(run, nullptr, [&](const RunProgress& p) { stages.push_back(p.stage); });
  EXPECT_EQ(result.status, store::RunStatus::Complete);
  EXPECT_EQ(result.t_iter.size(), 2u);
  EXPECT_EQ(result.collector_t_iter.size(), 2u);
  EXPECT_FALSE(result.collector_source.empty());
  EXPECT_EQ(stages, (std::vector<RunStage>{RunStage::Recorded, RunStage::Recorded,
                                           RunStage::Collector, RunStage::Collector}));
  EXPECT_FALSE(fs::exists(m_path));
}

TEST_F(PlanRunTest, APlanWhoseStepsAreNotTheGmapsIsRefusedBeforeAnyRun) {
  store::PlanFile edited = m_plan;
  edited.swap_set[0].prefetch_step += 1;
  try {
    PlanRun run(*m_device, m_net, edited, "edited.json", m_swapped, PlanRunConfig{});
    FAIL() << "the edited plan was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("plan 'edited.json': field 'swap_set[0]'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace swapscope::collect
