// SPDX-License-Identifier: MIT
// The CPU backend's NHWC image FMs against its NCHW ones (plain layouts and oneDNN's GEMM-based
// convolutions): training agrees to 1e-5 relative, the pool's high-water mark is the analyzer's
// peak in both, and the scratch that the blocked weights need does not grow with k.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "analysis/network_analysis.h"
#include "graph/zoo.h"
#include "runtime/cpu/cpu_context.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/dataset.h"
#include "runtime/executor.h"
#include "runtime/rng.h"
#include "test_networks.h"

namespace swapscope::rt {
namespace {

struct Trained {
  std::vector<float> losses;
  std::vector<std::vector<float>> weights, stats;
  std::int64_t high_water = 0, peak = 0;
};

/// `iters` iterations on seeded synthetic data, each image value moved by up to `noise` of itself
/// (a seeded random factor in [1 - noise, 1 + noise] per value).
Trained train(const Network& net, ImageLayout layout, Policy policy, std::int64_t k, int iters,
              double noise = 0) {
  DeviceOptions options;
  options.cpu_layout = layout;
  auto device = createCpuDevice(options);
  const auto costs = computeLayerCosts(net);
  const SwapSet swapped = makeSwapSet(policy, net, costs);
  const std::int64_t peak = planMemory(net, costs, swapped).curve.peak(k);
  SwapExecutor ex(*device, net, k, swapped, peak + peak / 8);  // room to pack the buffers
  Dataset data = syntheticDataset(net.sampleShape(), net.classes(), k * iters, 3);
  if (noise > 0) {
    for (std::size_t i = 0; i < data.images.size(); ++i)
      data.images[i] *= static_cast<float>(1 + noise * (2 * uniform01(17, i) - 1));
  }
  Trained t;
  for (int it = 0; it < iters; ++it) {
    const float* x = data.images.data() + it * k * net.sampleShape().numel();
    const std::int32_t* y = data.labels.data() + it * k;
    t.losses.push_back(ex.trainIteration(x, y, static_cast<std::uint64_t>(it), {}).loss);
  }
  t.weights = ex.readWeights();
  t.stats = ex.readRunningStats();
  t.high_water = ex.poolStats().high_water;
  t.peak = peak;
  return t;
}

/// |a - b| / |a| over a whole tensor (the 2-norms): a tensor whose values are near zero in exact
/// arithmetic (a bias before batch norm) is judged against the tensor, not value by value.
double relativeError(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    norm += static_cast<double>(a[i]) * a[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

/// Five iterations in either layout: the losses, weights and running statistics within 1e-5.
void expectSameTraining(const Network& net, std::int64_t k) {
  const Trained nchw = train(net, ImageLayout::Nchw, Policy::KeepAll, k, 5);
  const Trained nhwc = train(net, ImageLayout::Nhwc, Policy::KeepAll, k, 5);
  for (std::size_t i = 0; i < nchw.losses.size(); ++i) {
    EXPECT_NEAR(nhwc.losses[i], nchw.losses[i], 1e-5 * std::abs(nchw.losses[i]))
        << "iteration " << i;
  }
  ASSERT_EQ(nhwc.weights.size(), nchw.weights.size());
  for (std::size_t t = 0; t < nchw.weights.size(); ++t)
    EXPECT_LT(relativeError(nchw.weights[t], nhwc.weights[t]), 1e-5) << "weight tensor " << t;
  for (std::size_t t = 0; t < nchw.stats.size(); ++t)
    EXPECT_LT(relativeError(nchw.stats[t], nhwc.stats[t]), 1e-5) << "running statistics " << t;
  EXPECT_EQ(nhwc.high_water, nhwc.peak);
  EXPECT_EQ(nchw.high_water, nchw.peak);
}

TEST(CpuLayout, NhwcTrainsAsNchwDoesOnEveryLayerKind) {
  expectSameTraining(everyKind(), 6);
  expectSameTraining(modernKinds(), 6);
}

TEST(CpuLayout, NhwcTrainsAsNchwDoesOnTheFashionMnistCnn) {
  expectSameTraining(buildZooModel("fmnist-cnn", {}), 16);
}

/// The largest relative error over the tensors.
double largestError(const std::vector<std::vector<float>>& a,
                    const std::vector<std::vector<float>>& b) {
  double worst = 0;
  for (std::size_t t = 0; t < a.size(); ++t)
    worst = std::max(worst, relativeError(a[t], b[t]));
  return worst;
}

TEST(CpuLayout, NhwcMovesAResNetsWeightsNoMoreThanRoundingTheImagesDoes) {
  // Deep networks with batch norm, trained on random labels, amplify any rounding: on ResNet-20
  // at k = 8 under NCHW, moving each image value by a random factor within 1 +- 1e-6 (a few
  // roundings) moves the weights after 5 iterations by far more than 1e-5 (docs/runtime.md).
  // Other orders of the sums (NHWC's kernels) are held to that measured spread;
  // EveryLayerOfAResNetComputesWhatNchwComputes checks each layer. One factor for every value
  // would not do: batch norm takes a uniform scale out, and what is left of it depends on the
  // machine's kernels.
  const Network net = buildZooModel("resnet20", {});
  const Trained nchw = train(net, ImageLayout::Nchw, Policy::KeepAll, 8, 5);
  const Trained rounded = train(net, ImageLayout::Nchw, Policy::KeepAll, 8, 5, 1e-6);
  const Trained nhwc = train(net, ImageLayout::Nhwc, Policy::KeepAll, 8, 5);
  const double spread = largestError(nchw.weights, rounded.weights);
  const double layout = largestError(nchw.weights, nhwc.weights);
  std::printf("weights after 5 iterations: NHWC against NCHW %.2e, images +-1e-6 %.2e\n", layout,
              spread);
  EXPECT_LT(layout, 2 * spread);
  EXPECT_EQ(nhwc.high_water, nhwc.peak);
}

TEST(CpuLayout, SwappingKeepsTheNhwcWeightsBitIdentical) {
  const Network net = everyKind();
  const Trained keep = train(net, ImageLayout::Nhwc, Policy::KeepAll, 6, 4);
  const Trained swap = train(net, ImageLayout::Nhwc, Policy::SwapAll, 6, 4);
  EXPECT_EQ(keep.weights, swap.weights);
  EXPECT_EQ(keep.stats, swap.stats);
  EXPECT_EQ(swap.high_water, swap.peak);
}

/// The scratch each slot asks for once every layer's kernel of `net` at minibatch `k` is made.
struct Scratch {
  std::size_t weights, weight_grad;
};

Scratch scratchAt(const Network& net, std::int64_t k, ImageLayout layout) {
  cpu::CpuContext ctx(layout);
  std::vector<std::unique_ptr<LayerKernel>> kernels;
  for (int l = 0; l < net.size(); ++l)
    kernels.push_back(cpu::createCpuKernel(ctx, net, l, k));
  return {ctx.reserved(cpu::CpuContext::kBlockedWeights),
          ctx.reserved(cpu::CpuContext::kBlockedWeightGrad)};
}

TEST(CpuLayout, TheBlockedWeightsScratchDoesNotDependOnK) {
  ZooOptions o;
  o.input = Shape{{3, 64, 64}};
  for (const char* model : {"resnet18", "resnet50", "vgg11", "fmnist-cnn"}) {
    SCOPED_TRACE(model);
    const Network net = buildZooModel(model, std::string(model) == "fmnist-cnn" ? ZooOptions{} : o);
    // The largest convolution's weights: the blocked copy holds at least as many bytes.
    std::int64_t largest = 0;
    for (int l = 0; l < net.size(); ++l) {
      if (net.layer(l).kind != LayerKind::Conv2d) continue;
      const auto& a = net.layer(l).as<Conv2dAttrs>();
      largest = std::max(largest, a.out_channels * net.inputShape(l).channels() / a.groups *
                                      a.kernel_h * a.kernel_w * 4);
    }
    const Scratch small = scratchAt(net, 2, ImageLayout::Nhwc);
    const Scratch large = scratchAt(net, 32, ImageLayout::Nhwc);
    EXPECT_GE(static_cast<std::int64_t>(small.weights), largest);
    EXPECT_EQ(small.weights, large.weights);
    EXPECT_EQ(small.weight_grad, large.weight_grad);
    // oneDNN's own scratchpad is not held to this: its kernels for larger minibatches may ask for
    // more (on an AVX-512 machine they do), and a run reserves what those made at its k ask for.
    // Under NCHW nothing is reordered.
    const Scratch plain = scratchAt(net, 2, ImageLayout::Nchw);
    EXPECT_EQ(plain.weights, 0u);
    EXPECT_EQ(plain.weight_grad, 0u);
  }
}

}  // namespace
}  // namespace swapscope::rt

namespace swapscope::rt {
namespace {

/// One forward and backward of layer `l` in `layout` on random NCHW data: the output, the
/// input gradients and the weight gradient, all in NCHW order.
std::vector<std::vector<float>> layerPass(const Network& net, int l, std::int64_t k,
                                          ImageLayout layout) {
  cpu::CpuContext ctx(layout);
  auto kernel = cpu::createCpuKernel(ctx, net, l, k);
  const auto costs = computeLayerCosts(net);
  const auto& cost = costs[static_cast<std::size_t>(l)];
  std::vector<std::vector<float>> in, inGrad;
  KernelArgs a;
  std::uint64_t seed = 10;
  auto random = [&seed](std::size_t n) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i)
      v[i] = static_cast<float>(2 * uniform01(seed, i) - 1);
    ++seed;
    return v;
  };
  auto toLayout = [&](const Shape& s, const std::vector<float>& v) {
    std::vector<float> out(v.size());
    convertImages(layout, s, k, v.data(), out.data(), true);
    return out;
  };
  auto toNchw = [&](const Shape& s, const std::vector<float>& v) {
    std::vector<float> out(v.size());
    convertImages(layout, s, k, v.data(), out.data(), false);
    return out;
  };
  for (int src : net.inputsOf(l)) {
    const Shape& s = net.outputShape(src);
    in.push_back(toLayout(s, random(static_cast<std::size_t>(k * s.numel()))));
    inGrad.emplace_back(in.back().size(), 0.0f);
  }
  const Shape& os = net.outputShape(l);
  std::vector<float> w = random(static_cast<std::size_t>(cost.params));
  std::vector<float> wGrad(w.size()), running(static_cast<std::size_t>(cost.running_stats), 1.0f);
  std::vector<float> out(static_cast<std::size_t>(k * os.numel()));
  std::vector<std::byte> saved(static_cast<std::size_t>(cost.reads.saved.at(k)) + 1);
  const std::vector<float> outGrad = toLayout(os, random(out.size()));
  for (auto& v : in)
    a.in.push_back(v.data());
  for (auto& g : inGrad)
    a.in_grad.push_back(g.data());
  a.accumulate.assign(in.size(), false);
  a.out = out.data();
  a.out_grad = outGrad.data();
  a.weights = w.data();
  a.weight_grad = wGrad.data();
  a.running_stats = running.data();
  a.saved = saved.data();
  kernel->forward(a);
  kernel->backward(a);
  std::vector<std::vector<float>> result{toNchw(os, out), wGrad};
  for (std::size_t i = 0; i < in.size(); ++i)
    result.push_back(toNchw(net.outputShape(net.inputsOf(l)[i]), inGrad[i]));
  return result;
}

TEST(CpuLayout, EveryLayerOfAResNetComputesWhatNchwComputes) {
  const Network net = buildZooModel("resnet20", {});
  for (int l = 0; l < net.size(); ++l) {
    const LayerKind kind = net.layer(l).kind;
    if (kind == LayerKind::Input || kind == LayerKind::SoftmaxCrossEntropy) continue;
    const auto a = layerPass(net, l, 8, ImageLayout::Nchw);
    const auto b = layerPass(net, l, 8, ImageLayout::Nhwc);
    for (std::size_t t = 0; t < a.size(); ++t)
      EXPECT_LT(relativeError(a[t], b[t]), 1e-5) << net.layer(l).name << " result " << t;
  }
}

}  // namespace
}  // namespace swapscope::rt
