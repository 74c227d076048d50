// SPDX-License-Identifier: MIT
// The kernel workspaces a CUDA profile recorded (meta 'kernel_choices_by_k'): fitted per layer and
// direction, refused where damaged, and counted by the planner's pool as the executor counts
// them.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "analysis/network_analysis.h"
#include "collectors/profiler.h"
#include "graph/zoo.h"
#include "perfmodel/planner.h"
#include "runtime/dataset.h"
#include "runtime/executor.h"
#include "runtime/wrapped_cpu_device.h"
#include "sample_runs.h"
#include "store/run_db.h"

namespace swapscope::perf {
namespace {

using Points = std::vector<std::pair<std::int64_t, std::int64_t>>;

/// The fmnist-cnn sample profile with the CUDA backend's pool metas (aligned to 256, buffers
/// padded to 16, workspaces to 256).
store::RunData cudaShapedSample() {
  store::RunData run = store::RunReader(swapscope::testing::fmnistRun()).load();
  run.meta.extra["pool_alignment"] = "256";
  run.meta.extra["pool_padding"] = "16";
  run.meta.extra["workspace_padding"] = "256";
  return run;
}

/// The meta 'kernel_choices_by_k' of `layers` each holding `forward` and `backward` (as
/// functions of k) at each of `ks`.
std::string choicesByK(const std::vector<std::string>& layers, const std::vector<std::int64_t>& ks,
                       const std::function<std::int64_t(std::int64_t)>& forward,
                       const std::function<std::int64_t(std::int64_t)>& backward) {
  nlohmann::json a = nlohmann::json::array();
  for (const std::int64_t k : ks) {
    nlohmann::json held = nlohmann::json::array();
    for (const std::string& layer : layers) {
      held.push_back({{"layer", layer},
                      {"algorithms", "fwd=1 bwd_data=1 bwd_filter=1"},
                      {"forward_workspace", forward(k)},
                      {"backward_workspace", backward(k)}});
    }
    a.push_back({{"k", k}, {"layers", held}});
  }
  return a.dump();
}
std::string choicesByK(const std::string& layer, const std::vector<std::int64_t>& ks,
                       const std::function<std::int64_t(std::int64_t)>& forward,
                       const std::function<std::int64_t(std::int64_t)>& backward) {
  return choicesByK(std::vector<std::string>{layer}, ks, forward, backward);
}

/// `net`'s pool GMAP as the CUDA backend pads it, without workspaces.
MemoryCurve paddedCurve(const Network& net, Policy policy) {
  const std::vector<LayerCost> costs = computeLayerCosts(net);
  return computeMemoryCurve(
      padGmap(planMemory(net, costs, makeSwapSet(policy, net, costs)).gmap, {16, 256}));
}

PlanResult planAt(const Planner& planner, Policy policy, std::int64_t budget,
                  std::int64_t batch = 0) {
  PlanRequest req;
  req.policy = policy;
  req.budget = budget;
  req.batch = batch;
  req.threads = 1;
  return planner.plan(req);
}

TEST(WorkspaceLine, IsExactOnBytesAffineInKAndNeverBelowARecordedValue) {
  EXPECT_EQ(workspaceLine({}), (LinearBytes{}));
  // One k: of the whole-byte lines through it without excess, the steeper.
  EXPECT_EQ(workspaceLine({{8, 4096}}), (LinearBytes{0, 512}));
  EXPECT_EQ(workspaceLine({{8, 4097}}), (LinearBytes{1, 512}));
  EXPECT_EQ(workspaceLine({{2, 6144}, {4, 8192}, {8, 12288}}), (LinearBytes{4096, 1024}));
  EXPECT_EQ(workspaceLine({{1, 0}, {4, 0}}), (LinearBytes{}));
  // An algorithm that changes with k: the line clears every point and does not fall.
  const Points changing{{1, 0}, {2, 0}, {4, 40960}, {8, 40960}, {16, 1024}};
  const LinearBytes line = workspaceLine(changing);
  EXPECT_GE(line.per_sample, 0);
  EXPECT_GE(line.fixed, 0);
  for (const auto& [k, w] : changing)
    EXPECT_GE(line.at(k), w) << "k = " << k;
  EXPECT_EQ(line, (LinearBytes{40960, 0}));  // the least excess over the five points
  // A slope that is not whole bytes (1.5): of the whole-byte lines above both points, 2 + k
  // exceeds them least (by 1 in all; 0 + 2k and 6 + 0k by 3).
  EXPECT_EQ(workspaceLine({{2, 3}, {4, 6}}), (LinearBytes{2, 1}));
}

TEST(Fit, ReadsTheRecordedWorkspacesPerLayerAndDirection) {
  store::RunData run = cudaShapedSample();
  EXPECT_EQ(PerfModel::fit(run).workspaces(), nullptr);
  EXPECT_EQ(PerfModel::fit(run).poolPadding(), (PoolPadding{16, 256}));
  run.meta.extra["kernel_choices_by_k"] = choicesByK(
      "conv2", {12, 24, 47}, [](std::int64_t k) { return 512 + 2048 * k; },
      [](std::int64_t) { return 4096; });
  const PerfModel model = PerfModel::fit(run);
  ASSERT_NE(model.workspaces(), nullptr);
  EXPECT_EQ(model.poolPadding().workspaces, model.workspaces());
  const KernelWorkspaces& ws = *model.workspaces();
  EXPECT_EQ(ws.network_hash, run.network.structure_hash);
  for (const auto& l : run.layers) {
    const auto i = static_cast<std::size_t>(l.id);
    const bool held = l.name == "conv2";
    EXPECT_EQ(ws.forward.at(i), (held ? LinearBytes{512, 2048} : LinearBytes{}));
    EXPECT_EQ(ws.backward.at(i), (held ? LinearBytes{4096, 0} : LinearBytes{}));
  }
  // Workspaces of none: nothing to count.
  run.meta.extra["kernel_choices_by_k"] = choicesByK(
      "conv2", {12, 24}, [](std::int64_t) { return 0; }, [](std::int64_t) { return 0; });
  EXPECT_EQ(PerfModel::fit(run).workspaces(), nullptr);
}

TEST(Fit, ADamagedKernelChoicesMetaIsRefusedNamingTheKeyAndTheValue) {
  const auto one = [](std::int64_t) { return std::int64_t{256}; };
  const std::vector<std::pair<std::string, std::string>> cases{
      {"{oops", "meta 'kernel_choices_by_k' is '{oops', not a JSON array"},
      {"{\"k\": 8}", "meta 'kernel_choices_by_k' is '{\"k\": 8}', not a JSON array"},
      {choicesByK(
           "conv2", {8}, [](std::int64_t) { return -5; }, one),
       "meta 'kernel_choices_by_k': at k = 8, layer 'conv2': forward_workspace is -5, not a "
       "number of bytes"},
      {choicesByK("conv99", {8}, one, one),
       "meta 'kernel_choices_by_k': at k = 8, layer 'conv99' is not a layer of the profiled "
       "network"},
      {choicesByK("conv2", {0}, one, one), "meta 'kernel_choices_by_k': k 0 is not a minibatch"},
      {choicesByK("conv2", {8, 8}, one, one),
       "meta 'kernel_choices_by_k': k = 8 is recorded twice"},
      {"[{\"k\": 8, \"layers\": [{\"layer\": \"conv2\", \"forward_workspace\": 1}]}]",
       "layer 'conv2': backward_workspace is missing"},
      {"[{\"k\": 8, \"layers\": [{\"layer\": \"conv2\", \"forward_workspace\": \"1\", "
       "\"backward_workspace\": 0}]}]",
       "layer 'conv2': forward_workspace is \"1\", not a number of bytes"},
  };
  for (const auto& [value, message] : cases) {
    store::RunData run = cudaShapedSample();
    run.meta.extra["kernel_choices_by_k"] = value;
    try {
      PerfModel::fit(run);
      ADD_FAILURE() << "accepted " << value;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_EQ(std::string(e.what()).rfind("'" + run.path + "': ", 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

// The planner's peak at k grows by the (padded) workspace of the peak step's layer, and not at
// all by a workspace that is released before the peak step; another network gets none.
TEST(PlannerWorkspaces, ThePeakGrowsByTheWorkspaceAliveAtThePeakStep) {
  const Network net = buildZooModel("fmnist-cnn");
  const std::int64_t k = 32;
  const MemoryCurve bare = paddedCurve(net, Policy::SwapAll);
  const std::vector<LayerCost> costs = computeLayerCosts(net);
  const Gmap gmap = planMemory(net, costs, makeSwapSet(Policy::SwapAll, net, costs)).gmap;
  const int peakStep = bare.peakStep(k);
  const bool peakBackward = gmap.isBackwardStep(peakStep);
  const std::string peakLayer = net.layer(gmap.step_layer[static_cast<std::size_t>(peakStep)]).name;
  store::RunData run = cudaShapedSample();
  const PerfModel bareModel = PerfModel::fit(run);
  const Planner without(bareModel, net);
  const std::int64_t budget = std::int64_t{1} << 30;
  const PlanResult a = planAt(without, Policy::SwapAll, budget, k);
  ASSERT_TRUE(a.trainable);
  EXPECT_EQ(a.best.peak, bare.peak(k));

  // 1000 + 512 k bytes in the peak step: padded to 1024 + 512 k.
  const auto grows = [](std::int64_t n) { return 1000 + 512 * n; };
  const auto none = [](std::int64_t) { return std::int64_t{0}; };
  run.meta.extra["kernel_choices_by_k"] = choicesByK(
      peakLayer, {12, 24, 47, 63, 94}, peakBackward ? none : grows, peakBackward ? grows : none);
  const PerfModel model = PerfModel::fit(run);
  const Planner with(model, net);
  const PlanResult b = planAt(with, Policy::SwapAll, budget, k);
  ASSERT_TRUE(b.trainable);
  EXPECT_EQ(b.best.peak, bare.peak(k) + 1024 + 512 * k);

  // A small workspace in the layer's other step, where less is resident than at the peak.
  int otherStep = 0;
  for (int s = 1; s <= gmap.steps(); ++s) {
    if (s != peakStep && net.layer(gmap.step_layer[static_cast<std::size_t>(s)]).name == peakLayer)
      otherStep = s;
  }
  ASSERT_GT(otherStep, 0);
  ASSERT_LT(bare.resident[static_cast<std::size_t>(otherStep)].at(k) + 256, bare.peak(k));
  const auto small = [](std::int64_t) { return std::int64_t{256}; };
  run.meta.extra["kernel_choices_by_k"] =
      choicesByK(peakLayer, {12, 24, 47}, peakBackward ? small : none, peakBackward ? none : small);
  const PlanResult c = planAt(Planner(PerfModel::fit(run), net), Policy::SwapAll, budget, k);
  ASSERT_TRUE(c.trainable);
  EXPECT_EQ(c.best.peak, bare.peak(k));

  // Another network (transferred curves) holds none of the profiled network's workspaces.
  const Network other = buildZooModel("resnet20");
  EXPECT_EQ(planAt(Planner(model, other), Policy::SwapAll, budget, k).best.peak,
            paddedCurve(other, Policy::SwapAll).peak(k));
}

// A budget that holds keep-all's padded peak at k without the workspaces: the plan at k is
// refused once they are counted, and k_max falls.
TEST(PlannerWorkspaces, ABudgetThatFitsOnlyWithoutTheWorkspacesLowersK) {
  const Network net = buildZooModel("fmnist-cnn");
  const std::int64_t k = 40;
  const std::int64_t budget = paddedCurve(net, Policy::KeepAll).peak(k);
  store::RunData run = cudaShapedSample();
  const PlanResult a = planAt(Planner(PerfModel::fit(run), net), Policy::KeepAll, budget, k);
  ASSERT_TRUE(a.trainable);
  const PlanResult aMax = planAt(Planner(PerfModel::fit(run), net), Policy::KeepAll, budget);
  ASSERT_TRUE(aMax.trainable);
  EXPECT_GE(aMax.k_max, k);

  // Every layer holds a workspace in both steps: so does the peak step.
  std::vector<std::string> layers;
  for (int i = 0; i < net.size(); ++i) {
    if (i != net.inputLayer()) layers.push_back(net.layer(i).name);
  }
  run.meta.extra["kernel_choices_by_k"] = choicesByK(
      layers, {12, 24, 47, 63, 94}, [](std::int64_t n) { return 256 * n; },
      [](std::int64_t n) { return 256 * n; });
  const PerfModel model = PerfModel::fit(run);
  const Planner with(model, net);
  const PlanResult b = planAt(with, Policy::KeepAll, budget, k);
  EXPECT_FALSE(b.trainable);
  const PlanResult bMax = planAt(with, Policy::KeepAll, budget);
  ASSERT_TRUE(bMax.trainable);
  EXPECT_LT(bMax.k_max, k);
  EXPECT_LT(bMax.k_max, aMax.k_max);
  EXPECT_LE(bMax.best.peak, budget);
}

/// The CPU backend with the CUDA backend's pool, whose convolutions hold a workspace in both
/// steps that grows with k.
class CudaShapedWorkspaceDevice final : public rt::WrappedCpuDevice {
 public:
  CudaShapedWorkspaceDevice() : WrappedCpuDevice({16, 256}, 256) {}
  std::unique_ptr<rt::LayerKernel> createKernel(const Network& net,
                                                const std::vector<LayerCost>& costs, int layer,
                                                std::int64_t k) override {
    auto kernel = WrappedCpuDevice::createKernel(net, costs, layer, k);
    if (net.layer(layer).kind != LayerKind::Conv2d) return kernel;
    return std::make_unique<rt::WorkspaceKernel>(std::move(kernel), 1000 + 2560 * k,
                                                 1000 + 2560 * k);
  }
};

// The executor's own record of its kernels at three ks is the profile's meta; the planner's
// plans at another k then have the executor's predicted peak, reuse delay and moved prefetches,
// and the pool's high-water mark of a trained iteration is the planner's peak.
TEST(PlannerWorkspaces, ThePlannersPeakIsTheExecutorsPoolHighWaterMark) {
  const Network net = buildZooModel("fmnist-cnn");
  const std::vector<LayerCost> costs = computeLayerCosts(net);
  CudaShapedWorkspaceDevice device;
  nlohmann::ordered_json byK = nlohmann::ordered_json::array();
  for (const std::int64_t k : {4, 8, 12}) {
    const SwapSet swapAll = makeSwapSet(Policy::SwapAll, net, costs);
    const rt::SwapExecutor ex(device, net, k, swapAll, std::int64_t{1} << 30);
    const nlohmann::ordered_json layers = collect::kernelChoicesJson(net, ex);  // as a profile
    ASSERT_FALSE(layers.empty());
    byK.push_back({{"k", k}, {"layers", layers}});
  }
  store::RunData run = cudaShapedSample();
  run.meta.extra["kernel_choices_by_k"] = byK.dump();
  const PerfModel model = PerfModel::fit(run);
  const Planner planner(model, net);
  const std::int64_t k = 16;
  const std::int64_t swapAllPeak = paddedCurve(net, Policy::SwapAll).peak(k);
  int planned = 0;
  for (const Policy policy : {Policy::SwapAll, Policy::VdnnConv, Policy::AccUdnn}) {
    for (const double f : {1.0, 1.05, 1.2, 2.0}) {
      const auto budget = static_cast<std::int64_t>(f * static_cast<double>(swapAllPeak));
      SCOPED_TRACE(std::string(policyName(policy)) + " at " + std::to_string(budget));
      const PlanResult r = planAt(planner, policy, budget, k);
      if (!r.trainable) continue;
      ++planned;
      rt::SwapExecutor ex(device, net, k, r.best.swapped, budget);
      EXPECT_EQ(r.best.peak, ex.predictedPeak());
      EXPECT_EQ(r.best.reuse_delay, ex.reuseDelay());
      EXPECT_EQ(r.best.prefetches_moved, ex.prefetchesMoved());
      const rt::Dataset data = rt::syntheticDataset(net.sampleShape(), net.classes(), k, 5);
      ex.trainIteration(data.images.data(), data.labels.data(), 0, {});
      EXPECT_EQ(ex.poolStats().high_water, r.best.peak);
    }
  }
  EXPECT_GE(planned, 6);
}

}  // namespace
}  // namespace swapscope::perf
