// SPDX-License-Identifier: MIT
// The CUDA backend, and the executor's handling of kernel workspaces that the CUDA backend
// relies on. The workspace tests run everywhere, on a CPU device whose kernels claim scratch;
// the CUDA tests skip with the reason where no GPU is usable (as on CI).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "analysis/memory.h"
#include "analysis/network_analysis.h"
#include "graph/zoo.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/cuda_test_support.h"
#include "runtime/dataset.h"
#include "runtime/executor.h"
#include "runtime/gpu_inventory.h"
#include "runtime/test_networks.h"
#include "runtime/wrapped_cpu_device.h"

namespace swapscope::rt {
namespace {

SwapSet swapSet(const Network& net, Policy policy) {
  return makeSwapSet(policy, net, computeLayerCosts(net));
}

/// A kernel that checks the alignment of every pointer it is given (offsets from the pool's
/// start) and, where it claims `bytes` of workspace, fills all of it, so that a workspace
/// overlapping any live buffer would change the results.
class ScratchKernel final : public LayerKernel {
 public:
  ScratchKernel(std::unique_ptr<LayerKernel> inner, std::int64_t bytes, const std::byte** pool,
                const std::int64_t* poolBytes, PoolPadding padding)
      : m_inner(std::move(inner)),
        m_bytes(bytes),
        m_pool(pool),
        m_poolBytes(poolBytes),
        m_padding(padding) {}
  void forward(const KernelArgs& a) override {
    check(a);
    if (m_inner) m_inner->forward(a);
  }
  void backward(const KernelArgs& a) override {
    check(a);
    if (m_inner) m_inner->backward(a);
  }
  std::int64_t workspaceBytes(bool) const override { return m_bytes; }
  std::string algorithms() const override { return m_bytes > 0 ? "scratch" : ""; }

 private:
  void aligned(const void* p, std::int64_t alignment, const char* what) const {
    // Not gtest macros: they are not thread-safe on the CPU backend's worker threads.
    if (p && (static_cast<const std::byte*>(p) - *m_pool) % alignment != 0)
      throw Error(ErrorKind::Runtime, std::string(what) + " is not aligned to " +
                                          std::to_string(alignment) + " bytes in the pool");
  }
  void check(const KernelArgs& a) const {
    for (const float* p : a.in)
      aligned(p, m_padding.buffer, "an input");
    for (const float* p : a.in_grad)
      aligned(p, m_padding.buffer, "an input gradient");
    aligned(a.out, m_padding.buffer, "the output");
    aligned(a.out_grad, m_padding.buffer, "the output gradient");
    aligned(a.weights, m_padding.buffer, "the weights");
    aligned(a.weight_grad, m_padding.buffer, "the weight gradient");
    aligned(a.running_stats, m_padding.buffer, "the running statistics");
    aligned(a.saved, m_padding.buffer, "the saved state");
    aligned(a.labels, m_padding.buffer, "the labels");
    if (m_bytes == 0) return;
    const auto* p = static_cast<const std::byte*>(a.workspace);
    if (!p || p < *m_pool || p + m_bytes > *m_pool + *m_poolBytes)
      throw Error(ErrorKind::Runtime, "the workspace is missing or outside the pool");
    aligned(p, m_padding.workspace, "the workspace");
    std::memset(a.workspace, 0xA5, static_cast<std::size_t>(m_bytes));
  }
  std::unique_ptr<LayerKernel> m_inner;
  std::int64_t m_bytes;
  const std::byte** m_pool;
  const std::int64_t* m_poolBytes;
  PoolPadding m_padding;
};

/// The CPU device, with ScratchKernel around every kernel: every convolution claims `scratch`
/// bytes of workspace, and every pointer is checked against the padding's alignment.
class ScratchDevice final : public WrappedCpuDevice {
 public:
  explicit ScratchDevice(std::int64_t scratch, PoolPadding padding = {})
      : WrappedCpuDevice(padding), m_scratch(scratch), m_padding(padding) {}

 private:
  std::unique_ptr<LayerKernel> wrap(std::unique_ptr<LayerKernel> inner, const Network& net,
                                    const std::vector<LayerCost>&, int layer) override {
    const bool conv = net.layer(layer).kind == LayerKind::Conv2d;
    if (!inner && !conv) return inner;  // the input layer has no kernel
    return std::make_unique<ScratchKernel>(std::move(inner), conv ? m_scratch : 0, &m_pool,
                                           &m_poolBytes, m_padding);
  }
  std::int64_t m_scratch;
  PoolPadding m_padding;
};

TEST(KernelWorkspace, CountsAgainstTheBudgetAndNeverOverlapsLiveBuffers) {
  const Network net = everyKind();
  const std::int64_t k = 6, scratch = 100000;
  const Dataset data = syntheticDataset(net.sampleShape(), net.classes(), 3 * k, 5);
  for (const Policy policy : {Policy::KeepAll, Policy::SwapAll}) {
    SCOPED_TRACE(std::string(policyName(policy)));
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
      SwapExecutor(*cpu, net, k, swapSet(net, Policy::KeepAll), 64 << 20).predictedPeak();
  ScratchDevice scratchDevice(std::int64_t{1} << 20);
  EXPECT_THROW(SwapExecutor(scratchDevice, net, k, swapSet(net, Policy::KeepAll), peak),
               PlanDoesNotFit);
}

// ---------------------------------------------------------------------------------------------
// The CUDA backend's pool padding, simulated on the CPU backend: every buffer padded to and
// aligned at 16 bytes, workspaces at 256.

constexpr PoolPadding kCudaPadding{16, 256};

TEST(PoolPadding, PaddedSizesStayLinearInK) {
  EXPECT_EQ(paddedSize({4, 40}, BufferKind::FeatureMap, kCudaPadding), (LinearBytes{16, 48}));
  EXPECT_EQ(paddedSize({1320, 0}, BufferKind::Weights, kCudaPadding), (LinearBytes{1328, 0}));
  EXPECT_EQ(paddedSize({1000, 0}, BufferKind::Workspace, kCudaPadding), (LinearBytes{1024, 0}));
  EXPECT_EQ(paddedSize({256, 32}, BufferKind::Workspace, kCudaPadding), (LinearBytes{256, 256}));
  EXPECT_EQ(paddedSize({4, 40}, BufferKind::Labels, PoolPadding{}), (LinearBytes{4, 40}));
}

TEST(PoolPadding, MeasuredHighWaterEqualsThePaddedPeakToTheByte) {
  const Network net = everyKind();
  const std::int64_t k = 5, scratch = 1000;  // labels, logits, loss and fc weights need padding
  const Dataset data = syntheticDataset(net.sampleShape(), net.classes(), 2 * k, 7);
  for (const Policy policy : {Policy::KeepAll, Policy::SwapAll}) {
    SCOPED_TRACE(std::string(policyName(policy)));
    ScratchDevice padded(scratch, kCudaPadding);
    const std::int64_t roomy = std::int64_t{64} << 20;
    // The analyzer's exact peak of the padded GMAP (workspaces included), independently of the
    // executor: the same GMAP rebuilt with the kernels' workspaces, then padded.
    std::int64_t analyzerPeak = 0, unpaddedPeak = 0;
    {
      SwapExecutor probe(padded, net, k, swapSet(net, policy), roomy);
      analyzerPeak = computeMemoryCurve(padGmap(probe.gmap(), kCudaPadding)).peak(k);
      unpaddedPeak = computeMemoryCurve(probe.gmap()).peak(k);
      EXPECT_EQ(probe.predictedPeak(), analyzerPeak);
    }
    ASSERT_GT(analyzerPeak, unpaddedPeak);  // this network's sizes do need padding
    // Roomy, and at exactly the padded peak, where the device's 256-byte alignment no longer
    // fits and placement falls back to 16 bytes (never below).
    for (const std::int64_t budget : {roomy, analyzerPeak}) {
      SwapExecutor ex(padded, net, k, swapSet(net, policy), budget);
      for (std::int64_t it = 0; it < 2; ++it) {
        ex.trainIteration(data.images.data() + it * k * net.sampleShape().numel(),
                          data.labels.data() + it * k, static_cast<std::uint64_t>(it), {});
      }
      EXPECT_EQ(ex.poolStats().high_water, analyzerPeak) << "budget " << budget;
    }
    // One byte less is refused before anything runs, with the exact shortfall.
    try {
      SwapExecutor(padded, net, k, swapSet(net, policy), analyzerPeak - 1);
      ADD_FAILURE() << "a budget one byte below the padded peak was accepted";
    } catch (const PlanDoesNotFit& e) {
      EXPECT_EQ(e.shortfall(), 1) << e.what();
    }
  }
}

// `analyze --device cuda`'s k_max (poolKMax) and the profile's on a CUDA device are the
// executor's decision on the CUDA pool, simulated on the CPU backend: its padding and its 256-byte
// alignment.
TEST(PoolKMax, IsTheLargestKTheExecutorAcceptsOnACudaShapedPool) {
  const Network net = everyKind();
  const auto costs = computeLayerCosts(net);
  WrappedCpuDevice cuda(kCudaPoolShape.padding, kCudaPoolShape.alignment);
  ASSERT_EQ(poolShape(cuda).alignment, 256);
  for (const Policy policy : {Policy::KeepAll, Policy::SwapAll, Policy::VdnnConv}) {
    SCOPED_TRACE(std::string(policyName(policy)));
    const SwapSet set = swapSet(net, policy);
    const Gmap gmap = planMemory(net, costs, set).gmap;
    const MemoryCurve unpadded = computeMemoryCurve(gmap);
    const MemoryCurve padded = computeMemoryCurve(padGmap(gmap, kCudaPoolShape.padding));
    const auto accepts = [&](std::int64_t k, std::int64_t budget) {
      try {
        SwapExecutor ex(cuda, net, k, set, budget);
        return true;
      } catch (const PlanDoesNotFit&) {
        return false;
      }
    };
    // The unpadded peak at k = 40, and the padded peak at k = 24 to the byte.
    for (const std::int64_t budget : {unpadded.peak(40), padded.peak(24)}) {
      SCOPED_TRACE("budget " + std::to_string(budget));
      const std::int64_t kMax = poolKMax(gmap, budget, kCudaPoolShape, 1 << 20);
      const std::int64_t cpuKMax = unpadded.kMax(budget);
      ASSERT_GT(kMax, 0);
      EXPECT_LE(kMax, cpuKMax);
      EXPECT_LE(padded.peak(kMax), budget);
      EXPECT_TRUE(accepts(kMax, budget));
      EXPECT_TRUE(poolHolds(gmap, kMax, budget, kCudaPoolShape));
      // Every larger k up to the analyzer's unpadded k_max (and one more) is refused.
      for (std::int64_t k = kMax + 1; k <= cpuKMax + 1; ++k) {
        EXPECT_FALSE(accepts(k, budget)) << "k = " << k;
        EXPECT_FALSE(poolHolds(gmap, k, budget, kCudaPoolShape)) << "k = " << k;
      }
    }
    // Padding is what lowers it here: labels, logits and the loss are 4 bytes a sample or less.
    EXPECT_LT(poolKMax(gmap, unpadded.peak(40), kCudaPoolShape, 1 << 20), 40);
    // Without padding and at fp32's alignment it is the analyzer's.
    EXPECT_EQ(poolKMax(gmap, unpadded.peak(40), PoolShape{4, {}}, 1 << 20),
              unpadded.kMax(unpadded.peak(40)));
  }
}

TEST(PoolPadding, RunTimeBestFitAlignsWorkspacesToTheirOwnAlignment) {
  PoolAllocator alloc(4096, 16);
  const auto a = alloc.allocate(48);  // [0, 48)
  ASSERT_TRUE(a);
  const auto w = alloc.allocate(100, 256);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->offset, 256);
  EXPECT_EQ(w->reserved, 112);
  const auto b = alloc.allocate(16);  // best fit: the gap before the workspace
  ASSERT_TRUE(b);
  EXPECT_EQ(b->offset, 48);
}

// ---------------------------------------------------------------------------------------------
// Device memory headroom.

TEST(DeviceHeadroom, ABudgetAboveFreeMemoryLessTheHeadroomIsRefusedWithTheFigures) {
  const std::int64_t gib = std::int64_t{1} << 30;
  EXPECT_NO_THROW(checkDeviceBudget("cuda:0 (test)", 10 * gib, 16 * gib, gib, 9 * gib));
  EXPECT_NO_THROW(checkDeviceBudget("cuda:0 (test)", 0, 16 * gib, gib, 40 * gib));  // unknown
  try {
    checkDeviceBudget("cuda:0 (test)", 10 * gib, 16 * gib, gib, 9 * gib + 1);
    FAIL() << "a budget one byte above free memory less the headroom was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    const std::string m = e.what();
    EXPECT_NE(m.find("cuda:0 (test)"), std::string::npos) << m;
    EXPECT_NE(m.find("(9663676417 bytes)"), std::string::npos) << m;  // the budget
    EXPECT_NE(m.find("(10737418240 bytes) free"), std::string::npos) << m;
    EXPECT_NE(m.find("headroom of 1.00 GiB (1073741824 bytes)"), std::string::npos) << m;
    EXPECT_NE(m.find("leaves 9.00 GiB (9663676416 bytes)"), std::string::npos) << m;
  }
  // Less free memory than the headroom leaves nothing.
  try {
    checkDeviceBudget("cuda:0 (test)", gib / 2, 16 * gib, gib, 1);
    FAIL() << "a budget was accepted with less free memory than the headroom";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("leaves nothing"), std::string::npos) << e.what();
  }
}

TEST(DeviceHeadroom, TheExecutorRefusesBeforeAllocatingOnADeviceWithLittleFreeMemory) {
  /// A device whose pool is device memory with 100 MiB free.
  class SmallDevice final : public WrappedCpuDevice {
   public:
    bool poolInHostMemory() const override { return false; }
    std::int64_t freeMemory() const override { return std::int64_t{100} << 20; }
    std::byte* reservePool(std::int64_t) override {
      throw Error(ErrorKind::Runtime, "the pool was reserved despite the headroom");
    }
  };
  SmallDevice device;  // the default headroom of 1 GiB leaves nothing of 100 MiB
  const Network net = everyKind();
  try {
    SwapExecutor(device, net, 4, swapSet(net, Policy::KeepAll), 64 << 20);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("headroom of 1.00 GiB (1073741824 bytes) leaves nothing"),
              std::string::npos)
        << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// The host copies of the swapped FMs: one allocation (one cudaHostAlloc on the GPU) holding all
// of them at planned offsets, rather than one per FM.

TEST(HostArena, SwappedFeatureMapsShareOneHostAllocation) {
  /// The CPU device, recording the size of every host allocation.
  class CountingDevice final : public WrappedCpuDevice {
   public:
    HostMemory allocateHost(std::int64_t bytes) override {
      sizes.push_back(bytes);
      return WrappedCpuDevice::allocateHost(bytes);
    }
    std::vector<std::int64_t> sizes;
  };
  const Network net = everyKind();
  const std::int64_t k = 4;
  const auto costs = computeLayerCosts(net);
  const SwapSet all = swapSet(net, Policy::SwapAll);
  // The swapped FMs' bytes from the layer costs (the input is never copied back).
  std::int64_t swappedBytes = 0;
  int swappedCount = 0;
  for (int l = 0; l < net.size(); ++l) {
    if (!all[static_cast<std::size_t>(l)] || l == net.inputLayer()) continue;
    swappedBytes += costs[static_cast<std::size_t>(l)].fm.at(k);
    ++swappedCount;
  }
  ASSERT_GT(swappedCount, 3);

  CountingDevice keepDevice, swapDevice;
  SwapExecutor keep(keepDevice, net, k, swapSet(net, Policy::KeepAll), 64 << 20);
  SwapExecutor swap(swapDevice, net, k, all, 64 << 20);
  // As many host allocations with every FM swapped as with none, one of them the arena.
  EXPECT_EQ(swapDevice.sizes.size(), keepDevice.sizes.size());
  EXPECT_EQ(std::count(swapDevice.sizes.begin(), swapDevice.sizes.end(), swappedBytes), 1)
      << "no host allocation of the " << swappedCount << " swapped FMs' " << swappedBytes
      << " bytes";

  // The arena holds every FM at its own offset: training through it matches keep-all.
  const Dataset data = syntheticDataset(net.sampleShape(), net.classes(), 2 * k, 5);
  for (std::int64_t it = 0; it < 2; ++it) {
    const float* x = data.images.data() + it * k * net.sampleShape().numel();
    const std::int32_t* y = data.labels.data() + it * k;
    EXPECT_EQ(keep.trainIteration(x, y, static_cast<std::uint64_t>(it), {}).loss,
              swap.trainIteration(x, y, static_cast<std::uint64_t>(it), {}).loss);
  }
  EXPECT_EQ(keep.readWeights(), swap.readWeights());
  EXPECT_EQ(swapDevice.sizes.size(), keepDevice.sizes.size());  // none while training
}

// ---------------------------------------------------------------------------------------------
// The numerics check the CUDA tests and bench/gpu/validate.py make, proven on the CPU backend:
// a 1 % error planted in one layer's weight gradient must fail it.

/// The CPU device with the weight gradient of layer `layer` scaled by `factor` after backward.
class PlantedGradientDevice final : public WrappedCpuDevice {
 public:
  PlantedGradientDevice(std::string layer, float factor)
      : m_layer(std::move(layer)), m_factor(factor) {}

 private:
  class Kernel final : public LayerKernel {
   public:
    Kernel(std::unique_ptr<LayerKernel> inner, std::int64_t params, float factor)
        : m_inner(std::move(inner)), m_params(params), m_factor(factor) {}
    void forward(const KernelArgs& a) override { m_inner->forward(a); }
    void backward(const KernelArgs& a) override {
      m_inner->backward(a);
      for (std::int64_t i = 0; i < m_params; ++i)
        a.weight_grad[i] *= m_factor;
    }
    std::int64_t workspaceBytes(bool b) const override { return m_inner->workspaceBytes(b); }

   private:
    std::unique_ptr<LayerKernel> m_inner;
    std::int64_t m_params;
    float m_factor;
  };
  std::unique_ptr<LayerKernel> wrap(std::unique_ptr<LayerKernel> inner, const Network& net,
                                    const std::vector<LayerCost>& costs, int layer) override {
    if (net.layer(layer).name != m_layer) return inner;
    return std::make_unique<Kernel>(std::move(inner), costs[static_cast<std::size_t>(layer)].params,
                                    m_factor);
  }
  std::string m_layer;
  float m_factor;
};

/// One training step: the initial weights, the loss, and the weights and running statistics after.
struct Step {
  std::vector<std::vector<float>> w0, w1, stats1;
  float loss = 0;
  std::int64_t high_water = 0, predicted = 0;
};
Step oneStep(Device& device, const Network& net, const SgdConfig& sgd, std::int64_t k) {
  const Dataset data = syntheticDataset(net.sampleShape(), net.classes(), k, 11);
  SwapExecutor ex(device, net, k, swapSet(net, Policy::KeepAll), 256 << 20);
  Step s;
  s.w0 = ex.readWeights();
  s.loss = ex.trainIteration(data.images.data(), data.labels.data(), 0, sgd).loss;
  s.w1 = ex.readWeights();
  s.stats1 = ex.readRunningStats();
  s.high_water = ex.poolStats().high_water;
  s.predicted = ex.predictedPeak();
  return s;
}

/// lr 1, momentum 0, weight decay 0: the update is the gradient.
constexpr SgdConfig kUpdateIsGradient{1.0f, 0.0f, 0.0f};
constexpr double kUpdateTolerance = 1e-4;

TEST(NumericsCheck, CatchesAOnePercentGradientErrorInOneTensor) {
  const Network net = everyKind();
  const int fc = [&] {
    int i = 0;  // fc's place among the layers with weights
    for (int l = 0; l < net.size(); ++l) {
      if (net.layer(l).name == "fc") return i;
      if (computeLayerCosts(net)[static_cast<std::size_t>(l)].params > 0) ++i;
    }
    return -1;
  }();
  ASSERT_GE(fc, 0);
  auto cpu = createCpuDevice();
  PlantedGradientDevice planted("fc", 1.01f);
  const Step ref = oneStep(*cpu, net, kUpdateIsGradient, 8);
  const Step bad = oneStep(planted, net, kUpdateIsGradient, 8);
  ASSERT_EQ(ref.w0, bad.w0);
  EXPECT_EQ(ref.loss, bad.loss);  // the forward pass is untouched
  const std::vector<double> err = updateErrors(ref.w0, ref.w1, bad.w1);
  for (std::size_t t = 0; t < err.size(); ++t) {
    if (static_cast<int>(t) == fc) {
      EXPECT_NEAR(err[t], 0.01, 1e-4) << "the planted tensor";
      EXPECT_GT(err[t], kUpdateTolerance);
    } else {
      EXPECT_EQ(err[t], 0.0) << "weight tensor " << t;
    }
  }
  // The same device against itself passes: the check has no false alarm on the CPU backend.
  const Step again = oneStep(*cpu, net, kUpdateIsGradient, 8);
  for (const double e : updateErrors(ref.w0, ref.w1, again.w1))
    EXPECT_EQ(e, 0.0);
}

// ---------------------------------------------------------------------------------------------
// The CUDA backend itself. These skip here with the reason, and fail under
// SWAPSCOPE_REQUIRE_GPU=1; ctest labels them `gpu` (the suites ending in Gpu). The first needs
// no GPU, so its suite's name does not end in Gpu.

TEST(CudaBackendAbsent, OpeningItSaysWhy) {
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
Trained trainOn(Device& device, const Network& net, Policy policy, std::int64_t k, int iters,
                ExecutorOptions options = {}) {
  const Dataset data = syntheticDataset(net.sampleShape(), net.classes(), k * iters, 11);
  options.recompute = makeRecomputeSet(policy, net, computeLayerCosts(net));
  SwapExecutor ex(device, net, k, swapSet(net, policy), 256 << 20, options);
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

TEST(CudaBackendGpu, AgreesWithTheCpuBackendOnTheLossTheUpdateAndTheRunningStats) {
  SWAPSCOPE_REQUIRE_CUDA();
  const Network net = everyKind();
  auto cpu = createCpuDevice();
  auto gpu = openDevice("cuda");  // plain fp32 (FMA math)
  const Step a = oneStep(*cpu, net, kUpdateIsGradient, 8);
  const Step b = oneStep(*gpu, net, kUpdateIsGradient, 8);
  ASSERT_EQ(a.w0, b.w0);  // the same initial weights
  EXPECT_NEAR(b.loss, a.loss, 1e-5 * std::abs(a.loss));
  const std::vector<double> err = updateErrors(a.w0, a.w1, b.w1);
  for (std::size_t t = 0; t < err.size(); ++t)
    EXPECT_LE(err[t], kUpdateTolerance) << "weight tensor " << t;
  const std::vector<double> stats = valueErrors(a.stats1, b.stats1);
  for (std::size_t t = 0; t < stats.size(); ++t)
    EXPECT_LE(stats[t], 1e-5) << "running-statistics tensor " << t;
  EXPECT_EQ(b.high_water, b.predicted);
}

TEST(CudaBackendGpu, ModernKindsAgreeWithTheCpuBackendOnTheLossAndTheUpdate) {
  SWAPSCOPE_REQUIRE_CUDA();
  const Network net = modernKinds();  // clip, sigmoid, hardsigmoid, hardswish, mul
  auto cpu = createCpuDevice();
  auto gpu = openDevice("cuda");
  const Step a = oneStep(*cpu, net, kUpdateIsGradient, 8);
  const Step b = oneStep(*gpu, net, kUpdateIsGradient, 8);
  ASSERT_EQ(a.w0, b.w0);
  EXPECT_NEAR(b.loss, a.loss, 1e-5 * std::abs(a.loss));
  const std::vector<double> err = updateErrors(a.w0, a.w1, b.w1);
  for (std::size_t t = 0; t < err.size(); ++t)
    EXPECT_LE(err[t], kUpdateTolerance) << "weight tensor " << t;
  EXPECT_EQ(b.high_water, b.predicted);
}

TEST(CudaBackendGpu, DeterministicModeGivesBitIdenticalWeightsAcrossSwapSets) {
  SWAPSCOPE_REQUIRE_CUDA();
  const Network net = everyKind();
  DeviceOptions o;
  o.deterministic = true;
  auto gpu = openDevice("cuda", o);
  const Trained keep = trainOn(*gpu, net, Policy::KeepAll, 8, 3);
  for (const Policy policy : {Policy::SwapAll, Policy::VdnnConv}) {
    const Trained other = trainOn(*gpu, net, policy, 8, 3);
    EXPECT_EQ(other.losses, keep.losses) << policyName(policy);
    EXPECT_EQ(other.weights, keep.weights) << policyName(policy);
  }
}

TEST(CudaBackendGpu, RecomputeLightGivesKeepAllsWeightsInDeterministicMode) {
  // The recompute path (a forward kernel run again inside a backward step, batch norm leaving
  // its running statistics alone, dropout drawing the same mask) on resnet20 and everyKind.
  SWAPSCOPE_REQUIRE_CUDA();
  DeviceOptions o;
  o.deterministic = true;
  auto gpu = openDevice("cuda", o);
  for (const Network& net : {everyKind(), buildZooModel("resnet20", {})}) {
    const Trained keep = trainOn(*gpu, net, Policy::KeepAll, 8, 3);
    const Trained light = trainOn(*gpu, net, Policy::RecomputeLight, 8, 3);
    EXPECT_EQ(light.losses, keep.losses) << net.name();
    EXPECT_EQ(light.weights, keep.weights) << net.name();
    EXPECT_EQ(light.high_water, light.predicted) << net.name();
  }
}

TEST(CudaBackendGpu, SubBatchesWithBatchNormAgreeWithTheCpuBackend) {
  // resnet20 (batch norm in every block) at k = 8 in 2 sub-batches of 4: each pass normalises
  // with its own statistics on both backends; the update is the accumulated gradient.
  SWAPSCOPE_REQUIRE_CUDA();
  const Network net = buildZooModel("resnet20", {});
  const std::int64_t k = 8;
  const Dataset data = syntheticDataset(net.sampleShape(), net.classes(), k, 11);
  ExecutorOptions options;
  options.sub_batches = 2;
  auto step = [&](Device& device) {
    SwapExecutor ex(device, net, k, swapSet(net, Policy::KeepAll), 256 << 20, options);
    Step s;
    s.w0 = ex.readWeights();
    s.loss = ex.trainIteration(data.images.data(), data.labels.data(), 0, kUpdateIsGradient).loss;
    s.w1 = ex.readWeights();
    s.stats1 = ex.readRunningStats();
    return s;
  };
  auto cpu = createCpuDevice();
  auto gpu = openDevice("cuda");
  const Step a = step(*cpu), b = step(*gpu);
  ASSERT_EQ(a.w0, b.w0);
  EXPECT_NEAR(b.loss, a.loss, 1e-5 * std::abs(a.loss));
  const std::vector<double> err = updateErrors(a.w0, a.w1, b.w1);
  for (std::size_t t = 0; t < err.size(); ++t)
    EXPECT_LE(err[t], kUpdateTolerance) << "weight tensor " << t;
  const std::vector<double> stats = valueErrors(a.stats1, b.stats1);
  for (std::size_t t = 0; t < stats.size(); ++t)
    EXPECT_LE(stats[t], 1e-5) << "running-statistics tensor " << t;
}

TEST(CudaBackendGpu, TheMultiTensorUpdateTrainsAsThePerLayerUpdateInOneLaunch) {
  // One kernel launch over the chunk table (uploaded once, the parameters keep their places)
  // gives the per-layer kernels' weights to the bit, with momentum and weight decay.
  SWAPSCOPE_REQUIRE_CUDA();
  const Network net = buildZooModel("resnet20", {});
  DeviceOptions o;
  o.deterministic = true;
  auto gpu = openDevice("cuda", o);
  ExecutorOptions multi;
  multi.multi_tensor_update = true;
  const Trained perLayer = trainOn(*gpu, net, Policy::SwapAll, 8, 3);
  const Trained oneLaunch = trainOn(*gpu, net, Policy::SwapAll, 8, 3, multi);
  EXPECT_EQ(oneLaunch.losses, perLayer.losses);
  EXPECT_EQ(oneLaunch.weights, perLayer.weights);
}

TEST(CudaBackendGpu, SubBatchesAccumulateToTheMinibatchsGradientWithoutBatchNorm) {
  // cuDNN's and cuBLAS's beta = 1 add the passes' weight gradients; the loss divides by the
  // whole minibatch. Without batch norm, 4 passes of 2 train as one pass of 8 (to rounding),
  // with the pool's high-water mark at the padded peak of one pass.
  SWAPSCOPE_REQUIRE_CUDA();
  const Network net = noBatchStatistics();
  DeviceOptions o;
  o.deterministic = true;
  auto gpu = openDevice("cuda", o);
  const std::int64_t k = 8;
  const Dataset data = syntheticDataset(net.sampleShape(), net.classes(), k * 3, 11);
  auto trainSplit = [&](std::int64_t s) {
    ExecutorOptions options;
    options.sub_batches = s;
    SwapExecutor ex(*gpu, net, k, swapSet(net, Policy::SwapAll), 256 << 20, options);
    for (int it = 0; it < 3; ++it) {
      ex.trainIteration(data.images.data() + it * k * net.sampleShape().numel(),
                        data.labels.data() + it * k, static_cast<std::uint64_t>(it), {});
    }
    EXPECT_EQ(ex.poolStats().high_water, ex.predictedPeak()) << s << " sub-batches";
    return ex.readWeights();
  };
  const auto whole = trainSplit(1);
  const auto split = trainSplit(4);
  ASSERT_EQ(whole.size(), split.size());
  const std::vector<double> err = valueErrors(whole, split);
  for (std::size_t t = 0; t < err.size(); ++t)
    EXPECT_LE(err[t], 1e-5) << "weight tensor " << t;
}

TEST(CudaBackendGpu, MeasuredPoolPeakEqualsThePredictionWithWorkspacesAndPadding) {
  SWAPSCOPE_REQUIRE_CUDA();
  const Network net = buildZooModel("resnet20", {});
  auto gpu = openDevice("cuda");
  EXPECT_EQ(gpu->poolPadding(), kCudaPadding);
  for (const Policy policy : {Policy::KeepAll, Policy::SwapAll}) {
    const Trained t = trainOn(*gpu, net, policy, 32, 2);
    EXPECT_EQ(t.high_water, t.predicted) << policyName(policy);
    EXPECT_TRUE(std::isfinite(t.losses.back()));
  }
}

}  // namespace
}  // namespace swapscope::rt
