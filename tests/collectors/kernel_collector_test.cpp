// SPDX-License-Identifier: MIT
// The kernel collector: the task-timing fallback on the CPU backend (always), and CUPTI on a
// GPU (skipped with the reason where there is none).
#include "collectors/kernel_collector.h"

#include <gtest/gtest.h>

#include "analysis/network_analysis.h"
#include "graph/zoo.h"
#include "runtime/dataset.h"

namespace swapscope::collect {
namespace {

struct EngineRun {
  std::unique_ptr<rt::Device> device;
  std::unique_ptr<rt::SwapExecutor> ex;
  rt::Dataset data;
  Network net;
  std::int64_t k;
};

EngineRun makeRun(const std::string& spec, SwapPolicy policy, std::int64_t k) {
  EngineRun r;
  r.net = buildZooModel("fmnist-cnn", {});
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
  EngineRun r = makeRun("cpu", SwapPolicy::SwapAll, 16);
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

  // The transfers are the swap traffic plus the minibatch: direction by kind, host not pinned.
  std::int64_t toDevice = 0, toHost = 0;
  for (const TransferRecord& t : p.transfers) {
    EXPECT_EQ(t.to_device, t.kind == rt::TaskKind::Prefetch);
    EXPECT_FALSE(t.pinned);
    EXPECT_LE(t.start_ns, t.end_ns);
    (t.to_device ? toDevice : toHost) += t.bytes;
  }
  EXPECT_EQ(toHost, rec.offload_bytes);
  EXPECT_EQ(toDevice, rec.prefetch_bytes + rec.load_bytes);  // the labels too
  EXPECT_GT(toHost, 0);
}

TEST(KernelCollector, CuptiNotAskedForIsSaid) {
  EngineRun r = makeRun("cpu", SwapPolicy::KeepAll, 8);
  auto c = KernelCollector::create(*r.device, false);
  EXPECT_NE(c->source().find("CUPTI not asked for"), std::string::npos) << c->source();
}

TEST(KernelCollector, CuptiCountsTheKernelsOfEveryComputeStep) {
  bool gpu = false;
  for (const rt::BackendInfo& b : rt::listBackends())
    gpu = gpu || (b.name == "cuda" && b.available);
  if (!gpu) GTEST_SKIP() << "no usable CUDA device here";
  EngineRun r = makeRun("cuda", SwapPolicy::SwapAll, 32);
  auto c = KernelCollector::create(*r.device, true);
  if (!c->usesCupti()) GTEST_SKIP() << c->source();
  iterate(r, 0);  // warm-up outside the profile
  c->attach();
  const rt::IterationRecord rec = iterate(r, 1);
  const KernelProfile p = c->take(rec);
  c->detach();
  EXPECT_EQ(p.dropped_records, 0);
  int withKernels = 0;
  for (const StepKernels& s : p.steps) {
    EXPECT_GT(s.kernels, 0) << "step " << s.step;
    EXPECT_GT(s.kernel_ns, 0) << "step " << s.step;
    ++withKernels;
  }
  EXPECT_GE(withKernels, r.ex->gmap().forward_steps);  // every forward step launches kernels
  std::int64_t toHost = 0;
  for (const TransferRecord& t : p.transfers) {
    if (!t.to_device) toHost += t.bytes;
    EXPECT_TRUE(t.pinned);
  }
  EXPECT_EQ(toHost, rec.offload_bytes);
}

}  // namespace
}  // namespace swapscope::collect
