// SPDX-License-Identifier: MIT
/// GMAP invariants on every zoo network and policy, and the tiny network's GMAP worked out by hand.
#include "analysis/gmap.h"

#include <gtest/gtest.h>

#include "analysis/memory.h"
#include "analysis/network_analysis.h"
#include "common/error.h"
#include "graph/zoo.h"
#include "tiny_network.h"

namespace swapscope {
namespace {

struct Case {
  std::string model;
  Policy policy;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.model << " " << policyName(c.policy);
}

class GmapInvariants : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    net = std::make_unique<Network>(buildZooModel(GetParam().model));
    costs = computeLayerCosts(*net);
    gmap = buildGmap(*net, costs, makeSwapSet(GetParam().policy, *net, costs),
                     makeRecomputeSet(GetParam().policy, *net, costs));
  }
  std::unique_ptr<Network> net;
  std::vector<LayerCost> costs;
  Gmap gmap;
};

TEST_P(GmapInvariants, EveryAllocateHasOneLaterRelease) {
  std::vector<int> state(gmap.buffers.size(), 0);  // 0 never, 1 live, 2 released
  std::vector<int> allocations(gmap.buffers.size(), 0), remakes(gmap.buffers.size(), 0);
  for (const GmapOp& op : gmap.ops) {
    if (op.kind == GmapOpKind::Recompute) {
      ASSERT_EQ(state[op.buffer], 1) << gmap.buffers[op.buffer].name << " re-made while free";
      ++remakes[op.buffer];
    }
    if (op.kind == GmapOpKind::Allocate) {
      ASSERT_NE(state[op.buffer], 1) << gmap.buffers[op.buffer].name << " allocated twice";
      state[op.buffer] = 1;
      ++allocations[op.buffer];
    } else if (op.kind == GmapOpKind::Release) {
      ASSERT_EQ(state[op.buffer], 1) << gmap.buffers[op.buffer].name << " released while free";
      state[op.buffer] = 2;
    }
  }
  for (std::size_t b = 0; b < gmap.buffers.size(); ++b) {
    EXPECT_EQ(state[b], 2) << gmap.buffers[b].name << " is never released";
    // A swapped feature map is allocated twice: forward, then again for its prefetch; every
    // re-make in backward has its own allocation; a recomputed FM is re-made exactly once.
    const GmapBuffer& buf = gmap.buffers[b];
    const bool swapped = buf.kind == BufferKind::FeatureMap && gmap.swapped[buf.layer];
    EXPECT_EQ(allocations[b], (swapped ? 2 : 1) + remakes[b]) << buf.name;
    if (buf.kind == BufferKind::FeatureMap && gmap.recomputed[buf.layer]) {
      EXPECT_EQ(remakes[b], 1) << buf.name;
      EXPECT_FALSE(swapped) << buf.name;
    }
  }
}

TEST_P(GmapInvariants, StepsAreOrderedAndComputeOncePerStep) {
  int lastStep = 0;
  int computes = 0;
  for (const GmapOp& op : gmap.ops) {
    ASSERT_GE(op.step, lastStep);
    lastStep = op.step;
    if (op.kind == GmapOpKind::Compute) {
      ++computes;
      EXPECT_EQ(op.step, computes);
    }
  }
  EXPECT_EQ(computes, gmap.steps());
  EXPECT_EQ(gmap.forward_steps, net->size() - 1);
  EXPECT_EQ(lastStep, gmap.steps() + 1);
  // Backward steps visit the layers in reverse.
  for (int s = 1; s <= gmap.forward_steps; ++s) {
    EXPECT_EQ(gmap.step_layer[s], gmap.step_layer[gmap.steps() + 1 - s]);
  }
}

TEST_P(GmapInvariants, SizesAreExactlyLinearInK) {
  for (const GmapBuffer& b : gmap.buffers) {
    if (b.kind == BufferKind::FeatureMap) {
      // An FM holds k * numel(shape) floats, whatever k is.
      for (std::int64_t k : {1, 3, 64, 1000}) {
        EXPECT_EQ(b.size.at(k), k * net->outputShape(b.layer).numel() * 4) << b.name;
      }
    } else if (isPersistent(b.kind)) {
      EXPECT_EQ(b.size.per_sample, 0) << b.name;
    }
  }
  // The curve at any k equals a replay of the GMAP with sizes evaluated at that k.
  const MemoryCurve curve = computeMemoryCurve(gmap);
  for (std::int64_t k : {1, 5, 77}) {
    std::int64_t now = 0;
    for (const GmapOp& op : gmap.ops) {
      if (op.kind == GmapOpKind::Allocate) now += gmap.buffers[op.buffer].size.at(k);
      if (op.kind == GmapOpKind::Release) now -= gmap.buffers[op.buffer].size.at(k);
      if (op.kind == GmapOpKind::Compute) {
        ASSERT_EQ(curve.resident[op.step].at(k), now);
      }
    }
    EXPECT_EQ(now, 0);
  }
}

TEST_P(GmapInvariants, EachOffloadPrecedesItsPrefetch) {
  std::vector<int> offloadStep(gmap.buffers.size(), -1);
  std::vector<int> prefetches(gmap.buffers.size(), 0);
  for (const GmapOp& op : gmap.ops) {
    if (op.kind == GmapOpKind::Offload) offloadStep[op.buffer] = op.step;
    if (op.kind != GmapOpKind::Prefetch) continue;
    ++prefetches[op.buffer];
    const GmapBuffer& b = gmap.buffers[op.buffer];
    const bool isMinibatch = b.layer == net->inputLayer() || b.kind == BufferKind::Labels;
    if (isMinibatch && op.step == 1) continue;   // the minibatch arrives from the host
    if (b.layer == net->inputLayer()) continue;  // re-read from its host copy
    ASSERT_GE(offloadStep[op.buffer], 1) << b.name << " prefetched without an offload";
    EXPECT_LT(offloadStep[op.buffer], op.step) << b.name;
    EXPECT_TRUE(gmap.isBackwardStep(op.step)) << b.name;
  }
  for (std::size_t b = 0; b < gmap.buffers.size(); ++b) {
    if (offloadStep[b] >= 0) {
      EXPECT_EQ(prefetches[b], 1) << gmap.buffers[b].name;
    }
  }
}

TEST_P(GmapInvariants, EverythingAStepTouchesIsResidentWhenItComputes) {
  std::vector<bool> live(gmap.buffers.size(), false);
  for (const GmapOp& op : gmap.ops) {
    if (op.kind == GmapOpKind::Allocate) live[op.buffer] = true;
    if (op.kind == GmapOpKind::Release) live[op.buffer] = false;
    if (op.kind == GmapOpKind::Recompute) {
      // A re-made FM's inputs and its layer's saved state are resident when it runs again.
      const int layer = gmap.buffers[op.buffer].layer;
      ASSERT_TRUE(live[op.buffer]) << gmap.buffers[op.buffer].name;
      ASSERT_TRUE(gmap.isBackwardStep(op.step)) << gmap.buffers[op.buffer].name;
      for (int src : net->inputsOf(layer)) {
        for (std::size_t b = 0; b < gmap.buffers.size(); ++b) {
          if (gmap.buffers[b].layer == src && (gmap.buffers[b].kind == BufferKind::FeatureMap)) {
            ASSERT_TRUE(live[b]) << "re-making " << gmap.buffers[op.buffer].name << " at step "
                                 << op.step << " reads " << gmap.buffers[b].name
                                 << ", which is not resident";
          }
        }
      }
      for (std::size_t b = 0; b < gmap.buffers.size(); ++b) {
        if (gmap.buffers[b].layer == layer && gmap.buffers[b].kind == BufferKind::Saved) {
          ASSERT_TRUE(live[b]) << gmap.buffers[b].name;
        }
      }
    }
    if (op.kind != GmapOpKind::Compute) continue;
    for (int b : gmap.step_touches[op.step]) {
      ASSERT_TRUE(live[b]) << "step " << op.step << " touches " << gmap.buffers[b].name
                           << ", which is not resident";
    }
  }
}

std::vector<Case> allCases() {
  std::vector<Case> cases;
  for (const ZooEntry& e : zooEntries()) {
    for (Policy p : {Policy::KeepAll, Policy::SwapAll, Policy::VdnnConv, Policy::RecomputeLight}) {
      cases.push_back({e.name, p});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(EveryZooModel, GmapInvariants, ::testing::ValuesIn(allCases()),
                         [](const auto& p) {
                           std::string n =
                               p.param.model + "_" + std::string(policyName(p.param.policy));
                           for (char& c : n)
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return n;
                         });

TEST(GmapPolicies, SwapAllPeakIsAtMostKeepAllAndVdnnInBetween) {
  for (const ZooEntry& e : zooEntries()) {
    const Network net = buildZooModel(e.name);
    const NetworkAnalysis a = analyzeNetwork(net);
    const MemoryPlan vdnn = planMemory(net, a.costs, makeSwapSet(Policy::VdnnConv, net, a.costs));
    for (std::int64_t k : {1, 8, 256}) {
      EXPECT_LE(a.swap_all.curve.peak(k), a.keep_all.curve.peak(k)) << e.name << " k=" << k;
      EXPECT_LE(vdnn.curve.peak(k), a.keep_all.curve.peak(k)) << e.name << " k=" << k;
      EXPECT_LE(a.lower_bound, a.swap_all.curve.peak(1)) << e.name;
    }
    // Swapping pays off for deep networks: the layer-wise peak is far below keep-all's.
    if (e.name == "resnet152") {
      EXPECT_LT(a.swap_all.curve.peak(32) * 3, a.keep_all.curve.peak(32));
    }
  }
}

// --- the tiny network, by hand ------------------------------------------------------------------
// Per sample: data 64 B, c 128 B, r 128 B, f 128 B, fc 12 B, labels 4 B; the loss value is 4 B.
// Persistent: 117 parameters x 3 (weights, gradients, momentum) x 4 B = 1404 B.
// Steps: 1 c, 2 r, 3 f, 4 fc, 5 loss forward; 6 loss, 7 fc, 8 f, 9 r, 10 c backward.

TEST(GmapTiny, KeepAllByHand) {
  const Network net = testing::tinyNetwork();
  const auto costs = computeLayerCosts(net);
  const Gmap gmap = buildGmap(net, costs, makeSwapSet(Policy::KeepAll, net, costs));
  const MemoryCurve curve = computeMemoryCurve(gmap);
  EXPECT_EQ(curve.persistent, (LinearBytes{1404, 0}));
  // Resident while each step computes (per-sample part; fixed part 1404, +4 at the loss).
  const std::int64_t perSample[] = {0, 196, 324, 324, 336, 336, 348, 460, 448, 448, 192};
  for (int s = 1; s <= 10; ++s) {
    EXPECT_EQ(curve.resident[s], (LinearBytes{s == 5 ? 1408 : 1404, perSample[s]})) << "step " << s;
  }
  EXPECT_EQ(curve.peak(10), 1404 + 4600);
  EXPECT_EQ(curve.peakStep(10), 7);
}

TEST(GmapTiny, SwapAllByHand) {
  const Network net = testing::tinyNetwork();
  const auto costs = computeLayerCosts(net);
  const SwapSet swapAll = makeSwapSet(Policy::SwapAll, net, costs);
  // Swappable: every FM some backward step reads: data (conv dW), r (relu), f (fc dW), fc (loss).
  EXPECT_EQ(swapAll, (SwapSet{true, false, true, true, true, false}));
  const Gmap gmap = buildGmap(net, costs, swapAll);
  const MemoryCurve curve = computeMemoryCurve(gmap);
  const std::int64_t perSample[] = {0, 196, 260, 260, 144, 16, 28, 268, 256, 384, 192};
  for (int s = 1; s <= 10; ++s) {
    EXPECT_EQ(curve.resident[s], (LinearBytes{s == 5 ? 1408 : 1404, perSample[s]})) << "step " << s;
  }
  EXPECT_EQ(memoryLowerBound(gmap), 1404 + 384);  // step 9 reads r and r.grad, writes c.grad

  // The ops of step 2 (relu forward): allocate its output, compute, offload it, release c.
  std::vector<std::pair<GmapOpKind, std::string>> step2;
  for (const GmapOp& op : gmap.ops) {
    if (op.step == 2)
      step2.emplace_back(op.kind, op.buffer < 0 ? "" : gmap.buffers[op.buffer].name);
  }
  const std::vector<std::pair<GmapOpKind, std::string>> expected{{GmapOpKind::Allocate, "r"},
                                                                 {GmapOpKind::Compute, ""},
                                                                 {GmapOpKind::Offload, "r"},
                                                                 {GmapOpKind::Release, "c"}};
  EXPECT_EQ(step2, expected);
}

TEST(GmapTiny, RecomputeLightByHand) {
  const Network net = testing::tinyNetwork();
  const auto costs = computeLayerCosts(net);
  // f (flatten, light) is re-made from r, which backward steps read; r itself would need c, which
  // only the convolution (not light) makes, so r is swapped like data and fc.
  const SwapSet swapped = makeSwapSet(Policy::RecomputeLight, net, costs);
  const RecomputeSet recomputed = makeRecomputeSet(Policy::RecomputeLight, net, costs);
  EXPECT_EQ(swapped, (SwapSet{true, false, true, false, true, false}));
  EXPECT_EQ(recomputed, (RecomputeSet{false, false, false, true, false, false}));
  const Gmap gmap = buildGmap(net, costs, swapped, recomputed);
  const MemoryCurve curve = computeMemoryCurve(gmap);
  // As swap-all's through step 6. Step 7 (fc backward) re-makes f (128) from r, whose prefetch
  // moves from step 9 to step 7 (+128 over swap-all's 268); r stays through step 8 (+128 over
  // 256); steps 9 and 10 are swap-all's again.
  const std::int64_t perSample[] = {0, 196, 260, 260, 144, 16, 28, 396, 384, 384, 192};
  for (int s = 1; s <= 10; ++s) {
    EXPECT_EQ(curve.resident[s], (LinearBytes{s == 5 ? 1408 : 1404, perSample[s]})) << "step " << s;
  }
  EXPECT_EQ(curve.peakStep(10), 7);
  std::vector<std::pair<GmapOpKind, std::string>> step7;
  for (const GmapOp& op : gmap.ops) {
    if (op.step == 7)
      step7.emplace_back(op.kind, op.buffer < 0 ? "" : gmap.buffers[op.buffer].name);
  }
  const std::vector<std::pair<GmapOpKind, std::string>> expected{
      {GmapOpKind::Allocate, "r"},      {GmapOpKind::Prefetch, "r"},
      {GmapOpKind::Allocate, "f"},      {GmapOpKind::Recompute, "f"},
      {GmapOpKind::Allocate, "f.grad"}, {GmapOpKind::Compute, ""},
      {GmapOpKind::Release, "fc.grad"}, {GmapOpKind::Release, "f"}};
  EXPECT_EQ(step7, expected);
  // In forward, f goes after its last reader (fc, step 4) without an offload.
  for (const GmapOp& op : gmap.ops) {
    if (op.buffer >= 0 && gmap.buffers[op.buffer].name == "f") {
      EXPECT_NE(op.kind, GmapOpKind::Offload);
      EXPECT_NE(op.kind, GmapOpKind::Prefetch);
    }
  }
}

TEST(GmapPolicies, AnFmReMadeOnlyToReMakeAnotherGoesBeforeTheGradientsTakeItsMemory) {
  // fmnist-cnn under recompute-light: pool1's backward step (25) re-makes relu1 from bn1, which
  // it re-makes from the prefetched conv1. bn1 is read by no backward step (relu's backward reads
  // its output, batch norm's its input), so it goes once the re-makes are done: before relu1's
  // gradient, of bn1's own size, is allocated for the compute.
  const Network net = buildZooModel("fmnist-cnn");
  const auto costs = computeLayerCosts(net);
  const Gmap gmap = buildGmap(net, costs, makeSwapSet(Policy::RecomputeLight, net, costs),
                              makeRecomputeSet(Policy::RecomputeLight, net, costs));
  std::vector<std::pair<GmapOpKind, std::string>> step25;
  int step = 0;
  for (const GmapOp& op : gmap.ops) {
    if (op.buffer < 0 && op.kind == GmapOpKind::Compute &&
        net.layer(gmap.step_layer[op.step]).name == "pool1" && gmap.isBackwardStep(op.step)) {
      step = op.step;
    }
  }
  ASSERT_GT(step, 0);
  for (const GmapOp& op : gmap.ops) {
    if (op.step == step)
      step25.emplace_back(op.kind, op.buffer < 0 ? "" : gmap.buffers[op.buffer].name);
  }
  const std::vector<std::pair<GmapOpKind, std::string>> expected{
      {GmapOpKind::Allocate, "conv1"}, {GmapOpKind::Prefetch, "conv1"},
      {GmapOpKind::Allocate, "bn1"},   {GmapOpKind::Allocate, "relu1"},
      {GmapOpKind::Recompute, "bn1"},  {GmapOpKind::Recompute, "relu1"},
      {GmapOpKind::Release, "bn1"},    {GmapOpKind::Allocate, "relu1.grad"},
      {GmapOpKind::Compute, ""},       {GmapOpKind::Release, "pool1.grad"},
      {GmapOpKind::Release, "pool1"}};
  EXPECT_EQ(step25, expected);
  // The step's compute does not touch bn1, and the policy needs less than keep-all at k = 64
  // (with bn1 kept to the step's end it needed 6,422,528 bytes more, and more than keep-all).
  const auto& touched = gmap.step_touches[static_cast<std::size_t>(step)];
  for (int b : touched)
    EXPECT_NE(gmap.buffers[b].name, "bn1");
  const MemoryCurve curve = computeMemoryCurve(gmap);
  const NetworkAnalysis a = analyzeNetwork(net);
  EXPECT_LT(curve.peak(64), a.keep_all.curve.peak(64));
  // At the compute: conv1 (kept for bn1's backward), relu1 and its gradient (32 x 28 x 28
  // floats a sample each), pool1 and its gradient (32 x 14 x 14), bn1's saved statistics (2 x 32
  // floats), and the parameters' three copies.
  const std::int64_t big = 64 * 32 * 28 * 28 * 4, small = 64 * 32 * 14 * 14 * 4, saved = 2 * 32 * 4;
  EXPECT_EQ(curve.resident[static_cast<std::size_t>(step)].at(64),
            curve.persistent.at(64) + 3 * big + 2 * small + saved);
}

TEST(GmapTiny, RecomputeThatCannotWorkIsRefusedNamingTheFm) {
  const Network net = testing::tinyNetwork();
  const auto costs = computeLayerCosts(net);
  const SwapSet none(net.size(), false);
  auto refusal = [&](const SwapSet& s, const RecomputeSet& r) -> std::string {
    try {
      buildGmap(net, costs, s, r);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      return e.what();
    }
    return "";
  };
  // r needs c again, and only the convolution makes c.
  EXPECT_NE(refusal(none, {false, false, true, false, false, false})
                .find("'r' cannot be recomputed: 'c' (conv2d) would run again"),
            std::string::npos);
  // c is read by no backward step: nothing to re-make.
  EXPECT_NE(refusal(none, {false, true, false, false, false, false})
                .find("'c' is not read by any backward step"),
            std::string::npos);
  // Both swapped and recomputed.
  EXPECT_NE(
      refusal({false, false, false, true, false, false}, {false, false, false, true, false, false})
          .find("'f' cannot be both swapped and recomputed"),
      std::string::npos);
}

TEST(GmapTiny, ExplicitSwapSetAndWorkspace) {
  const Network net = testing::tinyNetwork();
  const auto costs = computeLayerCosts(net);
  const SwapSet set = swapSetFromNames(net, costs, {"r"});
  std::vector<LinearBytes> workspace(12);
  workspace[1] = {1000, 50};  // conv forward
  const Gmap gmap = buildGmap(net, costs, set, &workspace);
  const MemoryCurve curve = computeMemoryCurve(gmap);
  EXPECT_EQ(curve.resident[1], (LinearBytes{1404 + 1000, 196 + 50}));
  // r goes out after step 2 and is gone after step 3: keep-all's 324 at step 3 drops by... nothing
  // yet (r is read by f); at step 4 r is gone: 336 - 128.
  EXPECT_EQ(curve.resident[4].per_sample, 336 - 128);
  EXPECT_EQ(curve.resident[9].per_sample, 448);  // prefetched back for its backward step
  EXPECT_THROW(swapSetFromNames(net, costs, {"c"}), Error);
  EXPECT_THROW(swapSetFromNames(net, costs, {"nope"}), Error);
}

}  // namespace
}  // namespace swapscope
