// SPDX-License-Identifier: MIT
// Imported torchvision models train on the CPU backend: two iterations each (at 3x64x64 where
// the exported graph allows it), and mobilenet_v2's pool high-water mark equals the analyzer's
// peak to the byte under keep-all, swap-all and recompute-light.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "analysis/network_analysis.h"
#include "importer/onnx_import.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/dataset.h"
#include "runtime/executor.h"

namespace swapscope {
namespace {

const std::string kDir = std::string(SWAPSCOPE_TEST_DATA_DIR) + "/onnx/";

struct TrainCase {
  std::string model;
  std::optional<Shape> input;  ///< nullopt: the exported 3x224x224
  std::int64_t k;
};

std::ostream& operator<<(std::ostream& os, const TrainCase& c) {
  return os << c.model;
}

/// Trains two iterations under swap-all in a budget of the analyzer's peak and 1 MiB for the
/// placement's alignment and fragmentation; the pool's high-water mark is the peak.
void trainTwoIterations(const TrainCase& c) {
  OnnxImportOptions o;
  o.input = c.input;
  const Network net = importOnnxFile(kDir + c.model + ".onnx", o).net;
  const std::int64_t k = c.k;
  const auto costs = computeLayerCosts(net);
  const Policy policy = Policy::SwapAll;
  const std::int64_t peak = planMemory(net, costs, policy).curve.peak(k);
  auto device = rt::createCpuDevice();
  rt::SwapExecutor ex(*device, net, k, makeSwapSet(policy, net, costs), peak + (1 << 20));
  const rt::Dataset data = rt::syntheticDataset(net.sampleShape(), net.classes(), 2 * k, 5);
  for (int it = 0; it < 2; ++it) {
    const rt::IterationRecord rec =
        ex.trainIteration(data.images.data() + it * k * net.sampleShape().numel(),
                          data.labels.data() + it * k, static_cast<std::uint64_t>(it), {});
    EXPECT_TRUE(std::isfinite(rec.loss)) << "iteration " << it;
    EXPECT_GT(rec.loss, 0.0f) << "iteration " << it;
  }
  EXPECT_EQ(ex.poolStats().high_water, peak);
}

class ImportedModelTrains : public ::testing::TestWithParam<TrainCase> {};
TEST_P(ImportedModelTrains, TwoIterationsAtTheAnalyzersPeak) {
  trainTwoIterations(GetParam());
}

/// The models that train at 3x224x224: tens of seconds on two cores (ctest -L slow).
class ImportedModelTrainsSlow : public ::testing::TestWithParam<TrainCase> {};
TEST_P(ImportedModelTrainsSlow, TwoIterationsAtTheAnalyzersPeak) {
  trainTwoIterations(GetParam());
}

const Shape k64{{3, 64, 64}};

INSTANTIATE_TEST_SUITE_P(
    Onnx, ImportedModelTrains,
    ::testing::Values(TrainCase{"resnet50", k64, 1}, TrainCase{"googlenet", k64, 1},
                      TrainCase{"densenet121", k64, 1}, TrainCase{"squeezenet1_0", k64, 1},
                      TrainCase{"mobilenet_v2", k64, 2}, TrainCase{"mobilenet_v3_small", k64, 2},
                      TrainCase{"efficientnet_b0", k64, 2}),
    [](const auto& p) { return p.param.model; });

// alexnet and vgg16 bake their 224-pixel geometry into the graph (the adaptive pooling to 6x6
// and 7x7 exports as a fixed AveragePool), so they train at the exported 3x224x224.
INSTANTIATE_TEST_SUITE_P(Onnx, ImportedModelTrainsSlow,
                         ::testing::Values(TrainCase{"alexnet", std::nullopt, 1},
                                           TrainCase{"vgg16", std::nullopt, 1}),
                         [](const auto& p) { return p.param.model; });

class MobileNetPeak : public ::testing::TestWithParam<Policy> {};

TEST_P(MobileNetPeak, PoolHighWaterEqualsTheAnalyzersPeakAtABudgetOfExactlyIt) {
  OnnxImportOptions o;
  o.input = k64;
  const Network net = importOnnxFile(kDir + "mobilenet_v2.onnx", o).net;
  const std::int64_t k = 2;
  const Policy policy = GetParam();
  const auto costs = computeLayerCosts(net);
  const std::int64_t peak = planMemory(net, costs, policy).curve.peak(k);
  auto device = rt::createCpuDevice();
  rt::ExecutorOptions options;
  options.recompute = makeRecomputeSet(policy, net, costs);
  rt::SwapExecutor ex(*device, net, k, makeSwapSet(policy, net, costs), peak, options);
  const rt::Dataset data = rt::syntheticDataset(net.sampleShape(), net.classes(), k, 3);
  ex.trainIteration(data.images.data(), data.labels.data(), 0, {});
  EXPECT_EQ(ex.poolStats().high_water, peak);
}

INSTANTIATE_TEST_SUITE_P(Onnx, MobileNetPeak,
                         ::testing::Values(Policy::KeepAll, Policy::SwapAll,
                                           Policy::RecomputeLight),
                         [](const auto& p) {
                           std::string s(policyName(p.param));
                           for (char& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });

}  // namespace
}  // namespace swapscope
