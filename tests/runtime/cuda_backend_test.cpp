// SPDX-License-Identifier: MIT
// The CUDA backend, and the executor's handling of kernel workspaces that the CUDA backend
// relies on. The workspace tests run everywhere, on a CPU device whose kernels claim scratch;
// the CUDA tests skip with the reason where no GPU is usable (as on CI).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "analysis/network_analysis.h"
#include "graph/zoo.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/dataset.h"
#include "runtime/executor.h"
#include "runtime/gpu_inventory.h"
#include "runtime/test_networks.h"

namespace swapscope::rt {
namespace {

SwapSet swapSet(const Network& net, SwapPolicy policy) {
  return makeSwapSet(policy, net, computeLayerCosts(net));
}

/// A convolution kernel that also claims `bytes` of workspace in both passes and fills all of
/// it, so that a workspace overlapping any live buffer would change the results.
class ScratchKernel final : public LayerKernel {
 public:
  ScratchKernel(std::unique_ptr<LayerKernel> inner, std::int64_t bytes, const std::byte** pool,
                const std::int64_t* poolBytes)
      : m_inner(std::move(inner)), m_bytes(bytes), m_pool(pool), m_poolBytes(poolBytes) {}
  void forward(const KernelArgs& a) override {
    scribble(a);
    m_inner->forward(a);
  }
  void backward(const KernelArgs& a) override {
    scribble(a);
    m_inner->backward(a);
  }
  std::int64_t workspaceBytes(bool) const override { return m_bytes; }
  std::string algorithms() const override { return "scratch"; }

 private:
  void scribble(const KernelArgs& a) const {
    const auto* p = static_cast<const std::byte*>(a.workspace);
    // Not gtest macros: they are not thread-safe on the CPU backend's worker threads.
    if (!p || p < *m_pool || p + m_bytes > *m_pool + *m_poolBytes)
      throw Error(ErrorKind::Runtime, "the workspace is missing or outside the pool");
    std::memset(a.workspace, 0xA5, static_cast<std::size_t>(m_bytes));
  }
  std::unique_ptr<LayerKernel> m_inner;
  std::int64_t m_bytes;
  const std::byte** m_pool;
  const std::int64_t* m_poolBytes;
};

/// The CPU device, with ScratchKernel around every convolution.
class ScratchDevice final : public Device {
 public:
  explicit ScratchDevice(std::int64_t scratch) : m_cpu(createCpuDevice()), m_scratch(scratch) {}
  std::string backendName() const override { return m_cpu->backendName(); }
  std::string deviceName() const override { return m_cpu->deviceName(); }
  std::int64_t totalMemory() const override { return m_cpu->totalMemory(); }
  std::byte* reservePool(std::int64_t bytes) override {
    std::byte* p = m_cpu->reservePool(bytes);
    m_pool = p;
    m_poolBytes = bytes;
    return p;
  }
  void releasePool() override { m_cpu->releasePool(); }
  std::int64_t poolAlignment() const override { return m_cpu->poolAlignment(); }
  HostMemory allocateHost(std::int64_t bytes) override { return m_cpu->allocateHost(bytes); }
  std::uint64_t submit(StreamKind s, const Fence& w, std::function<void()> work,
                       const TaskTag& t) override {
    return m_cpu->submit(s, w, std::move(work), t);
  }
  std::uint64_t copy(StreamKind s, void* d, const void* src, std::int64_t n, const Fence& w,
                     const TaskTag& t) override {
    return m_cpu->copy(s, d, src, n, w, t);
  }
  void hostWait(const Fence& f) override { m_cpu->hostWait(f); }
  void synchronize() override { m_cpu->synchronize(); }
  std::vector<TaskTiming> takeTimings() override { return m_cpu->takeTimings(); }
  std::int64_t nowNs() const override { return m_cpu->nowNs(); }
  std::unique_ptr<LayerKernel> createKernel(const Network& net, const std::vector<LayerCost>& costs,
                                            int layer, std::int64_t k) override {
    auto inner = m_cpu->createKernel(net, costs, layer, k);
    if (net.layer(layer).kind != LayerKind::Conv2d) return inner;
    return std::make_unique<ScratchKernel>(std::move(inner), m_scratch, &m_pool, &m_poolBytes);
  }
  void fillZero(void* dst, std::int64_t bytes) override { m_cpu->fillZero(dst, bytes); }
  void sgdStep(const SgdArgs& a) override { m_cpu->sgdStep(a); }
  std::int64_t otherBytes() const override { return m_cpu->otherBytes(); }
  std::vector<std::pair<std::string, std::string>> libraryVersions() const override {
    return m_cpu->libraryVersions();
  }
  bool hostMemoryPinned() const override { return m_cpu->hostMemoryPinned(); }
  const DeviceOptions& options() const override { return m_cpu->options(); }
  void setTaskObserver(TaskObserver* o) override { m_cpu->setTaskObserver(o); }

 private:
  std::unique_ptr<Device> m_cpu;
  std::int64_t m_scratch;
  const std::byte* m_pool = nullptr;
  std::int64_t m_poolBytes = 0;
};

TEST(KernelWorkspace, CountsAgainstTheBudgetAndNeverOverlapsLiveBuffers) {
  const Network net = everyKind();
  const std::int64_t k = 6, scratch = 100000;
  const Dataset data = syntheticDataset(net.sampleShape(), net.classes(), 3 * k, 5);
  for (const SwapPolicy policy : {SwapPolicy::KeepAll, SwapPolicy::SwapAll}) {
    SCOPED_TRACE(std::string(swapPolicyName(policy)));
    auto plainDevice = createCpuDevice();
    SwapExecutor plain(*plainDevice, net, k, swapSet(net, policy), 64 << 20);
    ScratchDevice scratchDevice(scratch);
    SwapExecutor withScratch(scratchDevice, net, k, swapSet(net, policy), 64 << 20);

    // One workspace per active convolution step, of the claimed size, in the GMAP.
    int workspaces = 0;
    for (const GmapBuffer& b : withScratch.gmap().buffers) {
      if (b.kind != BufferKind::Workspace) continue;
      ++workspaces;
      EXPECT_EQ(b.size.at(k), scratch) << b.name;
    }
    EXPECT_EQ(workspaces, 6);  // three convolutions, forward and backward
    EXPECT_GT(withScratch.predictedPeak(), plain.predictedPeak());
    EXPECT_LE(withScratch.predictedPeak(), plain.predictedPeak() + scratch);
    const auto choices = withScratch.kernelChoices();
    ASSERT_EQ(choices.size(), 3u);
    EXPECT_EQ(choices[0].algorithms, "scratch");
    EXPECT_EQ(choices[0].forward_workspace, scratch);

    for (std::int64_t it = 0; it < 3; ++it) {
      const float* x = data.images.data() + it * k * net.sampleShape().numel();
      const std::int32_t* y = data.labels.data() + it * k;
      const IterationRecord a = plain.trainIteration(x, y, static_cast<std::uint64_t>(it), {});
      const IterationRecord b =
          withScratch.trainIteration(x, y, static_cast<std::uint64_t>(it), {});
      EXPECT_EQ(a.loss, b.loss) << "iteration " << it;
    }
    EXPECT_EQ(plain.readWeights(), withScratch.readWeights());
    EXPECT_EQ(withScratch.poolStats().high_water, withScratch.predictedPeak());
  }
}

TEST(KernelWorkspace, APlanThatFitsOnlyWithoutTheWorkspaceIsRefused) {
  const Network net = everyKind();
  const std::int64_t k = 6;
  auto cpu = createCpuDevice();
  const std::int64_t peak =
      SwapExecutor(*cpu, net, k, swapSet(net, SwapPolicy::KeepAll), 64 << 20).predictedPeak();
  ScratchDevice scratchDevice(std::int64_t{1} << 20);
  EXPECT_THROW(SwapExecutor(scratchDevice, net, k, swapSet(net, SwapPolicy::KeepAll), peak),
               PlanDoesNotFit);
}

// ---------------------------------------------------------------------------------------------
// The CUDA backend itself.

/// Why the CUDA tests cannot run here, or empty when they can.
std::string noCudaReason() {
  for (const BackendInfo& b : listBackends()) {
    if (b.name == "cuda" && !b.available) return "no CUDA backend here: " + b.detail;
  }
  return {};
}

#define SWAPSCOPE_REQUIRE_CUDA()            \
  do {                                      \
    const std::string why = noCudaReason(); \
    if (!why.empty()) GTEST_SKIP() << why;  \
  } while (0)

TEST(CudaBackend, WithoutAGpuOpeningItSaysWhy) {
  if (noCudaReason().empty())
    GTEST_SKIP() << "a GPU is present; this checks the message without one";
  try {
    openDevice("cuda");
    FAIL() << "cuda opened without a usable GPU";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("device 'cuda'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(openDevice("cpu")->backendName(), "cpu");  // the CPU backend stays usable
}

/// Trains `iters` iterations and returns the loss of each and the final weights.
struct Trained {
  std::vector<float> losses;
  std::vector<std::vector<float>> weights;
  std::int64_t high_water = 0, predicted = 0;
};
Trained trainOn(Device& device, const Network& net, SwapPolicy policy, std::int64_t k, int iters) {
  const Dataset data = syntheticDataset(net.sampleShape(), net.classes(), k * iters, 11);
  SwapExecutor ex(device, net, k, swapSet(net, policy), 256 << 20);
  Trained t;
  for (int it = 0; it < iters; ++it) {
    t.losses.push_back(ex.trainIteration(data.images.data() + it * k * net.sampleShape().numel(),
                                         data.labels.data() + it * k,
                                         static_cast<std::uint64_t>(it), {})
                           .loss);
  }
  t.weights = ex.readWeights();
  t.high_water = ex.poolStats().high_water;
  t.predicted = ex.predictedPeak();
  return t;
}

TEST(CudaBackend, AgreesWithTheCpuBackendOnTheForwardPassAndOneSgdStep) {
  SWAPSCOPE_REQUIRE_CUDA();
  const Network net = everyKind();
  auto cpu = createCpuDevice();
  auto gpu = openDevice("cuda");  // plain fp32 (FMA math)
  const Trained a = trainOn(*cpu, net, SwapPolicy::KeepAll, 8, 1);
  const Trained b = trainOn(*gpu, net, SwapPolicy::KeepAll, 8, 1);
  EXPECT_NEAR(b.losses[0], a.losses[0], 1e-5 * std::abs(a.losses[0]));
  ASSERT_EQ(a.weights.size(), b.weights.size());
  for (std::size_t t = 0; t < a.weights.size(); ++t) {
    double maxDiff = 0, maxAbs = 0;
    for (std::size_t i = 0; i < a.weights[t].size(); ++i) {
      maxDiff = std::max(maxDiff, static_cast<double>(std::abs(a.weights[t][i] - b.weights[t][i])));
      maxAbs = std::max(maxAbs, static_cast<double>(std::abs(a.weights[t][i])));
    }
    EXPECT_LE(maxDiff, 1e-5 * maxAbs) << "weight tensor " << t;
  }
}

TEST(CudaBackend, DeterministicModeGivesBitIdenticalWeightsAcrossSwapSets) {
  SWAPSCOPE_REQUIRE_CUDA();
  const Network net = everyKind();
  DeviceOptions o;
  o.deterministic = true;
  auto gpu = openDevice("cuda", o);
  const Trained keep = trainOn(*gpu, net, SwapPolicy::KeepAll, 8, 3);
  for (const SwapPolicy policy : {SwapPolicy::SwapAll, SwapPolicy::VdnnConv}) {
    const Trained other = trainOn(*gpu, net, policy, 8, 3);
    EXPECT_EQ(other.losses, keep.losses) << swapPolicyName(policy);
    EXPECT_EQ(other.weights, keep.weights) << swapPolicyName(policy);
  }
}

TEST(CudaBackend, MeasuredPoolPeakEqualsThePredictionWithWorkspaces) {
  SWAPSCOPE_REQUIRE_CUDA();
  const Network net = buildZooModel("resnet20", {});
  auto gpu = openDevice("cuda");
  for (const SwapPolicy policy : {SwapPolicy::KeepAll, SwapPolicy::SwapAll}) {
    const Trained t = trainOn(*gpu, net, policy, 32, 2);
    EXPECT_EQ(t.high_water, t.predicted) << swapPolicyName(policy);
    EXPECT_TRUE(std::isfinite(t.losses.back()));
  }
}

}  // namespace
}  // namespace swapscope::rt
