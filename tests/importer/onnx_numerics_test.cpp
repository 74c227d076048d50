// SPDX-License-Identifier: MIT
// A small CNN with weights that uses every layer kind the importer adds, against PyTorch's own
// tensors (scripts/export_onnx.py --numerics): one forward pass, one backward pass on the CPU
// kernels, and one SGD step of the swap executor.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "analysis/network_analysis.h"
#include "importer/onnx_import.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/executor.h"

namespace swapscope {
namespace {

const std::string kDir = std::string(SWAPSCOPE_TEST_DATA_DIR) + "/onnx/";
constexpr double kTolerance = 1e-5;

struct Reference {
  nlohmann::json j;
  std::vector<float> floats(const nlohmann::json& v) const { return v.get<std::vector<float>>(); }
  /// Every parameter's `field` ("before", "grad", "after") in PyTorch's order, concatenated.
  std::vector<float> params(const char* field) const {
    std::vector<float> all;
    for (const auto& name : j.at("param_order")) {
      const auto v = floats(j.at("params").at(name.get<std::string>()).at(field));
      all.insert(all.end(), v.begin(), v.end());
    }
    return all;
  }
};

Reference loadReference() {
  std::ifstream f(kDir + "small_cnn.json");
  return {nlohmann::json::parse(f)};
}

/// The largest difference relative to the largest magnitude of the expected tensor.
double relativeError(const std::vector<float>& got, const std::vector<float>& want) {
  EXPECT_EQ(got.size(), want.size());
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::abs(static_cast<double>(want[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

template <typename T>
std::vector<T> concat(const std::vector<std::vector<T>>& parts) {
  std::vector<T> all;
  for (const auto& p : parts)
    all.insert(all.end(), p.begin(), p.end());
  return all;
}

/// One forward and one backward pass through the CPU kernels, layer by layer, keeping every
/// output, every gradient (the input's too) and every weight gradient.
struct Pass {
  std::vector<std::vector<float>> out, grad, weightGrad;
};

Pass runKernels(const OnnxModel& m, const std::vector<float>& input,
                const std::vector<std::int32_t>& labels, std::int64_t k) {
  const Network& net = m.net;
  const auto costs = computeLayerCosts(net);
  auto device = rt::createCpuDevice();
  const auto n = static_cast<std::size_t>(net.size());
  Pass p;
  p.out.resize(n);
  p.grad.resize(n);
  p.weightGrad.resize(n);
  std::vector<std::vector<float>> weights(n), running(n);
  std::vector<std::vector<std::byte>> saved(n);
  std::vector<std::unique_ptr<rt::LayerKernel>> kernels(n);
  std::size_t wi = 0, ri = 0;
  for (int i = 0; i < net.size(); ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (costs[u].params > 0) weights[u] = m.weights.at(wi++);
    if (costs[u].running_stats > 0) running[u] = m.running_stats.at(ri++);
    const bool loss = i == net.lossLayer();
    p.out[u].assign(loss ? 1 : static_cast<std::size_t>(k * net.outputShape(i).numel()), 0.0f);
    p.grad[u].assign(p.out[u].size(), 0.0f);
    p.weightGrad[u].assign(weights[u].size(), 0.0f);
    if (i == net.inputLayer()) {  // into the device's order of image FMs
      rt::convertImages(device->imageLayout(), net.sampleShape(), k, input.data(),
                        p.out[u].data(), true);
      continue;
    }
    kernels[u] = device->createKernel(net, costs, i, k);
    saved[u].resize(static_cast<std::size_t>(costs[u].reads.saved.at(k)) + 1);
    rt::KernelArgs a;
    for (int src : net.inputsOf(i))
      a.in.push_back(p.out[static_cast<std::size_t>(src)].data());
    a.out = p.out[u].data();
    a.weights = weights[u].data();
    a.running_stats = running[u].data();
    a.saved = saved[u].data();
    a.labels = labels.data();
    kernels[u]->forward(a);
  }
  for (int i = net.size() - 1; i > 0; --i) {
    const auto u = static_cast<std::size_t>(i);
    rt::KernelArgs a;
    for (int src : net.inputsOf(i)) {
      a.in.push_back(p.out[static_cast<std::size_t>(src)].data());
      a.in_grad.push_back(p.grad[static_cast<std::size_t>(src)].data());
      a.accumulate.push_back(true);  // every gradient starts at zero
    }
    a.out = p.out[u].data();
    a.out_grad = i == net.lossLayer() ? nullptr : p.grad[u].data();
    a.weights = weights[u].data();
    a.weight_grad = p.weightGrad[u].data();
    a.running_stats = running[u].data();
    a.saved = saved[u].data();
    a.labels = labels.data();
    kernels[u]->backward(a);
  }
  // The input's gradient back in PyTorch's order.
  auto& inputGrad = p.grad[static_cast<std::size_t>(net.inputLayer())];
  const std::vector<float> grad = inputGrad;
  rt::convertImages(device->imageLayout(), net.sampleShape(), k, grad.data(), inputGrad.data(),
                    false);
  return p;
}

TEST(OnnxNumerics, TheSmallCnnUsesEveryNewLayerKind) {
  const OnnxModel m = importOnnxFile(kDir + "small_cnn.onnx");
  std::set<LayerKind> kinds;
  for (const Layer& l : m.net.layers())
    kinds.insert(l.kind);
  for (LayerKind k : {LayerKind::Clip, LayerKind::Sigmoid, LayerKind::HardSigmoid,
                      LayerKind::HardSwish, LayerKind::Mul}) {
    EXPECT_TRUE(kinds.count(k)) << layerKindName(k);
  }
  EXPECT_TRUE(m.hasWeights());
}

TEST(OnnxNumerics, ForwardAndBackwardEqualPyTorchs) {
  const Reference ref = loadReference();
  const OnnxModel m = importOnnxFile(kDir + "small_cnn.onnx");
  const std::int64_t k = ref.j.at("input_shape").at(0).get<std::int64_t>();
  const auto labels = ref.j.at("labels").get<std::vector<std::int32_t>>();
  // The importer's layout mapping: the initializers are PyTorch's parameters, in order.
  EXPECT_EQ(concat(m.weights), ref.params("before"));

  const Pass p = runKernels(m, ref.floats(ref.j.at("input")), labels, k);
  const Network& net = m.net;
  const auto logits = static_cast<std::size_t>(net.inputsOf(net.lossLayer()).at(0));
  EXPECT_LT(relativeError(p.out[logits], ref.floats(ref.j.at("logits"))), kTolerance);
  EXPECT_NEAR(p.out[static_cast<std::size_t>(net.lossLayer())][0], ref.j.at("loss").get<double>(),
              kTolerance * ref.j.at("loss").get<double>());
  EXPECT_LT(relativeError(p.grad[0], ref.floats(ref.j.at("input_grad"))), kTolerance);
  // Each parameter tensor on its own, so that a small one is not hidden by a large one. A
  // gradient that is zero in exact arithmetic (the bias of a convolution that batch norm
  // follows: PyTorch's is 8e-9, rounding) is compared with the largest gradient instead.
  const auto costs = computeLayerCosts(net);
  std::vector<std::vector<float>> ours;
  for (std::size_t i = 0; i < costs.size(); ++i)
    if (costs[i].params > 0) ours.push_back(p.weightGrad[i]);
  const std::vector<float> all = concat(ours);
  const std::vector<float> theirs = ref.params("grad");
  double largest = 0;
  for (float g : theirs)
    largest = std::max(largest, std::abs(static_cast<double>(g)));
  std::size_t offset = 0;
  for (const auto& name : ref.j.at("param_order")) {
    const auto want = ref.floats(ref.j.at("params").at(name.get<std::string>()).at("grad"));
    const std::vector<float> got(all.begin() + static_cast<std::ptrdiff_t>(offset),
                                 all.begin() + static_cast<std::ptrdiff_t>(offset + want.size()));
    double scale = 0;
    for (float g : want)
      scale = std::max(scale, std::abs(static_cast<double>(g)));
    if (scale > 1e-6 * largest) {
      EXPECT_LT(relativeError(got, want), kTolerance) << name;
    } else {
      for (std::size_t i = 0; i < got.size(); ++i)
        EXPECT_LT(std::abs(got[i] - want[i]), kTolerance * largest) << name << " " << i;
    }
    offset += want.size();
  }
  EXPECT_EQ(offset, all.size());
}

TEST(OnnxNumerics, OneSgdStepOfTheExecutorEqualsPyTorchs) {
  const Reference ref = loadReference();
  const OnnxModel m = importOnnxFile(kDir + "small_cnn.onnx");
  const Network& net = m.net;
  const std::int64_t k = ref.j.at("input_shape").at(0).get<std::int64_t>();
  const auto costs = computeLayerCosts(net);
  for (Policy policy : {Policy::KeepAll, Policy::SwapAll, Policy::RecomputeLight}) {
    SCOPED_TRACE(std::string(policyName(policy)));
    auto device = rt::createCpuDevice();
    rt::ExecutorOptions options;
    options.recompute = makeRecomputeSet(policy, net, costs);
    const std::int64_t peak = planMemory(net, costs, policy).curve.peak(k);
    rt::SwapExecutor ex(*device, net, k, makeSwapSet(policy, net, costs), peak, options);
    ex.writeWeights(m.weights, m.running_stats);
    const auto input = ref.floats(ref.j.at("input"));
    const auto labels = ref.j.at("labels").get<std::vector<std::int32_t>>();
    rt::SgdConfig sgd;
    sgd.lr = ref.j.at("lr").get<float>();
    sgd.momentum = 0;
    sgd.weight_decay = 0;
    const rt::IterationRecord rec = ex.trainIteration(input.data(), labels.data(), 0, sgd);
    EXPECT_NEAR(rec.loss, ref.j.at("loss").get<double>(),
                kTolerance * ref.j.at("loss").get<double>());
    EXPECT_EQ(ex.poolStats().high_water, peak);
    const auto after = concat(ex.readWeights());
    ASSERT_EQ(after.size(), ref.params("after").size());
    std::size_t offset = 0;
    // Each tensor on its own (the gradients are checked apart above: an update of lr x grad
    // that were wrong by 1e-5 of itself would hide below the weights' fp32 rounding here).
    for (const auto& name : ref.j.at("param_order")) {
      const auto want = ref.floats(ref.j.at("params").at(name.get<std::string>()).at("after"));
      const std::vector<float> got(
          after.begin() + static_cast<std::ptrdiff_t>(offset),
          after.begin() + static_cast<std::ptrdiff_t>(offset + want.size()));
      EXPECT_LT(relativeError(got, want), kTolerance) << name;
      offset += want.size();
    }
  }
}

}  // namespace
}  // namespace swapscope
