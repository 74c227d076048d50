// SPDX-License-Identifier: MIT
/// Counts too large for 64 bits: parameters, MACs, FLOPs and bytes of a layer, the network's
/// totals, the memory curve at a huge minibatch. Each is Error(BadInput) naming the layer (or the
/// buffer or step), never a wrapped number.
#include <limits>
#include <numeric>

#include <gtest/gtest.h>

#include "analysis/layer_cost.h"
#include "analysis/memory.h"
#include "analysis/network_analysis.h"
#include "common/error.h"
#include "graph/builder.h"
#include "graph/shape_inference.h"

namespace swapscope {
namespace {

constexpr std::int64_t kMax32 = 2147483647;

template <typename F>
std::string badInput(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

void expectContains(const std::string& msg, const std::string& part) {
  EXPECT_NE(msg.find(part), std::string::npos) << "message: " << msg << "\nexpected: " << part;
}

/// data [C,H,W] -> flatten -> fc: linear -> loss.
Network flatLinear(Shape input, std::int64_t outFeatures) {
  NetworkBuilder b("huge");
  auto x = b.input("data", std::move(input));
  x = b.flatten("flat", x);
  x = b.linear("fc", x, outFeatures);
  b.loss("loss", x);
  return std::move(b).build();
}

TEST(Overflow, TheInputOfTheReviewIsRefusedWhenTheNetworkIsBuilt) {
  // [8589934592] into 2147483648 outputs: 2^64 weights, once counted as 2,147,483,648.
  expectContains(badInput([] { flatLinear(Shape{{8589934592}}, 2147483648); }),
                 "layer 'data' (input): field 'shape' must be at most 2147483647, got "
                 "[8589934592]");
  expectContains(badInput([] { flatLinear(Shape{{16}}, 2147483648); }),
                 "layer 'fc' (linear): field 'out_features' must be at most 2147483647, got "
                 "2147483648");
}

TEST(Overflow, LinearInputsBeyondThirtyTwoBitsAreRefusedWhenTheNetworkIsBuilt) {
  // [2^31 - 1, 2, 2] flattened is 4 x (2^31 - 1) features, which no network file can state as
  // in_features and no layer library indexes; with 2^31 - 1 outputs the weights would also pass
  // 2^63. The builder refuses the flatten before any count is taken, so a linear layer's
  // parameters always fit in 64 bits.
  expectContains(badInput([] { flatLinear(Shape{{kMax32, 2, 2}}, kMax32); }),
                 "layer 'flat' (flatten): output [8589934588] has a dimension above 2147483647");
}

TEST(Overflow, ConvolutionWeightsBeyondSixtyFourBitsNameTheLayer) {
  NetworkBuilder b("wide");
  auto x = b.input("data", Shape{{kMax32, 2, 2}});
  x = b.conv("conv", x, kMax32, 2, 1, 0, /*bias=*/false);  // output [2^31 - 1, 1, 1]
  x = b.flatten("flat", x);
  x = b.linear("fc", x, 2);
  b.loss("loss", x);
  const Network net = std::move(b).build();
  // Weights (2^31 - 1)^2 x 2 x 2 overflow; the MACs are the same product.
  expectContains(badInput([&] { computeLayerCosts(net); }),
                 "layer 'conv' (conv2d): its parameters do not fit in 64-bit integers");
}

TEST(Overflow, TotalsThatOverflowNameTheLayer) {
  // (2^31 - 1)^2 weights: every count of the layer fits (2 x MACs + bias = 2^63 - 2^33 + 2^31
  // + 1), but forward plus backward FLOPs (about 2^64) and the weights' bytes do not.
  const Network net = flatLinear(Shape{{kMax32}}, kMax32);
  expectContains(badInput([&] { computeLayerCosts(net); }),
                 "layer 'fc' (linear): the network's totals up to this layer do not fit in "
                 "64-bit integers");
}

TEST(Overflow, LargeButCountableLayersAreCountedExactly) {
  // 2^31 - 1 features into 1000 outputs: about 2^41 weights, every count exact.
  const Network net = flatLinear(Shape{{kMax32}}, 1000);
  const std::vector<LayerCost> costs = computeLayerCosts(net);
  EXPECT_EQ(costs[2].params, kMax32 * 1000 + 1000);
  EXPECT_EQ(costs[2].fwd_macs, kMax32 * 1000);
  EXPECT_EQ(costs[2].fwd_flops, 2 * kMax32 * 1000 + 1000);
  EXPECT_EQ(sumCosts(costs).params, kMax32 * 1000 + 1000);
}

TEST(Overflow, SumsOfHandMadeCostsAreChecked) {
  std::vector<LayerCost> costs(2);
  costs[0].fwd_flops = costs[1].fwd_flops = std::numeric_limits<std::int64_t>::max() / 2 + 1;
  expectContains(badInput([&] { sumCosts(costs); }), "do not fit in 64-bit integers");
}

TEST(AdaptivePooling, WindowSumsInClosedFormMatchTheWindows) {
  // The forward FLOPs are C x (sum of row extents) x (sum of column extents), summed here window
  // by window with the same start and end rules the kernels use.
  for (std::int64_t in = 1; in <= 24; ++in) {
    for (std::int64_t out = 1; out <= 24; ++out) {
      std::int64_t rows = 0;
      for (std::int64_t i = 0; i < out; ++i)
        rows += adaptiveEnd(i, in, out) - adaptiveStart(i, in, out);
      NetworkBuilder b("ap");
      auto x = b.input("data", Shape{{3, in, 5}});
      x = b.adaptiveAvgPool("pool", x, out, 2);
      x = b.flatten("flat", x);
      x = b.linear("fc", x, 2);
      b.loss("loss", x);
      const Network net = std::move(b).build();
      std::int64_t cols = 0;
      for (std::int64_t j = 0; j < 2; ++j)
        cols += adaptiveEnd(j, 5, 2) - adaptiveStart(j, 5, 2);
      EXPECT_EQ(computeLayerCosts(net)[1].fwd_flops, 3 * rows * cols) << in << " -> " << out;
    }
  }
}

// --- the memory curve at minibatch k -------------------------------------------------------------

TEST(MemoryOverflow, PeakAtAHugeMinibatchIsRefusedNotWrapped) {
  MemoryCurve c;
  c.persistent = {1000, 0};
  c.resident = {{1000, 0}, {1000, std::int64_t{1} << 40}};
  EXPECT_EQ(c.peak(1 << 20), 1000 + (std::int64_t{1} << 60));
  const std::string msg = badInput([&] { c.peak(std::int64_t{1} << 23); });
  expectContains(msg, "minibatch k = 8388608: the bytes resident at step 1 do not fit in 64-bit");
  badInput([&] { c.peakStep(std::numeric_limits<std::int64_t>::max()); });
}

TEST(MemoryOverflow, KMaxIsRightNearTheTopOfTheRange) {
  constexpr std::int64_t top = std::numeric_limits<std::int64_t>::max();
  MemoryCurve c;
  c.persistent = {0, 0};
  // fixed + per_sample overflows: k = 1 does not fit any budget.
  c.resident = {{0, 0}, {top - 5, 10}};
  EXPECT_EQ(c.kMax(top), 0);
  // Nothing grows with k: unbounded.
  c.resident = {{0, 0}, {top - 5, 0}};
  EXPECT_EQ(c.kMax(top, 77), 77);
}

Gmap twoBuffers(LinearBytes a, LinearBytes b) {
  Gmap g;
  g.forward_steps = 1;
  g.buffers = {{"big.weights", BufferKind::Weights, 0, a},
               {"big.momentum", BufferKind::Momentum, 0, b}};
  g.ops = {{GmapOpKind::Allocate, 0, 0}, {GmapOpKind::Allocate, 0, 1}, {GmapOpKind::Compute, 1, -1},
           {GmapOpKind::Compute, 2, -1}, {GmapOpKind::Release, 3, 0},  {GmapOpKind::Release, 3, 1}};
  g.step_layer = {-1, 0, 0, -1};
  g.step_touches.assign(4, {});
  return g;
}

TEST(MemoryOverflow, ResidentBytesThatOverflowNameTheBuffer) {
  const std::int64_t half = std::numeric_limits<std::int64_t>::max() / 2 + 1;
  const MemoryCurve ok = computeMemoryCurve(twoBuffers({half - 1, 0}, {half - 1, 0}));
  EXPECT_EQ(ok.persistent.fixed, 2 * (half - 1));
  expectContains(badInput([&] {
                   computeMemoryCurve(twoBuffers({half, 0}, {half, 0}));
                 }),
                 "'big.momentum'");
  expectContains(badInput([&] {
                   memoryLowerBound(twoBuffers({half, 0}, {half, 0}));
                 }),
                 "do not fit in 64-bit");
}

}  // namespace
}  // namespace swapscope
