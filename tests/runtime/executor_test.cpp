// SPDX-License-Identifier: MIT
// The swap executor on the CPU backend: plans refused with their shortfall, the measured pool
// high-water mark against the analyzer, bit-identical weights whatever the swap set, a timeline
// where offloads overlap compute, and training that learns.
#include "runtime/executor.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "analysis/network_analysis.h"
#include "graph/builder.h"
#include "graph/zoo.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/dataset.h"
#include "runtime/host_memory.h"
#include "runtime/test_networks.h"
#include "runtime/trainer.h"

namespace swapscope::rt {
namespace {

/// The analyzer's peak of `policy` at `passSamples` samples a pass (the minibatch k without
/// sub-batches, k/S in S).
std::int64_t analyzerPeak(const Network& net, Policy policy, std::int64_t passSamples) {
  return planMemory(net, computeLayerCosts(net), policy).curve.peak(passSamples);
}

/// The executor's options for a fixed policy: its recompute set (empty where it has none).
ExecutorOptions optionsFor(const Network& net, Policy policy, ExecutorOptions options = {}) {
  options.recompute = makeRecomputeSet(policy, net, computeLayerCosts(net));
  return options;
}

SwapSet swapSet(const Network& net, Policy policy) {
  return makeSwapSet(policy, net, computeLayerCosts(net));
}

TEST(SwapExecutor, RefusesAPlanBelowItsPeakWithTheShortfallAndStep) {
  const Network net = buildZooModel("fmnist-cnn", {});
  const std::int64_t k = 32;
  const std::int64_t peak = analyzerPeak(net, Policy::KeepAll, k);
  auto device = createCpuDevice();
  try {
    SwapExecutor ex(*device, net, k, swapSet(net, Policy::KeepAll), peak - 1000);
    FAIL() << "a budget 1000 bytes short was accepted";
  } catch (const PlanDoesNotFit& e) {
    EXPECT_EQ(e.shortfall(), 1000);
    EXPECT_GT(e.step(), 0);
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("1000 bytes short"), std::string::npos) << e.what();
  }
  // The same budget suffices once the FMs are swapped.
  EXPECT_LT(analyzerPeak(net, Policy::SwapAll, k), peak - 1000);
  EXPECT_NO_THROW(SwapExecutor(*device, net, k, swapSet(net, Policy::SwapAll), peak - 1000));
}

struct PolicyCase {
  Policy policy;
  double slack;  ///< budget = peak * slack
};

class HighWater : public ::testing::TestWithParam<PolicyCase> {};

TEST_P(HighWater, MeasuredPoolHighWaterEqualsTheAnalyzersPeak) {
  const Network net = everyKind();
  const std::int64_t k = 6;
  const std::int64_t peak = analyzerPeak(net, GetParam().policy, k);
  const auto budget = static_cast<std::int64_t>(static_cast<double>(peak) * GetParam().slack);
  auto device = createCpuDevice();
  SwapExecutor ex(*device, net, k, swapSet(net, GetParam().policy), budget,
                  optionsFor(net, GetParam().policy));
  const Dataset data = syntheticDataset(net.sampleShape(), 10, 2 * k, 3);
  for (int it = 0; it < 2; ++it) {
    ex.trainIteration(data.images.data() + it * k * net.sampleShape().numel(),
                      data.labels.data() + it * k, static_cast<std::uint64_t>(it), {});
    EXPECT_EQ(ex.poolStats().high_water, peak) << "iteration " << it;
  }
  evaluate(ex, data);
  EXPECT_EQ(ex.poolStats().high_water, peak) << "evaluation stays within the training peak";
}

INSTANTIATE_TEST_SUITE_P(
    Policies, HighWater,
    ::testing::Values(PolicyCase{Policy::KeepAll, 1.0}, PolicyCase{Policy::SwapAll, 1.0},
                      PolicyCase{Policy::SwapAll, 1.5}, PolicyCase{Policy::VdnnConv, 1.0},
                      PolicyCase{Policy::VdnnConv, 4.0}, PolicyCase{Policy::RecomputeLight, 1.0},
                      PolicyCase{Policy::RecomputeLight, 2.0}));

class ModernHighWater : public ::testing::TestWithParam<PolicyCase> {};

TEST_P(ModernHighWater, MeasuredPoolHighWaterEqualsTheAnalyzersPeak) {
  const Network net = modernKinds();
  const std::int64_t k = 4;
  const std::int64_t peak = analyzerPeak(net, GetParam().policy, k);
  const auto budget = static_cast<std::int64_t>(static_cast<double>(peak) * GetParam().slack);
  auto device = createCpuDevice();
  SwapExecutor ex(*device, net, k, swapSet(net, GetParam().policy), budget,
                  optionsFor(net, GetParam().policy));
  const Dataset data = syntheticDataset(net.sampleShape(), 10, 2 * k, 3);
  for (int it = 0; it < 2; ++it) {
    ex.trainIteration(data.images.data() + it * k * net.sampleShape().numel(),
                      data.labels.data() + it * k, static_cast<std::uint64_t>(it), {});
    EXPECT_EQ(ex.poolStats().high_water, peak) << "iteration " << it;
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, ModernHighWater,
                         ::testing::Values(PolicyCase{Policy::KeepAll, 1.0},
                                           PolicyCase{Policy::SwapAll, 1.0},
                                           PolicyCase{Policy::VdnnConv, 1.0},
                                           PolicyCase{Policy::RecomputeLight, 1.0}));

TEST(SwapExecutor, RecomputeLightReMakesTheModernActivationsAndTheirMuls) {
  // The new kinds are light: recompute-light re-makes some of them instead of swapping.
  const Network net = modernKinds();
  const auto costs = computeLayerCosts(net);
  const RecomputeSet r = makeRecomputeSet(Policy::RecomputeLight, net, costs);
  int remade = 0;
  for (int i = 0; i < net.size(); ++i) {
    const LayerKind kind = net.layer(i).kind;
    if (r[i] && (kind == LayerKind::Clip || kind == LayerKind::HardSwish ||
                 kind == LayerKind::Mul || kind == LayerKind::Sigmoid)) {
      ++remade;
    }
  }
  EXPECT_GT(remade, 0);
}

TEST(SwapExecutor, RecomputeLightReMakesBatchNormAndDropoutChainsOnTheLayerKindNetwork) {
  // What the recompute tests below rely on: relu1 is re-made through bn1 from conv1's output,
  // and the dropout's output through pool2, gap and flat from relu2's; both are released in
  // forward and re-made, not swapped.
  const Network net = everyKind();
  const auto costs = computeLayerCosts(net);
  const RecomputeSet r = makeRecomputeSet(Policy::RecomputeLight, net, costs);
  const SwapSet s = makeSwapSet(Policy::RecomputeLight, net, costs);
  std::vector<std::string> recomputed, remade;
  for (int i = 0; i < net.size(); ++i) {
    if (r[i]) recomputed.push_back(net.layer(i).name);
    EXPECT_FALSE(r[i] && s[i]) << net.layer(i).name;
  }
  EXPECT_EQ(recomputed, (std::vector<std::string>{"relu1", "drop"}));
  const Gmap g = buildGmap(net, costs, s, r);
  for (const GmapOp& op : g.ops) {
    if (op.kind == GmapOpKind::Recompute) remade.push_back(g.buffers[op.buffer].name);
  }
  EXPECT_EQ(remade, (std::vector<std::string>{"pool2", "gap", "flat", "drop", "bn1", "relu1"}));
}

TEST(SwapExecutor, RecomputeTasksHaveTheirOwnKindInTheTimeline) {
  // One Recompute task per GMAP recompute op, tagged with its FM; one Compute task per step.
  const Network net = everyKind();
  const std::int64_t k = 4;
  auto device = createCpuDevice();
  SwapExecutor ex(*device, net, k, swapSet(net, Policy::RecomputeLight),
                  analyzerPeak(net, Policy::RecomputeLight, k),
                  optionsFor(net, Policy::RecomputeLight));
  const Dataset data = syntheticDataset(net.sampleShape(), 10, k, 3);
  const IterationRecord rec = ex.trainIteration(data.images.data(), data.labels.data(), 0, {});
  std::multiset<std::pair<int, int>> expected, got;  // (step, buffer)
  for (const GmapOp& op : ex.gmap().ops) {
    if (op.kind == GmapOpKind::Recompute) expected.insert({op.step, op.buffer});
  }
  std::map<int, int> computePerStep;
  for (const TimelineOp& op : rec.ops) {
    if (op.kind == TaskKind::Recompute) {
      EXPECT_EQ(op.stream, StreamKind::Compute);
      got.insert({op.step, op.buffer});
    }
    if (op.kind == TaskKind::Compute) ++computePerStep[op.step];
  }
  ASSERT_EQ(expected.size(), 6u);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(computePerStep.size(), static_cast<std::size_t>(ex.gmap().steps()));
  for (const auto& [step, count] : computePerStep)
    EXPECT_EQ(count, 1) << "step " << step;
}

TEST(SwapExecutor, ResNetHighWaterEqualsTheAnalyzersPeakUnderRecomputeLightAtExactlyThePeak) {
  const Network net = buildZooModel("resnet20", {});
  const std::int64_t k = 4;
  const std::int64_t peak = analyzerPeak(net, Policy::RecomputeLight, k);
  auto device = createCpuDevice();
  SwapExecutor ex(*device, net, k, swapSet(net, Policy::RecomputeLight), peak,
                  optionsFor(net, Policy::RecomputeLight));
  const Dataset data = syntheticDataset(net.sampleShape(), 10, k, 3);
  ex.trainIteration(data.images.data(), data.labels.data(), 0, {});
  EXPECT_EQ(ex.poolStats().high_water, peak);
}

TEST(SwapExecutor, ResNetPlansPackIntoABudgetOfExactlyTheirPeak) {
  // The analyzer's peak is the most bytes alive at once; a budget of exactly that must hold the
  // plan, for every policy and k, or the planner's k_max would not run. Best fit in one order
  // alone left swap-all at k = 3 and 4 256 bytes short.
  const Network net = buildZooModel("resnet20", {});
  auto device = createCpuDevice();
  for (const Policy policy :
       {Policy::KeepAll, Policy::SwapAll, Policy::VdnnConv, Policy::RecomputeLight}) {
    for (std::int64_t k = 1; k <= 12; ++k) {
      const std::int64_t peak = analyzerPeak(net, policy, k);
      try {
        SwapExecutor ex(*device, net, k, swapSet(net, policy), peak, optionsFor(net, policy));
        EXPECT_EQ(ex.predictedPeak(), peak);
      } catch (const PlanDoesNotFit& e) {
        ADD_FAILURE() << policyName(policy) << " at k = " << k << ": " << e.what();
      }
    }
  }
}

TEST(SwapExecutor, ResNetHighWaterEqualsTheAnalyzersPeakUnderSwapAll) {
  const Network net = buildZooModel("resnet20", {});
  const std::int64_t k = 4;
  const std::int64_t peak = analyzerPeak(net, Policy::SwapAll, k);
  auto device = createCpuDevice();
  SwapExecutor ex(*device, net, k, swapSet(net, Policy::SwapAll), 2 * peak);
  EXPECT_GT(ex.prefetchesMoved(), 0) << "with room to spare, prefetches move earlier";
  const Dataset data = syntheticDataset(net.sampleShape(), 10, k, 3);
  ex.trainIteration(data.images.data(), data.labels.data(), 0, {});
  EXPECT_EQ(ex.poolStats().high_water, peak);
}

std::vector<std::vector<float>> trainWeights(Policy policy, int iterations,
                                             std::vector<std::vector<float>>* stats = nullptr,
                                             const Network& net = everyKind()) {
  const std::int64_t k = 5;
  auto device = createCpuDevice();
  ExecutorOptions options;
  options.seed = 11;
  SwapExecutor ex(*device, net, k, swapSet(net, policy), analyzerPeak(net, policy, k) + (1 << 20),
                  optionsFor(net, policy, options));
  const Dataset data = syntheticDataset(net.sampleShape(), 10, 4 * k, 5);
  TrainConfig cfg;
  cfg.iterations = iterations;
  cfg.sgd.lr = 0.05f;
  train(ex, data, cfg);
  if (stats) *stats = ex.readRunningStats();
  return ex.readWeights();
}

TEST(SwapExecutor, WeightsAreBitIdenticalUnderEveryPolicy) {
  std::vector<std::vector<float>> keepStats, swapStats, vdnnStats, recomputeStats;
  const auto keep = trainWeights(Policy::KeepAll, 6, &keepStats);
  const auto swap = trainWeights(Policy::SwapAll, 6, &swapStats);
  const auto vdnn = trainWeights(Policy::VdnnConv, 6, &vdnnStats);
  // bn1 runs again in backward (its running statistics must move once per iteration) and so
  // does the dropout (its mask must be the forward's).
  const auto recompute = trainWeights(Policy::RecomputeLight, 6, &recomputeStats);
  ASSERT_EQ(keep.size(), recompute.size());
  const auto before = trainWeights(Policy::KeepAll, 1);
  ASSERT_EQ(keep.size(), swap.size());
  ASSERT_EQ(keep.size(), vdnn.size());
  bool changed = false;
  for (std::size_t i = 0; i < keep.size(); ++i) {
    ASSERT_EQ(keep[i].size(), swap[i].size());
    EXPECT_EQ(0, std::memcmp(keep[i].data(), swap[i].data(), keep[i].size() * sizeof(float)))
        << "tensor " << i << " differs between keep-all and swap-all";
    EXPECT_EQ(0, std::memcmp(keep[i].data(), vdnn[i].data(), keep[i].size() * sizeof(float)))
        << "tensor " << i << " differs between keep-all and vdnn-conv";
    EXPECT_EQ(0, std::memcmp(keep[i].data(), recompute[i].data(), keep[i].size() * sizeof(float)))
        << "tensor " << i << " differs between keep-all and recompute-light";
    changed = changed || keep[i] != before[i];
  }
  EXPECT_TRUE(changed) << "training must move the weights for the comparison to mean anything";
  EXPECT_EQ(keepStats, swapStats);
  EXPECT_EQ(keepStats, vdnnStats);
  EXPECT_EQ(keepStats, recomputeStats);
}

TEST(SwapExecutor, ModernKindsWeightsAreBitIdenticalUnderEveryPolicy) {
  const Network net = modernKinds();
  const auto keep = trainWeights(Policy::KeepAll, 4, nullptr, net);
  const auto before = trainWeights(Policy::KeepAll, 1, nullptr, net);
  bool changed = false;
  for (Policy p : {Policy::SwapAll, Policy::VdnnConv, Policy::RecomputeLight}) {
    const auto other = trainWeights(p, 4, nullptr, net);
    ASSERT_EQ(keep.size(), other.size());
    for (std::size_t i = 0; i < keep.size(); ++i) {
      ASSERT_EQ(keep[i].size(), other[i].size());
      EXPECT_EQ(0, std::memcmp(keep[i].data(), other[i].data(), keep[i].size() * sizeof(float)))
          << "tensor " << i << " differs between keep-all and " << policyName(p);
    }
  }
  for (std::size_t i = 0; i < keep.size(); ++i)
    changed = changed || keep[i] != before[i];
  EXPECT_TRUE(changed) << "training must move the weights for the comparison to mean anything";
}

// ---------------------------------------------------------------------------------------------
// Sub-batches (moDNN): S passes of k/S samples, gradients accumulating, one update.

struct SubBatchCase {
  Policy policy;
  std::int64_t sub_batches;
};

class SubBatchHighWater : public ::testing::TestWithParam<SubBatchCase> {};

TEST_P(SubBatchHighWater, MeasuredPoolHighWaterEqualsTheAnalyzersPeakOfOnePass) {
  // The pool holds one pass: the analyzer's peak at k/S, to the byte, at a budget of exactly it.
  const Network net = everyKind();
  const std::int64_t k = 12, s = GetParam().sub_batches;
  const std::int64_t peak = analyzerPeak(net, GetParam().policy, k / s);
  ASSERT_LT(peak, analyzerPeak(net, GetParam().policy, k)) << "sub-batches must save memory";
  auto device = createCpuDevice();
  ExecutorOptions options = optionsFor(net, GetParam().policy);
  options.sub_batches = s;
  SwapExecutor ex(*device, net, k, swapSet(net, GetParam().policy), peak, options);
  EXPECT_EQ(ex.predictedPeak(), peak);
  EXPECT_EQ(ex.passSamples(), k / s);
  const Dataset data = syntheticDataset(net.sampleShape(), 10, 2 * k, 3);
  for (int it = 0; it < 2; ++it) {
    const IterationRecord rec =
        ex.trainIteration(data.images.data() + it * k * net.sampleShape().numel(),
                          data.labels.data() + it * k, static_cast<std::uint64_t>(it), {});
    EXPECT_EQ(ex.poolStats().high_water, peak) << "iteration " << it;
    EXPECT_EQ(rec.sub_batches, s);
    // Every step ran once per pass.
    std::map<int, int> perStep;
    for (const TimelineOp& op : rec.ops) {
      if (op.kind == TaskKind::Compute) ++perStep[op.step];
    }
    ASSERT_EQ(perStep.size(), static_cast<std::size_t>(ex.gmap().steps()));
    for (const auto& [step, count] : perStep)
      EXPECT_EQ(count, s) << "step " << step;
  }
  evaluate(ex, data);
  EXPECT_EQ(ex.poolStats().high_water, peak) << "evaluation stays within the training peak";
}

INSTANTIATE_TEST_SUITE_P(Policies, SubBatchHighWater,
                         ::testing::Values(SubBatchCase{Policy::KeepAll, 2},
                                           SubBatchCase{Policy::KeepAll, 4},
                                           SubBatchCase{Policy::SwapAll, 3},
                                           SubBatchCase{Policy::VdnnConv, 2},
                                           SubBatchCase{Policy::RecomputeLight, 2},
                                           SubBatchCase{Policy::RecomputeLight, 6}));

/// Weights after `iterations` iterations of `net` at k = 8 in `sub_batches` passes.
std::vector<std::vector<float>> trainSubBatched(const Network& net, Policy policy,
                                                std::int64_t sub_batches, int iterations,
                                                std::vector<float>* losses = nullptr,
                                                EvalResult* eval = nullptr) {
  const std::int64_t k = 8;
  auto device = createCpuDevice();
  ExecutorOptions options = optionsFor(net, policy);
  options.seed = 11;
  options.sub_batches = sub_batches;
  SwapExecutor ex(*device, net, k, swapSet(net, policy), analyzerPeak(net, policy, k) + (1 << 20),
                  options);
  const Dataset data = syntheticDataset(net.sampleShape(), 10, 4 * k, 5);
  TrainConfig cfg;
  cfg.iterations = iterations;
  cfg.sgd.lr = 0.05f;
  const TrainResult r = train(ex, data, cfg);
  if (losses) *losses = {r.first_loss, r.final_loss};
  if (eval) *eval = evaluate(ex, data);
  return ex.readWeights();
}

/// The largest |a - b| / max(|b|, 1e-3) over every value.
double largestRelativeDifference(const std::vector<std::vector<float>>& a,
                                 const std::vector<std::vector<float>>& b) {
  double worst = 0;
  for (std::size_t t = 0; t < a.size(); ++t) {
    for (std::size_t i = 0; i < a[t].size(); ++i) {
      const double d = std::abs(static_cast<double>(a[t][i]) - b[t][i]);
      worst = std::max(worst, d / std::max(std::abs(static_cast<double>(b[t][i])), 1e-3));
    }
  }
  return worst;
}

TEST(SubBatches, WithoutBatchStatisticsTheWeightsAgreeWithTheFullMinibatch) {
  // The gradient accumulated over S passes, each loss divided by the whole minibatch, is the
  // minibatch's mean gradient: the weights agree to float rounding (the sums run in another
  // order), whatever S and the swap set. After 6 iterations at lr 0.05 the rounding reaches
  // 7.9e-6 of a value on NCHW feature maps and 1.1e-5 on NHWC ones (oneDNN's JIT kernels sum
  // each weight gradient in blocks of their own): the bound is 2e-5.
  const Network net = noBatchStatistics();
  std::vector<float> fullLoss, splitLoss;
  EvalResult fullEval, splitEval;
  const auto full = trainSubBatched(net, Policy::KeepAll, 1, 6, &fullLoss, &fullEval);
  const auto before = trainSubBatched(net, Policy::KeepAll, 1, 1);
  ASSERT_GT(largestRelativeDifference(full, before), 1e-3) << "training must move the weights";
  for (const std::int64_t s : {2, 4, 8}) {
    const auto split = trainSubBatched(net, Policy::KeepAll, s, 6, &splitLoss, &splitEval);
    ASSERT_EQ(split.size(), full.size());
    EXPECT_LT(largestRelativeDifference(split, full), 2e-5) << s << " sub-batches";
    EXPECT_NEAR(splitLoss[0], fullLoss[0], 1e-5 * std::abs(fullLoss[0])) << s << " sub-batches";
    EXPECT_NEAR(splitLoss[1], fullLoss[1], 1e-5 * std::abs(fullLoss[1])) << s << " sub-batches";
    EXPECT_EQ(splitEval.samples, fullEval.samples);
    EXPECT_EQ(splitEval.correct, fullEval.correct) << s << " sub-batches";
    EXPECT_NEAR(splitEval.loss, fullEval.loss, 1e-5 * fullEval.loss) << s << " sub-batches";
  }
  // Swapping stays bit-identical within the same S.
  const auto keep = trainSubBatched(net, Policy::KeepAll, 4, 6);
  const auto swap = trainSubBatched(net, Policy::SwapAll, 4, 6);
  for (std::size_t i = 0; i < keep.size(); ++i)
    EXPECT_EQ(0, std::memcmp(keep[i].data(), swap[i].data(), keep[i].size() * sizeof(float)));
}

TEST(SubBatches, WithBatchNormEachPassSeesItsOwnStatistics) {
  const Network net = everyKind();
  // Batch norm normalises each pass by its own statistics, so two passes train differently
  // from the whole minibatch (docs/runtime.md), and still bit-identically across swap sets.
  const auto twoKeep = trainSubBatched(net, Policy::KeepAll, 2, 4);
  const auto twoRecompute = trainSubBatched(net, Policy::RecomputeLight, 2, 4);
  const auto full = trainSubBatched(net, Policy::KeepAll, 1, 4);
  EXPECT_GT(largestRelativeDifference(twoKeep, full), 1e-4);
  for (std::size_t i = 0; i < twoKeep.size(); ++i) {
    EXPECT_EQ(0, std::memcmp(twoKeep[i].data(), twoRecompute[i].data(),
                             twoKeep[i].size() * sizeof(float)));
    for (float v : twoKeep[i])
      ASSERT_TRUE(std::isfinite(v));
  }
}

TEST(SubBatches, ACountThatDoesNotSplitTheMinibatchIsRefusedNamingBothNumbers) {
  const Network net = noBatchStatistics();
  auto device = createCpuDevice();
  const std::int64_t k = 12;
  const std::int64_t budget = analyzerPeak(net, Policy::KeepAll, k);
  const std::pair<std::int64_t, std::string> cases[] = {
      {0, "must be at least 1, not 0"},
      {-3, "must be at least 1, not -3"},
      {5, "12 is not a multiple of 5"},
      {13, "a minibatch of 12 has no sub-batch count of 13"}};
  for (const auto& [s, why] : cases) {
    ExecutorOptions options;
    options.sub_batches = s;
    try {
      SwapExecutor ex(*device, net, k, swapSet(net, Policy::KeepAll), budget, options);
      ADD_FAILURE() << s << " sub-batches were accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
    EXPECT_THROW(checkRunFits(*device, net, computeLayerCosts(net), swapSet(net, Policy::KeepAll),
                              k, budget, options),
                 Error);
  }
}

TEST(SwapExecutor, TimelineShowsOffloadsOverlappingCompute) {
  const Network net = buildZooModel("resnet20", {});
  const std::int64_t k = 16;
  auto device = createCpuDevice();
  SwapExecutor ex(*device, net, k, swapSet(net, Policy::SwapAll),
                  analyzerPeak(net, Policy::SwapAll, k));
  const Dataset data = syntheticDataset(net.sampleShape(), 10, k, 3);
  const IterationRecord rec = ex.trainIteration(data.images.data(), data.labels.data(), 0, {});

  const int steps = ex.gmap().steps();
  int computeOps = 0, offloads = 0, overlapping = 0;
  std::int64_t offloaded = 0;
  for (const TimelineOp& op : rec.ops) {
    EXPECT_LE(op.start_ns, op.end_ns);
    EXPECT_LE(op.end_ns, rec.duration_ns);
    if (op.kind == TaskKind::Compute) ++computeOps;
    if (op.kind != TaskKind::Offload) continue;
    ++offloads;
    offloaded += op.bytes;
    EXPECT_EQ(op.stream, StreamKind::SwapOut);
    for (const TimelineOp& c : rec.ops) {
      if (c.kind == TaskKind::Compute && c.start_ns < op.end_ns && op.start_ns < c.end_ns) {
        ++overlapping;
        break;
      }
    }
  }
  EXPECT_EQ(computeOps, steps);
  EXPECT_EQ(offloaded, rec.offload_bytes);
  EXPECT_GT(offloads, 10);
  // Whether an offload meets a busy compute stream depends on the OS scheduling the two
  // threads at once; on a loaded two-core machine one iteration can miss. A few more iterations
  // must show it.
  for (std::uint64_t it = 1; it < 8 && overlapping == 0; ++it) {
    const IterationRecord more = ex.trainIteration(data.images.data(), data.labels.data(), it, {});
    for (const TimelineOp& op : more.ops) {
      if (op.kind != TaskKind::Offload) continue;
      for (const TimelineOp& c : more.ops) {
        if (c.kind == TaskKind::Compute && c.start_ns < op.end_ns && op.start_ns < c.end_ns) {
          ++overlapping;
          break;
        }
      }
    }
  }
  EXPECT_GT(overlapping, 0) << "no offload ran while the compute stream was busy in 8 iterations";
  // Prefetches run in backward order on the swap-in stream.
  int lastStep = 0;
  for (const TimelineOp& op : rec.ops) {
    if (op.kind != TaskKind::Prefetch || op.step == 1) continue;
    EXPECT_EQ(op.stream, StreamKind::SwapIn);
    EXPECT_GE(op.step, lastStep);
    lastStep = op.step;
  }
  // Every swapped FM comes back: as many bytes in as out, plus the minibatch if it is swapped.
  EXPECT_GE(rec.prefetch_bytes, rec.offload_bytes);
  EXPECT_FALSE(rec.pool.empty());
  std::int64_t maxPool = 0;
  for (const PoolSample& s : rec.pool)
    maxPool = std::max(maxPool, s.in_use);
  EXPECT_EQ(maxPool, ex.predictedPeak());
}

TEST(Trainer, LearnsAFixedSetOfSamplesAndSavesAndLoadsWeights) {
  const Network net = buildZooModel("fmnist-cnn", {});
  const std::int64_t k = 8;
  auto device = createCpuDevice();
  SwapExecutor ex(*device, net, k, swapSet(net, Policy::SwapAll),
                  analyzerPeak(net, Policy::SwapAll, k));
  const Dataset data = syntheticDataset(net.sampleShape(), 10, k, 9);
  TrainConfig cfg;
  cfg.iterations = 30;
  cfg.sgd.lr = 0.005f;
  const TrainResult r = train(ex, data, cfg);
  EXPECT_EQ(r.iterations, 30);
  EXPECT_LT(r.final_loss, 0.5f * r.first_loss) << "first " << r.first_loss;
  const EvalResult before = evaluate(ex, data);
  EXPECT_GE(before.accuracy(), 0.75) << "it memorises 8 samples";

  const std::string path = ::testing::TempDir() + "/fmnist.weights";
  saveWeights(path, net, ex.readWeights(), ex.readRunningStats(), {.force = true});
  auto device2 = createCpuDevice();
  SwapExecutor fresh(*device2, net, k, swapSet(net, Policy::KeepAll),
                     analyzerPeak(net, Policy::KeepAll, k));
  const WeightFile f = loadWeights(path, net);
  fresh.writeWeights(f.weights, f.running_stats);
  const EvalResult after = evaluate(fresh, data);
  EXPECT_EQ(after.correct, before.correct);
  EXPECT_DOUBLE_EQ(after.loss, before.loss);

  const Network other = buildZooModel("resnet20", {});
  try {
    loadWeights(path, other);
    FAIL() << "weights of another network were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("resnet20"), std::string::npos) << e.what();
  }
  // The file as saved, edited below one copy at a time.
  const std::string saved = [&] {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  // A NaN or an infinity in a tensor is refused, naming the tensor and the value.
  {
    std::string bytes = saved;
    const std::string name = "fc1.weights";
    const std::size_t at = bytes.find(name);
    ASSERT_NE(at, std::string::npos);
    const std::size_t first = at + name.size() + sizeof(std::uint64_t);  // after its value count
    for (const float bad :
         {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity()}) {
      std::string damaged = bytes;
      std::memcpy(damaged.data() + first + 5 * sizeof(float), &bad, sizeof bad);
      const std::string damagedPath = ::testing::TempDir() + "/fmnist-nan.weights";
      std::ofstream(damagedPath, std::ios::binary | std::ios::trunc) << damaged;
      try {
        loadWeights(damagedPath, net);
        FAIL() << "a weight file holding " << bad << " was accepted";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::BadInput);
        EXPECT_NE(std::string(e.what()).find("'fc1.weights' holds " +
                                             std::string(std::isnan(bad) ? "NaN" : "-infinity") +
                                             " at value 5 of"),
                  std::string::npos)
            << e.what();
      }
    }
  }
  // A name that is not the layer's is quoted with its control characters escaped: a NUL in it
  // ended the message where it was printed.
  {
    std::string bytes = saved;
    const std::size_t at = bytes.find("conv1.weights");
    ASSERT_NE(at, std::string::npos);
    bytes[at + 4] = '\0';
    const std::string damagedPath = ::testing::TempDir() + "/fmnist-nul.weights";
    std::ofstream(damagedPath, std::ios::binary | std::ios::trunc) << bytes;
    try {
      loadWeights(damagedPath, net);
      FAIL() << "a weight file with a NUL in a tensor name was accepted";
    } catch (const Error& e) {
      EXPECT_NE(
          std::string(e.what()).find("found 'conv\\x00.weights' where 'conv1.weights' belongs"),
          std::string::npos)
          << e.what();
    }
  }
  // So is a negative running variance (batch norm's running statistics: C means, then C
  // variances); a negative running mean is a value like any other.
  {
    std::string bytes = saved;
    const std::string name = "bn1.running_stats";
    const std::size_t at = bytes.find(name);
    ASSERT_NE(at, std::string::npos);
    std::uint64_t count = 0;
    std::memcpy(&count, bytes.data() + at + name.size(), sizeof count);
    ASSERT_GT(count, 2u);
    const std::size_t first = at + name.size() + sizeof count;
    const std::string damagedPath = ::testing::TempDir() + "/fmnist-negative-var.weights";
    const auto put = [&](std::string b, std::size_t i, float v) {
      std::memcpy(b.data() + first + i * sizeof v, &v, sizeof v);
      std::ofstream(damagedPath, std::ios::binary | std::ios::trunc) << b;
    };
    put(bytes, 0, -1.0f);  // the first running mean
    EXPECT_NO_THROW(loadWeights(damagedPath, net));
    put(bytes, count / 2, -1.0f);  // the first running variance
    try {
      loadWeights(damagedPath, net);
      FAIL() << "a weight file holding a negative running variance was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find(
                    "'bn1.running_stats' holds -1 at value " + std::to_string(count / 2) + " of " +
                    std::to_string(count) + ", a running variance (a variance cannot be negative)"),
                std::string::npos)
          << e.what();
    }
  }
  // Bytes after the last tensor are refused, not ignored.
  std::ofstream(path, std::ios::binary | std::ios::app) << "tail";
  try {
    loadWeights(path, net);
    FAIL() << "a weight file with bytes after its last tensor was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find(": 4 bytes after the last tensor"), std::string::npos)
        << e.what();
  }
}

/// input 1x4x4 -> conv 2x3x3 pad 1 (2x4x4) -> relu -> flatten (32) -> linear 10 -> loss.
Network handCounted() {
  NetworkBuilder b("hand");
  auto x = b.input("data", Shape{{1, 4, 4}});
  x = b.conv("c", x, 2, 3, 1, 1);
  x = b.relu("r", x);
  x = b.flatten("f", x);
  x = b.linear("fc", x, 10);
  b.loss("loss", x);
  return std::move(b).build();
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return {};
}

TEST(HostMemory, TheNeedIsTheHandCountedSumOfItsParts) {
  const Network net = handCounted();
  const auto costs = computeLayerCosts(net);
  SwapSet swapped(static_cast<std::size_t>(net.size()), false);
  swapped[static_cast<std::size_t>(net.indexOf("r"))] = true;
  swapped[static_cast<std::size_t>(net.indexOf("f"))] = true;
  const Gmap gmap = buildGmap(net, costs, swapped);
  const std::int64_t k = 5;
  HostMemoryOptions o;
  o.pool = 1000;
  o.backend = 300;
  o.extra = {{"the data", 777}, {"nothing", 0}};
  const HostMemoryNeed need = hostMemoryNeed(net, gmap, k, o);
  // By hand: the FMs of r and f, 2x4x4 = 32 floats a sample each; the staged 1x4x4 images, int32
  // labels and 10 logits a sample, and 64 bytes for the loss; the weights of c (2*1*3*3 + 2) and
  // fc (32*10 + 10) floats.
  const std::int64_t copies = 2 * (2 * 4 * 4) * 4 * k;
  const std::int64_t staging = (16 * 4 + 4 + 10 * 4) * k + 64;
  const std::int64_t weights = (2 * 9 + 2 + 32 * 10 + 10) * 4;
  ASSERT_EQ(need.items.size(), 6u) << "the part of 0 bytes is left out";
  EXPECT_EQ(need.items[0].bytes, 1000);
  EXPECT_EQ(need.items[1].what, "host copies of 2 swapped feature maps");
  EXPECT_EQ(need.items[1].bytes, copies);
  EXPECT_EQ(need.items[2].bytes, staging);
  EXPECT_EQ(need.items[3].bytes, weights);
  EXPECT_EQ(need.items[4].bytes, 300);
  EXPECT_EQ(need.items[5].what, "the data");
  const std::int64_t total = 1000 + copies + staging + weights + 300 + 777;
  EXPECT_EQ(total, 5361);
  EXPECT_EQ(need.total(), total);

  EXPECT_NO_THROW(checkHostMemory(need, total));
  EXPECT_NO_THROW(checkHostMemory(need, 0)) << "unknown availability is not checked";
  const std::string m = errorOf([&] { checkHostMemory(need, total - 1); });
  EXPECT_NE(m.find("needs 5.24 KiB (5361 bytes) of host memory"), std::string::npos) << m;
  EXPECT_NE(m.find("the machine has 5.23 KiB (5360 bytes) available: 1 bytes short"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("host copies of 2 swapped feature maps: 1.25 KiB"), std::string::npos) << m;
  EXPECT_NE(m.find("the data: 777 B"), std::string::npos) << m;

  // Data sets: fp32 values and an int32 label a sample; the trainer adds a minibatch and an
  // 8-byte index a sample; reading IDX adds a byte a value and a label.
  EXPECT_EQ(datasetHostBytes(Shape{{1, 28, 28}}, 60000), 60000 * (784 * 4 + 4));
  EXPECT_EQ(trainerHostBytes(Shape{{1, 28, 28}}, 64, 60000), 64 * (784 * 4 + 4) + 60000 * 8);
  EXPECT_EQ(idxLoadHostBytes(Shape{{1, 28, 28}}, 10), 10 * (784 * 5 + 5));
}

TEST(HostMemory, AMinibatchInSubBatchesStagesAllOfItAndALossAPass) {
  // The GMAP is one pass's (k = 5), the staging the whole minibatch's (k = 100, 20 passes): the
  // images, labels and logits of 100 samples and 20 loss values (80 bytes, more than 64).
  const Network net = handCounted();
  const Gmap gmap = buildGmap(net, computeLayerCosts(net), SwapSet(net.size(), false));
  HostMemoryOptions o;
  o.staged_batch = 100;
  const HostMemoryNeed need = hostMemoryNeed(net, gmap, 5, o);
  ASSERT_EQ(need.items[0].what, "the staged minibatch, labels and logits");
  EXPECT_EQ(need.items[0].bytes, (16 * 4 + 4 + 10 * 4) * 100 + 20 * 4);
  o.staged_batch = 10;  // 2 passes: the 64 bytes of one pass still hold both losses
  EXPECT_EQ(hostMemoryNeed(net, gmap, 5, o).items[0].bytes, (16 * 4 + 4 + 10 * 4) * 10 + 64);
}

TEST(HostMemory, PartsBeyondSixtyFourBitsSaturateInsteadOfWrapping) {
  const Network net = handCounted();
  const auto costs = computeLayerCosts(net);
  const Gmap gmap = buildGmap(net, costs, makeSwapSet(Policy::SwapAll, net, costs));
  const std::int64_t k = std::int64_t{1} << 60;
  const HostMemoryNeed need = hostMemoryNeed(net, gmap, k);
  EXPECT_EQ(need.total(), std::numeric_limits<std::int64_t>::max());
  for (const HostMemoryItem& i : need.items)
    EXPECT_GT(i.bytes, 0) << i.what;
  const std::string m = errorOf([&] { checkHostMemory(need, std::int64_t{1} << 40); });
  EXPECT_NE(m.find("needs more than 8388608 TiB"), std::string::npos) << m;
  EXPECT_GT(availableHostMemory(), 0) << "/proc/meminfo is readable on Linux";
}

TEST(SwapExecutor, AHugeMinibatchIsRefusedBeforeTheKernelsAskForScratch) {
  // At k = 2^20 the first convolution's output alone is 4.5 GiB: the plan is refused against
  // the budget before any kernel is made or anything is allocated.
  const Network net = everyKind();
  auto device = createCpuDevice();
  try {
    SwapExecutor ex(*device, net, std::int64_t{1} << 20, swapSet(net, Policy::SwapAll), 64 << 20);
    FAIL() << "accepted";
  } catch (const PlanDoesNotFit& e) {
    EXPECT_GT(e.shortfall(), std::int64_t{4} << 30);
  }
  EXPECT_EQ(device->otherBytes(), 0) << "no kernel was made";
}

TEST(SwapExecutor, RefusesARunOverTheHostMemoryBeforeAllocatingAndCountsTheScratch) {
  const Network net = everyKind();
  const std::int64_t k = 64;
  const SwapSet swapped = swapSet(net, Policy::SwapAll);
  const std::int64_t budget = analyzerPeak(net, Policy::SwapAll, k) + (1 << 20);
  const auto costs = computeLayerCosts(net);
  HostMemoryOptions host;
  host.pool = budget;  // the CPU backend's pool is host memory
  host.extra = {{"the caller's data", 12345}};
  const std::int64_t withoutScratch =
      hostMemoryNeed(net, buildGmap(net, costs, swapped), k, host).total();

  auto device = createCpuDevice();
  ExecutorOptions options;
  options.host_extra = host.extra;
  options.host_available = withoutScratch - 1;
  const std::string before =
      errorOf([&] { SwapExecutor(*device, net, k, swapped, budget, options); });
  EXPECT_NE(before.find(std::to_string(withoutScratch) + " bytes) of host memory"),
            std::string::npos)
      << before;
  EXPECT_NE(before.find("the caller's data: 12.1 KiB"), std::string::npos) << before;
  EXPECT_EQ(device->otherBytes(), 0) << "refused before the kernels were made";

  // Exactly that much: the kernels are made, and their scratch does not fit any more.
  options.host_available = withoutScratch;
  const std::string after =
      errorOf([&] { SwapExecutor(*device, net, k, swapped, budget, options); });
  EXPECT_NE(after.find("the backend's scratch outside the pool"), std::string::npos) << after;
  EXPECT_GT(device->otherBytes(), 0);
  EXPECT_EQ(device->pendingHostBytes(), device->otherBytes()) << "no scratch was allocated";
  EXPECT_NE(after.find(": " + std::to_string(device->otherBytes()) + " bytes short"),
            std::string::npos)
      << after;

  // Nothing was left reserved: the same device runs the plan with the machine's memory.
  options.host_available = -1;
  SwapExecutor ex(*device, net, k, swapped, budget, options);
  EXPECT_EQ(device->pendingHostBytes(), 0);
  const Dataset data = syntheticDataset(net.sampleShape(), 10, k, 3);
  EXPECT_TRUE(std::isfinite(ex.trainIteration(data.images.data(), data.labels.data(), 0, {}).loss));
}

TEST(Devices, OpeningADeviceThatIsNotThereIsAClearError) {
  EXPECT_EQ(openDevice("cpu")->backendName(), "cpu");
  EXPECT_EQ(openDevice("cpu:0")->backendName(), "cpu");
  for (const char* spec : {"cpu:1", "cpu:x", "tpu", "cuda:3"}) {
    try {
      openDevice(spec);
      FAIL() << spec << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find(spec), std::string::npos) << e.what();
    }
  }
  const auto backends = listBackends();
  ASSERT_EQ(backends.size(), 2u);
  EXPECT_TRUE(backends[0].available);
  EXPECT_FALSE(backends[1].detail.empty());
}

}  // namespace
}  // namespace swapscope::rt
