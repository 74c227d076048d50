// SPDX-License-Identifier: MIT
// The profiling stage on the CPU backend: the five minibatches, every step sampled, every
// GMAP transfer recorded under swap-all, the pool timeline, and interruption.
#include "collectors/profiler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "analysis/network_analysis.h"
#include "common/batch_limit.h"
#include "perfmodel/model.h"
#include "runtime/kernel.h"
#include "runtime/wrapped_cpu_device.h"
#include "store/run_db.h"
#include "store/tiny_network.h"

namespace swapscope::collect {
namespace {

namespace fs = std::filesystem;

TEST(ProfileBatches, ThePapersFractionsRoundedWithoutDuplicates) {
  // 94/8 = 11.75, 94/4 = 23.5 (rounds away from zero), 47, 62.67, 94
  EXPECT_EQ(profileBatches(94), (std::vector<std::int64_t>{12, 24, 47, 63, 94}));
  EXPECT_EQ(profileBatches(128), (std::vector<std::int64_t>{16, 32, 64, 85, 128}));
  // 3: 0.375 -> 1 (at least 1), 0.75 -> 1 (duplicate), 1.5 -> 2, 2 (duplicate), 3
  EXPECT_EQ(profileBatches(3), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(profileBatches(1), (std::vector<std::int64_t>{1}));
  EXPECT_TRUE(profileBatches(0).empty());
}

/// A profile of the tiny network in 4 MiB: minibatches up to `max_batch`, `warmup` + `iterations`
/// iterations each.
ProfileConfig tinyProfile(std::int64_t max_batch, int warmup, int iterations) {
  ProfileConfig cfg;
  cfg.budget = 4 << 20;
  cfg.max_batch = max_batch;
  cfg.warmup = warmup;
  cfg.iterations = iterations;
  return cfg;
}

class ProfilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_path = (fs::temp_directory_path() /
              ("swapscope-profile-" + std::to_string(getpid()) + "-" + info->name() + ".swapdb"))
                 .string();
    fs::remove(m_path);
  }
  void TearDown() override { fs::remove(m_path); }
  std::string m_path;
};

TEST_F(ProfilerTest, RecordsEveryStepAndEveryTransferAtFiveMinibatches) {
  const Network net = testing::tinyNetwork();
  const auto costs = computeLayerCosts(net);
  const MemoryPlan plan = planMemory(net, costs, makeSwapSet(Policy::SwapAll, net, costs));
  auto device = rt::openDevice("cpu");
  const ProfileConfig cfg = tinyProfile(16, 1, 2);
  ASSERT_GT(swapAllKMax(net, cfg.budget), 16);  // the cap is what limits k here
  ProfileResult result;
  {
    store::RunWriter db(m_path, runMeta(*device, "profile", cfg.budget, "swap-all"));
    result = runProfile(*device, net, cfg, db);
  }
  EXPECT_EQ(result.batches, (std::vector<std::int64_t>{2, 4, 8, 11, 16}));
  EXPECT_EQ(result.recorded_iterations, 10);
  EXPECT_EQ(result.status, store::RunStatus::Complete);

  store::RunReader reader(m_path);
  const store::RunData run = reader.load();
  EXPECT_EQ(run.meta.status, store::RunStatus::Complete);
  EXPECT_EQ(run.meta.backend, "cpu");
  EXPECT_EQ(run.meta.extra.at("k_max"), std::to_string(result.k_max));
  ASSERT_EQ(run.batches.size(), 5u);
  ASSERT_EQ(run.iterations.size(), 10u);
  const int steps = plan.gmap.steps();
  ASSERT_EQ(run.steps.size(), static_cast<std::size_t>(steps));

  // The GMAP's transfers per iteration: each offload and prefetch, by tensor.
  // The minibatch load is a GMAP prefetch at step 1 (images and labels); the rest are swaps.
  std::multiset<int> offloads, prefetches, loads;
  for (const GmapOp& op : plan.gmap.ops) {
    if (op.kind == GmapOpKind::Offload) offloads.insert(op.buffer);
    if (op.kind != GmapOpKind::Prefetch) continue;
    const GmapBuffer& buf = plan.gmap.buffers.at(static_cast<std::size_t>(op.buffer));
    const bool load =
        buf.kind == BufferKind::Labels ||
        (op.step == 1 && buf.kind == BufferKind::FeatureMap && buf.layer == net.inputLayer());
    (load ? loads : prefetches).insert(op.buffer);
  }
  ASSERT_EQ(loads.size(), 2u);
  ASSERT_FALSE(offloads.empty());

  for (const store::BatchRow& b : run.batches) {
    SCOPED_TRACE("k = " + std::to_string(b.k));
    EXPECT_EQ(b.policy, "swap-all");
    EXPECT_EQ(b.predicted_peak, plan.curve.peak(b.k));
    EXPECT_EQ(b.measured_peak, b.predicted_peak);
    for (int it = 0; it < 2; ++it) {
      // Every step exactly once, with FLOPs = the analyzer's per-sample FLOPs x k.
      std::map<int, int> seen;
      for (const store::SampleRow& s : run.samples) {
        if (s.k != b.k || s.iteration != it || s.direction == store::Direction::Update) continue;
        ++seen[s.step];
        const store::StepRow& row = run.steps.at(static_cast<std::size_t>(s.step - 1));
        EXPECT_EQ(s.flops, row.flops_per_sample * b.k);
        EXPECT_EQ(s.layer, row.layer);
        EXPECT_GE(s.time_ns, 0);
      }
      EXPECT_EQ(seen.size(), static_cast<std::size_t>(steps));
      for (const auto& [step, count] : seen)
        EXPECT_EQ(count, 1) << "step " << step;

      std::multiset<int> gotOff, gotPre, gotLoad;
      for (const store::TransferRow& t : run.transfers) {
        if (t.k != b.k || t.iteration != it) continue;
        EXPECT_LE(t.start_ns, t.end_ns);
        EXPECT_LE(t.overlap_ns, t.end_ns - t.start_ns);
        const GmapBuffer& buf = plan.gmap.buffers.at(static_cast<std::size_t>(t.tensor));
        if (t.kind == store::TransferKind::Offload) {
          EXPECT_TRUE(t.to_host);
          EXPECT_EQ(t.bytes, buf.size.at(b.k));
          gotOff.insert(t.tensor);
        }
        if (t.kind == store::TransferKind::Prefetch) {
          EXPECT_FALSE(t.to_host);
          EXPECT_EQ(t.bytes, buf.size.at(b.k));
          gotPre.insert(t.tensor);
        }
        if (t.kind == store::TransferKind::Load) gotLoad.insert(t.tensor);
      }
      EXPECT_EQ(gotOff, offloads);
      EXPECT_EQ(gotPre, prefetches);
      EXPECT_EQ(gotLoad, loads);
    }
    // The pool timeline of the first recorded iteration only, never above the peak.
    int memRows[2] = {0, 0};
    for (const store::MemoryRow& m : run.memory) {
      if (m.k != b.k) continue;
      ASSERT_TRUE(m.iteration == 0 || m.iteration == 1);
      ++memRows[m.iteration];
      EXPECT_LE(m.in_use, b.measured_peak);
    }
    EXPECT_GT(memRows[0], steps / 2);
    EXPECT_EQ(memRows[1], 0);
  }
  // Iterations follow each other on the run's clock.
  for (std::size_t i = 1; i < run.iterations.size(); ++i) {
    EXPECT_GE(run.iterations[i].start_ns,
              run.iterations[i - 1].start_ns + run.iterations[i - 1].duration_ns);
  }
}

TEST_F(ProfilerTest, AFinishedProfileStoresTheFitsOfTheModelFittedToIt) {
  const Network net = testing::tinyNetwork();
  auto device = rt::openDevice("cpu");
  const ProfileConfig cfg = tinyProfile(8, 0, 2);
  ProfileResult result;
  {
    store::RunWriter db(m_path, runMeta(*device, "profile", cfg.budget, "swap-all"));
    result = runProfile(*device, net, cfg, db);
  }
  EXPECT_EQ(result.fit_error, "");
  store::RunReader reader(m_path);
  const store::RunData run = reader.load();
  EXPECT_EQ(run.meta.status, store::RunStatus::Complete);
  ASSERT_EQ(static_cast<int>(run.fits.size()), result.fits);
  EXPECT_EQ(reader.counts().fits, result.fits);
  // The rows are the model fitted again to the stored samples, in its order.
  std::vector<store::FitRow> expected = perf::PerfModel::fit(run).fitRows();
  ASSERT_EQ(run.fits.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    store::FitRow got = run.fits[i];
    EXPECT_GT(got.id, 0);
    got.id = expected[i].id;
    EXPECT_EQ(got, expected[i]) << "row " << i << ": " << store::fitScopeName(expected[i].scope)
                                << " " << expected[i].target;
  }
  // Among them the timeline fits: the hand-off and the contention between copies and compute.
  std::set<store::FitScope> scopes;
  for (const store::FitRow& f : run.fits)
    scopes.insert(f.scope);
  for (const store::FitScope scope : {store::FitScope::Type, store::FitScope::Pcie,
                                      store::FitScope::Dispatch, store::FitScope::Contention})
    EXPECT_TRUE(scopes.count(scope)) << store::fitScopeName(scope);
}

TEST_F(ProfilerTest, CancellingLeavesAnIncompleteReadableDatabase) {
  const Network net = testing::tinyNetwork();
  auto device = rt::openDevice("cpu");
  const ProfileConfig cfg = tinyProfile(8, 0, 3);
  std::atomic<bool> cancel{false};
  int calls = 0;
  const auto progress = [&](const RunProgress& p) {
    if (++calls == 4) cancel.store(true);  // during the second minibatch
    EXPECT_EQ(p.batches, 5);               // of 8: {1, 2, 4, 5, 8}
  };
  ProfileResult result;
  {
    store::RunWriter db(m_path, runMeta(*device, "profile", cfg.budget, "swap-all"));
    result = runProfile(*device, net, cfg, db, progress, &cancel);
  }
  EXPECT_TRUE(result.cancelled);
  EXPECT_EQ(result.recorded_iterations, 4);
  store::RunReader reader(m_path);
  const store::RunMeta meta = reader.meta();
  EXPECT_EQ(meta.status, store::RunStatus::Incomplete);
  EXPECT_NE(meta.status_message.find("interrupted after 4"), std::string::npos);
  EXPECT_EQ(reader.counts().iterations, 4);
  EXPECT_EQ(reader.load().batches.size(), 2u);
  EXPECT_EQ(result.fits, 0);  // no model of a profile cut short
  EXPECT_EQ(reader.counts().fits, 0);
}

TEST_F(ProfilerTest, AnErrorMidRunMarksTheDatabaseFailedWithItsMessage) {
  const Network net = testing::tinyNetwork();
  auto device = rt::openDevice("cpu");
  const ProfileConfig cfg = tinyProfile(8, 0, 3);
  int calls = 0;
  const auto progress = [&](const RunProgress&) {
    if (++calls == 5) throw std::runtime_error("the device was lost (injected)");
  };
  {
    store::RunWriter db(m_path, runMeta(*device, "profile", cfg.budget, "swap-all"));
    EXPECT_THROW(runProfile(*device, net, cfg, db, progress), std::runtime_error);
  }
  store::RunReader reader(m_path);
  const store::RunData d = reader.load();
  EXPECT_EQ(d.meta.status, store::RunStatus::Failed);
  EXPECT_EQ(d.meta.status_message, "the device was lost (injected)");
  // Three iterations at k = 1 and two at k = 2 were committed before the error.
  EXPECT_EQ(d.iterations.size(), 5u);
  EXPECT_EQ(d.batches.size(), 1u);
}

TEST_F(ProfilerTest, ReportsEachIterationsStageAndTheTimeLeft) {
  const Network net = testing::tinyNetwork();
  auto device = rt::openDevice("cpu");
  const ProfileConfig cfg = tinyProfile(2, 1, 2);  // k = 1, 2
  std::vector<RunProgress> reports;
  {
    store::RunWriter db(m_path, runMeta(*device, "profile", cfg.budget, "swap-all"));
    runProfile(*device, net, cfg, db, [&](const RunProgress& p) { reports.push_back(p); });
  }
  ASSERT_EQ(reports.size(), 6u);
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const RunProgress& p = reports[i];
    EXPECT_EQ(p.batches, 2);
    EXPECT_EQ(p.batch_index, static_cast<int>(i / 3));
    EXPECT_EQ(p.k, i < 3 ? 1 : 2);
    EXPECT_EQ(p.iteration, static_cast<int>(i % 3) + 1);
    EXPECT_EQ(p.iterations, 3);
    EXPECT_EQ(p.stage, i % 3 == 0 ? RunStage::Warmup : RunStage::Recorded);
    EXPECT_GT(p.iteration_seconds, 0.0);
    if (i + 1 < reports.size()) {
      EXPECT_GT(p.eta_seconds, 0.0) << "report " << i;
    }
  }
  // At k = 1 the three iterations at k = 2 count twice a k = 1 iteration each.
  EXPECT_DOUBLE_EQ(
      reports[2].eta_seconds,
      (reports[0].iteration_seconds + reports[1].iteration_seconds + reports[2].iteration_seconds) /
          3 * 3 * 2);
  EXPECT_EQ(reports.back().eta_seconds, 0.0);
  // Recorded iterations carry their rows, with the pool bytes; warm-ups none.
  const store::RunData d = store::RunReader(m_path).load();
  std::size_t recorded = 0;
  for (const RunProgress& p : reports) {
    if (p.stage == RunStage::Warmup) {
      EXPECT_EQ(p.rows, nullptr);
      continue;
    }
    ASSERT_NE(p.rows, nullptr);
    ASSERT_LT(recorded, d.iterations.size());
    EXPECT_EQ(p.rows->iteration, d.iterations[recorded]);
    EXPECT_EQ(p.rows->iteration.k, p.k);
    EXPECT_FALSE(p.rows->memory.empty());
    EXPECT_FALSE(p.rows->samples.empty());
    ++recorded;
  }
  EXPECT_EQ(recorded, d.iterations.size());
}

TEST_F(ProfilerTest, ABudgetBelowKOneIsRefusedWithTheBytesNeeded) {
  const Network net = testing::tinyNetwork();
  try {
    swapAllKMax(net, 1024);
    FAIL() << "1 KiB was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("cannot hold tiny at k = 1"), std::string::npos)
        << e.what();
  }
}

/// The CPU device whose first convolution's forward step needs `perSample` x k bytes of
/// workspace: a pool the analyzer's swap-all k_max fills is refused by the executor at large k.
class WorkspaceDevice final : public rt::WrappedCpuDevice {
 public:
  explicit WorkspaceDevice(std::int64_t perSample) : m_perSample(perSample) {}
  std::unique_ptr<rt::LayerKernel> createKernel(const Network& net,
                                                const std::vector<LayerCost>& costs, int layer,
                                                std::int64_t samples) override {
    auto kernel = WrappedCpuDevice::createKernel(net, costs, layer, samples);
    if (net.layer(layer).name != "conv1") return kernel;
    return std::make_unique<rt::WorkspaceKernel>(std::move(kernel), m_perSample * samples, 0);
  }

 private:
  std::int64_t m_perSample;
};

TEST(SwapAllKMax, OnAPaddedPoolIsTheExecutorsCountAndOnTheCpuTheAnalyzers) {
  const Network net = testing::tinyNetwork();
  const auto costs = computeLayerCosts(net);
  const SwapSet swapAll = makeSwapSet(Policy::SwapAll, net, costs);
  const Gmap gmap = planMemory(net, costs, swapAll).gmap;
  const std::int64_t budget = std::int64_t{1} << 20;
  auto cpu = rt::openDevice("cpu");
  // The CPU pool pads nothing: the analyzer's swap-all curve answers.
  EXPECT_EQ(swapAllKMax(net, budget, *cpu),
            planMemory(net, costs, swapAll).curve.kMax(budget, kMaxBatch));
  rt::WrappedCpuDevice cuda(rt::kCudaPoolShape.padding, rt::kCudaPoolShape.alignment);
  const std::int64_t kMax = swapAllKMax(net, budget, cuda);
  EXPECT_EQ(kMax, rt::poolKMax(gmap, budget, rt::kCudaPoolShape, kMaxBatch));
  ASSERT_LT(kMax, swapAllKMax(net, budget));  // the labels and the logits pad to 16 bytes
  // The analyzer's k_max, padded, does not fit: a profile up to it would be refused before it
  // starts; up to the executor's count it is not.
  EXPECT_THROW(rt::checkRunFits(cuda, net, costs, swapAll, swapAllKMax(net, budget), budget),
               rt::PlanDoesNotFit);
  ProfileConfig cfg;
  cfg.budget = budget;
  EXPECT_NO_THROW(checkProfileFits(cuda, net, cfg));
  EXPECT_NO_THROW(rt::SwapExecutor(cuda, net, kMax, swapAll, budget));
}

TEST_F(ProfilerTest, AMinibatchTheExecutorRefusesIsRetriedAtTheLargestKItAccepts) {
  const Network net = testing::tinyNetwork();
  const ProfileConfig cfg = tinyProfile(16, 0, 1);  // k = 2, 4, 8, 11, 16
  // conv1's workspace alone fills the 4 MiB pool at k = 14: k = 16 cannot run.
  WorkspaceDevice device(cfg.budget / 14);
  const auto costs = computeLayerCosts(net);
  const SwapSet swapAll = makeSwapSet(Policy::SwapAll, net, costs);
  const auto accepts = [&](std::int64_t k) {
    try {
      rt::SwapExecutor ex(device, net, k, swapAll, cfg.budget);
      return true;
    } catch (const rt::PlanDoesNotFit&) {
      return false;
    }
  };
  ASSERT_GT(swapAllKMax(net, cfg.budget), 16);  // the analyzer, without workspaces, says it fits
  ASSERT_TRUE(accepts(11));
  ASSERT_FALSE(accepts(16));
  std::int64_t largest = 11;
  while (accepts(largest + 1))
    ++largest;
  ASSERT_LT(largest, 16);

  ProfileResult result;
  {
    store::RunWriter db(m_path, runMeta(device, "profile", cfg.budget, "swap-all"));
    result = runProfile(device, net, cfg, db);
  }
  // The profile completes, with the largest accepted k in place of 16.
  EXPECT_EQ(result.status, store::RunStatus::Complete);
  EXPECT_EQ(result.batches, (std::vector<std::int64_t>{2, 4, 8, 11, largest}));
  ASSERT_EQ(result.refused.size(), 1u);
  EXPECT_EQ(result.refused[0].k, 16);
  EXPECT_EQ(result.refused[0].ran, largest);
  EXPECT_NE(result.refused[0].reason.find("the plan needs"), std::string::npos)
      << result.refused[0].reason;
  const std::string text = describeRefusal(result.refused[0], cfg.budget);
  EXPECT_EQ(
      text.rfind(
          "k = 16 does not fit the pool of 4.00 MiB as the executor counts it (the plan needs", 0),
      0u)
      << text;
  EXPECT_NE(text.find("profiled k = " + std::to_string(largest) + " instead"), std::string::npos)
      << text;

  const store::RunData run = store::RunReader(m_path).load();
  EXPECT_EQ(run.meta.status, store::RunStatus::Complete);
  EXPECT_EQ(run.meta.extra.at("refused_batches"), refusedBatchesJson(result.refused).dump());
  const auto meta = nlohmann::json::parse(run.meta.extra.at("refused_batches"));
  ASSERT_EQ(meta.size(), 1u);
  EXPECT_EQ(meta[0]["k"], 16);
  EXPECT_EQ(meta[0]["ran"], largest);
  ASSERT_EQ(run.batches.size(), 5u);
  EXPECT_EQ(run.batches.back().k, largest);
  EXPECT_GT(result.fits, 0) << result.fit_error;
}

TEST_F(ProfilerTest, RecordsEachKernelsWorkspaceAtEveryKThatRan) {
  const Network net = testing::tinyNetwork();
  const ProfileConfig cfg = tinyProfile(8, 0, 1);  // k = 1, 2, 4, 5, 8
  const std::int64_t perSample = 1000;
  WorkspaceDevice device(perSample);
  ProfileResult result;
  {
    store::RunWriter db(m_path, runMeta(device, "profile", cfg.budget, "swap-all"));
    result = runProfile(device, net, cfg, db);
  }
  ASSERT_EQ(result.batches, (std::vector<std::int64_t>{1, 2, 4, 5, 8}));
  const store::RunData run = store::RunReader(m_path).load();
  const auto byK = nlohmann::json::parse(run.meta.extra.at("kernel_choices_by_k"));
  ASSERT_EQ(byK.size(), result.batches.size());
  for (std::size_t i = 0; i < byK.size(); ++i) {
    const std::int64_t k = result.batches[i];
    EXPECT_EQ(byK[i]["k"], k);
    ASSERT_EQ(byK[i]["layers"].size(), 1u);  // conv1 alone holds one
    EXPECT_EQ(byK[i]["layers"][0]["layer"], "conv1");
    EXPECT_EQ(byK[i]["layers"][0]["forward_workspace"], perSample * k);
    EXPECT_EQ(byK[i]["layers"][0]["backward_workspace"], 0);
  }

  // The CPU backend's kernels choose nothing and hold no workspace: no such meta.
  fs::remove(m_path);
  auto cpu = rt::openDevice("cpu");
  {
    store::RunWriter db(m_path, runMeta(*cpu, "profile", cfg.budget, "swap-all"));
    runProfile(*cpu, net, cfg, db);
  }
  EXPECT_EQ(store::RunReader(m_path).load().meta.extra.count("kernel_choices_by_k"), 0u);
}

TEST_F(ProfilerTest, AProfileWhoseNextKAboveTheLastNeverFitsEndsWithWhatItRecorded) {
  const Network net = testing::tinyNetwork();
  const ProfileConfig cfg = tinyProfile(16, 0, 1);  // k = 2, 4, 8, 11, 16
  // The workspace fills the pool at k = 9: nothing above k = 8 runs.
  WorkspaceDevice device(cfg.budget / 9);
  ProfileResult result;
  {
    store::RunWriter db(m_path, runMeta(device, "profile", cfg.budget, "swap-all"));
    result = runProfile(device, net, cfg, db);
  }
  EXPECT_EQ(result.status, store::RunStatus::Complete);
  EXPECT_EQ(result.batches, (std::vector<std::int64_t>{2, 4, 8}));
  ASSERT_EQ(result.refused.size(), 1u);
  EXPECT_EQ(result.refused[0].k, 11);
  EXPECT_EQ(result.refused[0].ran, 0);
  EXPECT_NE(describeRefusal(result.refused[0], cfg.budget).find("the profile ends there"),
            std::string::npos);
  EXPECT_EQ(store::RunReader(m_path).load().batches.size(), 3u);
}

TEST_F(ProfilerTest, AProfileWhoseSmallestKDoesNotFitFailsWithTheExecutorsRefusal) {
  const Network net = testing::tinyNetwork();
  const ProfileConfig cfg = tinyProfile(16, 0, 1);
  WorkspaceDevice device(cfg.budget);  // not even k = 1 fits
  {
    store::RunWriter db(m_path, runMeta(device, "profile", cfg.budget, "swap-all"));
    EXPECT_THROW(runProfile(device, net, cfg, db), rt::PlanDoesNotFit);
  }
  EXPECT_EQ(store::RunReader(m_path).load().meta.status, store::RunStatus::Failed);
}

}  // namespace
}  // namespace swapscope::collect
