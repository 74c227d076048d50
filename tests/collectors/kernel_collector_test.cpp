// SPDX-License-Identifier: MIT
// The kernel collector: the task-timing fallback on the CPU backend (always), and CUPTI on a
// GPU (skipped with the reason where there is none).
#include "collectors/kernel_collector.h"

#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <set>
#include <vector>

#include "analysis/network_analysis.h"
#include "collectors/timeline_rows.h"
#include "graph/zoo.h"
#include "runtime/cuda_test_support.h"
#include "runtime/dataset.h"
#include "runtime/test_networks.h"

namespace swapscope::collect {
namespace {

struct EngineRun {
  std::unique_ptr<rt::Device> device;
  std::unique_ptr<rt::SwapExecutor> ex;
  rt::Dataset data;
  Network net;
  std::int64_t k;
};

EngineRun makeRun(const std::string& spec, Policy policy, std::int64_t k,
                  const Network& net = buildZooModel("fmnist-cnn", {})) {
  EngineRun r;
  r.net = net;
  r.k = k;
  r.device = rt::openDevice(spec);
  r.ex = std::make_unique<rt::SwapExecutor>(
      *r.device, r.net, k, makeSwapSet(policy, r.net, computeLayerCosts(r.net)), 64 << 20);
  r.data = rt::syntheticDataset(r.net.sampleShape(), r.net.classes(), k, 3);
  return r;
}

rt::IterationRecord iterate(EngineRun& r, std::uint64_t it) {
  return r.ex->trainIteration(r.data.images.data(), r.data.labels.data(), it, {});
}

TEST(KernelCollector, OnTheCpuFallsBackToTaskTimersAndSaysWhy) {
  EngineRun r = makeRun("cpu", Policy::SwapAll, 16);
  auto c = KernelCollector::create(*r.device, true);
  EXPECT_FALSE(c->usesCupti());
  EXPECT_NE(c->source().find("not a CUDA device"), std::string::npos) << c->source();
  c->attach();
  const rt::IterationRecord rec = iterate(r, 0);
  const KernelProfile p = c->take(rec);
  c->detach();

  // Every compute step and the update appear once, with the compute tasks' summed durations.
  std::int64_t computeNs = 0;
  for (const rt::TimelineOp& op : rec.ops) {
    if (op.stream == rt::StreamKind::Compute &&
        (op.kind == rt::TaskKind::Compute || op.kind == rt::TaskKind::Update))
      computeNs += op.end_ns - op.start_ns;
  }
  EXPECT_EQ(p.kernelTotalNs(), computeNs);
  const int n = r.ex->gmap().forward_steps;
  ASSERT_EQ(p.steps.size(), static_cast<std::size_t>(2 * n + 1));
  EXPECT_EQ(p.steps.front().step, 1);
  EXPECT_EQ(p.steps.back().step, 2 * n + 1);
  for (const StepKernels& s : p.steps)
    EXPECT_EQ(s.kernels, -1);  // task timers cannot count kernels

  // The transfers are the swap traffic plus the minibatch: direction by kind, host not page-locked.
  std::int64_t toDevice = 0, toHost = 0;
  for (const TransferRecord& t : p.transfers) {
    EXPECT_EQ(t.to_device, t.kind == rt::TaskKind::Prefetch);
    EXPECT_FALSE(t.page_locked);
    EXPECT_LE(t.start_ns, t.end_ns);
    (t.to_device ? toDevice : toHost) += t.bytes;
  }
  EXPECT_EQ(toHost, rec.offload_bytes);
  EXPECT_EQ(toDevice, rec.prefetch_bytes + rec.load_bytes);  // the labels too
  EXPECT_GT(toHost, 0);
}

TEST(TimelineRows, RecomputeTasksBecomeRecomputeRowsNotStepSamples) {
  // recompute-light re-makes six FMs of the layer-kind network in backward steps; each is a
  // recompute row with its layer's forward FLOPs, and every step has exactly one sample.
  const Network net = rt::everyKind();
  const auto costs = computeLayerCosts(net);
  const std::int64_t k = 4;
  auto device = rt::openDevice("cpu");
  rt::ExecutorOptions options;
  options.recompute = makeRecomputeSet(Policy::RecomputeLight, net, costs);
  rt::SwapExecutor ex(*device, net, k, makeSwapSet(Policy::RecomputeLight, net, costs), 64 << 20,
                      options);
  const rt::Dataset data = rt::syntheticDataset(net.sampleShape(), net.classes(), k, 3);
  const rt::IterationRecord rec = ex.trainIteration(data.images.data(), data.labels.data(), 0, {});
  RowContext ctx;
  ctx.net = &net;
  ctx.gmap = &ex.gmap();
  ctx.costs = &costs;
  ctx.k = k;
  ctx.run_start_ns = rec.start_ns;
  const store::IterationRows rows = iterationRows(rec, ctx);
  std::multiset<std::pair<int, int>> expected, got;  // (step, layer)
  for (const GmapOp& op : ex.gmap().ops) {
    if (op.kind == GmapOpKind::Recompute)
      expected.insert({op.step, ex.gmap().buffers[static_cast<std::size_t>(op.buffer)].layer});
  }
  for (const store::RecomputeRow& r : rows.recomputes) {
    got.insert({r.step, r.layer});
    EXPECT_EQ(r.flops, k * costs[static_cast<std::size_t>(r.layer)].fwd_flops);
  }
  ASSERT_EQ(expected.size(), 6u);
  EXPECT_EQ(got, expected);
  std::map<int, int> perStep;
  for (const store::SampleRow& s : rows.samples) {
    if (s.direction != store::Direction::Update) ++perStep[s.step];
  }
  EXPECT_EQ(perStep.size(), static_cast<std::size_t>(ex.gmap().steps()));
  for (const auto& [step, count] : perStep)
    EXPECT_EQ(count, 1) << "step " << step;
}

TEST(TimelineRows, SubBatchesGiveEachStepOneSampleOfItsPassesFlopsPerPass) {
  // k = 8 in 4 passes: every step runs 4 times on 2 samples, so it has 4 samples per iteration,
  // each with the FLOPs of 2 samples (the performance model fits time against them).
  const Network net = buildZooModel("fmnist-cnn", {});
  const auto costs = computeLayerCosts(net);
  const std::int64_t k = 8;
  auto device = rt::openDevice("cpu");
  rt::ExecutorOptions options;
  options.sub_batches = 4;
  rt::SwapExecutor ex(*device, net, k, makeSwapSet(Policy::SwapAll, net, costs), 64 << 20, options);
  const rt::Dataset data = rt::syntheticDataset(net.sampleShape(), net.classes(), k, 3);
  const rt::IterationRecord rec = ex.trainIteration(data.images.data(), data.labels.data(), 0, {});
  RowContext ctx;
  ctx.net = &net;
  ctx.gmap = &ex.gmap();
  ctx.costs = &costs;
  ctx.k = k;
  ctx.run_start_ns = rec.start_ns;
  const store::IterationRows rows = iterationRows(rec, ctx);
  std::map<int, int> perStep;
  for (const store::SampleRow& s : rows.samples) {
    if (s.direction == store::Direction::Update) continue;
    ++perStep[s.step];
    const LayerCost& c = costs[static_cast<std::size_t>(s.layer)];
    EXPECT_EQ(s.flops,
              2 * (s.direction == store::Direction::Backward ? c.bwd_data_flops + c.bwd_weight_flops
                                                             : c.fwd_flops))
        << "step " << s.step;
  }
  EXPECT_EQ(perStep.size(), static_cast<std::size_t>(ex.gmap().steps()));
  for (const auto& [step, count] : perStep)
    EXPECT_EQ(count, 4) << "step " << step;
}

TEST(TimelineRows, SubBatchesGiveEachPassItsOwnStallAndReadyTime) {
  // k = 8 in 2 passes under swap-all: every pass waits on its own prefetches. Each pass's row of
  // a step holds that pass's stall and t_ready, so the rows' stalls add up to the iteration's,
  // and no row's t_ready is after its own start (the last pass's would be, for the first pass).
  const Network net = buildZooModel("fmnist-cnn", {});
  const auto costs = computeLayerCosts(net);
  const std::int64_t k = 8;
  auto device = rt::openDevice("cpu");
  rt::ExecutorOptions options;
  options.sub_batches = 2;
  rt::SwapExecutor ex(*device, net, k, makeSwapSet(Policy::SwapAll, net, costs), 64 << 20, options);
  const rt::Dataset data = rt::syntheticDataset(net.sampleShape(), net.classes(), k, 3);
  const rt::IterationRecord rec = ex.trainIteration(data.images.data(), data.labels.data(), 0, {});
  const int steps = ex.gmap().steps();
  ASSERT_EQ(rec.pass_stall_ns.size(), 2 * rec.stall_ns.size());
  for (int step = 1; step <= steps; ++step) {
    EXPECT_EQ(rec.pass_stall_ns[rec.passStep(0, step)] + rec.pass_stall_ns[rec.passStep(1, step)],
              rec.stall_ns[static_cast<std::size_t>(step)])
        << "step " << step;
  }
  RowContext ctx;
  ctx.net = &net;
  ctx.gmap = &ex.gmap();
  ctx.costs = &costs;
  ctx.k = k;
  ctx.run_start_ns = rec.start_ns;
  const store::IterationRows rows = iterationRows(rec, ctx);
  ASSERT_GT(rec.stall_total_ns, 0);
  std::int64_t stall = 0;
  int waited = 0;  // rows whose step waited on a swap-stream task
  for (const store::SampleRow& s : rows.samples) {
    if (s.direction == store::Direction::Update) continue;
    stall += s.stall_ns;
    EXPECT_LE(s.ready_ns, s.start_ns) << "step " << s.step << " at " << s.start_ns;
    waited += s.ready_ns > 0;
  }
  EXPECT_EQ(stall, rec.stall_total_ns);
  EXPECT_GT(waited, 0);
}

TEST(KernelCollector, CuptiNotAskedForIsSaid) {
  EngineRun r = makeRun("cpu", Policy::KeepAll, 8);
  auto c = KernelCollector::create(*r.device, false);
  EXPECT_NE(c->source().find("CUPTI not asked for"), std::string::npos) << c->source();
}

TEST(StepCoverage, APassWithEveryStepAndAFailureNamingAMissingStep) {
  // The fallback's timeline of one iteration of a network with every layer kind.
  EngineRun r = makeRun("cpu", Policy::SwapAll, 4, rt::everyKind());
  const rt::IterationRecord rec = iterate(r, 0);
  const auto costs = computeLayerCosts(r.net);
  const StepCoverage full =
      checkStepCoverage(profileFromTimeline(rec, false), r.net, r.ex->gmap(), costs);
  EXPECT_TRUE(full.ok()) << (full.problems.empty() ? "" : full.problems.front());
  EXPECT_TRUE(full.allowed.empty());  // every task ran, with or without work

  // The same timeline with the forward step of 'left' lost.
  const Gmap& gmap = r.ex->gmap();
  int lost = 0;
  for (int s = 1; s <= gmap.forward_steps; ++s) {
    if (r.net.layer(gmap.step_layer[static_cast<std::size_t>(s)]).name == "left") lost = s;
  }
  ASSERT_GT(lost, 0);
  rt::IterationRecord cut = rec;
  std::erase_if(cut.ops, [&](const rt::TimelineOp& op) { return op.step == lost; });
  const StepCoverage c = checkStepCoverage(profileFromTimeline(cut, false), r.net, gmap, costs);
  ASSERT_EQ(c.missing, std::vector<int>{lost});
  EXPECT_EQ(c.problems.at(0),
            "step " + std::to_string(lost) + " (forward of 'left'): nothing recorded");
}

TEST(StepCoverage, WithKernelCountsCopiesOnlyStepsAreAllowedAndNamed) {
  // A profile as CUPTI gives it: one kernel per step, except flatten and concat, which copy.
  const Network net = rt::everyKind();
  const auto costs = computeLayerCosts(net);
  const Gmap gmap = buildGmap(net, costs, makeSwapSet(Policy::KeepAll, net, costs));
  const int n = gmap.forward_steps;
  KernelProfile p;
  for (int s = 1; s <= 2 * n + 1; ++s) {
    const LayerKind kind = s <= 2 * n ? net.layer(gmap.step_layer[static_cast<std::size_t>(s)]).kind
                                      : LayerKind::Linear;
    const bool copies = kind == LayerKind::Flatten || kind == LayerKind::Concat;
    p.steps.push_back({s, 1000, copies ? 0 : 1, copies ? 1 : 0});
  }
  StepCoverage c = checkStepCoverage(p, net, gmap, costs);
  EXPECT_TRUE(c.ok()) << (c.problems.empty() ? "" : c.problems.front());
  ASSERT_EQ(c.allowed.size(), 4u);  // flat and cat, forward and backward
  for (const std::string& a : c.allowed)
    EXPECT_NE(a.find("device-to-device copies only"), std::string::npos) << a;

  // A step that launched nothing, and a layer that is not a copy with copies only, both fail.
  p.steps[0].kernels = 0;                                // step 1
  p.steps[static_cast<std::size_t>(2 * n)].kernels = 0;  // the SGD update
  p.steps[static_cast<std::size_t>(2 * n)].memcpys = 3;
  c = checkStepCoverage(p, net, gmap, costs);
  EXPECT_EQ(c.missing, (std::vector<int>{1, 2 * n + 1}));
  EXPECT_EQ(c.problems.back(), "step " + std::to_string(2 * n + 1) +
                                   " (the SGD update): no kernel and no copy recorded");
}

TEST(KernelCollectorGpu, CuptiRecordsEveryStepOfTheIteration) {
  bool gpu = false;
  for (const rt::BackendInfo& b : rt::listBackends())
    gpu = gpu || (b.name == "cuda" && b.available);
  if (!gpu) SWAPSCOPE_GPU_UNAVAILABLE(rt::noCudaReason());
  for (const CuptiApiRecords api : {CuptiApiRecords::Launches, CuptiApiRecords::All}) {
    SCOPED_TRACE(api == CuptiApiRecords::All ? "every API call" : "launch API calls");
    EngineRun r = makeRun("cuda", Policy::SwapAll, 32, rt::everyKind());
    auto c = KernelCollector::create(*r.device, true, api);
    if (!c->usesCupti()) SWAPSCOPE_GPU_UNAVAILABLE(c->source());
    iterate(r, 0);  // warm-up outside the profile
    c->attach();
    const rt::IterationRecord rec = iterate(r, 1);
    const KernelProfile p = c->take(rec);
    c->detach();
    EXPECT_EQ(p.dropped_records, 0);
    EXPECT_EQ(p.untagged_kernels, 0);
    // Every step 1..2N+1, explicitly: a step missing from the profile fails here.
    const StepCoverage cov = checkStepCoverage(p, r.net, r.ex->gmap(), computeLayerCosts(r.net));
    for (const std::string& problem : cov.problems)
      ADD_FAILURE() << problem;
    for (const std::string& a : cov.allowed)
      std::cout << "  allowed: " << a << '\n';
    for (const StepKernels& s : p.steps) {
      if (s.kernels > 0) {
        EXPECT_GT(s.kernel_ns, 0) << "step " << s.step;
      }
    }
    std::int64_t toHost = 0;
    for (const TransferRecord& t : p.transfers) {
      if (!t.to_device) toHost += t.bytes;
      EXPECT_TRUE(t.page_locked);
    }
    EXPECT_EQ(toHost, rec.offload_bytes);
  }
}

}  // namespace
}  // namespace swapscope::collect
