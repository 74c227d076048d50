// SPDX-License-Identifier: MIT
#include "analysis/layer_cost.h"

#include <cmath>

#include <gtest/gtest.h>

#include "graph/builder.h"
#include "graph/zoo.h"
#include "tiny_network.h"

namespace swapscope {
namespace {

TEST(LayerCost, TinyNetworkByHand) {
  const Network net = testing::tinyNetwork();
  const auto costs = computeLayerCosts(net);
  const LayerCost& conv = costs[net.indexOf("c")];
  // 32 outputs x (1 channel x 3 x 3) = 288 MACs per sample; padded taps count, as in fvcore.
  EXPECT_EQ(conv.params, 18);
  EXPECT_EQ(conv.fwd_macs, 288);
  EXPECT_EQ(conv.fwd_flops, 576);
  EXPECT_EQ(conv.bwd_data_flops, 0);  // the minibatch needs no gradient
  EXPECT_EQ(conv.bwd_weight_flops, 576);
  EXPECT_EQ(conv.fm, (LinearBytes{0, 32 * 4}));
  EXPECT_TRUE(conv.reads.inputs);

  const LayerCost& relu = costs[net.indexOf("r")];
  EXPECT_EQ(relu.fwd_flops, 32);
  EXPECT_EQ(relu.bwd_data_flops, 32);
  EXPECT_TRUE(relu.reads.output);

  const LayerCost& fc = costs[net.indexOf("fc")];
  EXPECT_EQ(fc.params, 32 * 3 + 3);
  EXPECT_EQ(fc.fwd_macs, 96);
  EXPECT_EQ(fc.fwd_flops, 2 * 96 + 3);  // plus one add per output for the bias
  EXPECT_EQ(fc.bwd_data_flops, 192);
  EXPECT_EQ(fc.bwd_weight_flops, 195);

  const LayerCost& flat = costs[net.indexOf("f")];
  EXPECT_EQ(flat.fwd_flops + flat.bwd_data_flops + flat.bwd_weight_flops, 0);

  const LayerCost& loss = costs[net.lossLayer()];
  EXPECT_EQ(loss.fm, (LinearBytes{4, 0}));
  EXPECT_EQ(loss.fwd_flops, 4 * 3);
  EXPECT_EQ(loss.bwd_data_flops, 5 * 3);

  const CostTotals t = sumCosts(costs);
  EXPECT_EQ(t.params, 117);
  EXPECT_EQ(t.fwd_macs, 384);
  EXPECT_EQ(t.trainFlops(), (576 + 32 + 195 + 12) + (576 + 32 + 192 + 195 + 15));
}

TEST(LayerCost, GroupedStridedConvWithBias) {
  NetworkBuilder b("g");
  auto x = b.input("data", Shape{{8, 10, 10}});
  auto c1 = b.conv("c1", x, 4, 1);                  // gives the next conv an input gradient
  auto c2 = b.conv("c2", c1, 6, 3, 2, 0, true, 2);  // groups 2: 2 input channels per group
  b.loss("loss", b.linear("fc", b.flatten("f", c2), 2));
  const Network net = std::move(b).build();
  const auto costs = computeLayerCosts(net);
  const LayerCost& c = costs[net.indexOf("c2")];
  // Output [6,4,4] = 96 values, each 2 channels x 3 x 3 = 18 MACs.
  EXPECT_EQ(net.outputShape(net.indexOf("c2")), (Shape{{6, 4, 4}}));
  EXPECT_EQ(c.params, 6 * 2 * 9 + 6);
  EXPECT_EQ(c.fwd_macs, 96 * 18);
  EXPECT_EQ(c.fwd_flops, 2 * 96 * 18 + 96);
  EXPECT_EQ(c.bwd_data_flops, 2 * 96 * 18);
  EXPECT_EQ(c.bwd_weight_flops, 2 * 96 * 18 + 96);
}

TEST(LayerCost, BatchNormPoolingAndDropoutPerElement) {
  NetworkBuilder b("e");
  auto x = b.input("data", Shape{{3, 6, 6}});
  x = b.conv("c", x, 4, 1);
  x = b.batchNorm("bn", x);
  x = b.maxPool("mp", x, 2, 2);          // [4,3,3]
  x = b.adaptiveAvgPool("ap", x, 2, 2);  // windows of 2 rows x 2 cols over 3x3 -> 4 x 4 taps
  x = b.flatten("f", x);
  x = b.dropout("d", x, 0.5);
  b.loss("loss", b.linear("fc", x, 2));
  const Network net = std::move(b).build();
  const auto costs = computeLayerCosts(net);
  const LayerCost& bn = costs[net.indexOf("bn")];
  EXPECT_EQ(bn.params, 8);
  EXPECT_EQ(bn.running_stats, 8);
  EXPECT_EQ(bn.fwd_flops, 5 * 144);
  EXPECT_EQ(bn.bwd_data_flops, 4 * 144);
  EXPECT_EQ(bn.bwd_weight_flops, 4 * 144);
  EXPECT_EQ(bn.reads.saved, (LinearBytes{2 * 4 * 4, 0}));
  const LayerCost& mp = costs[net.indexOf("mp")];
  EXPECT_EQ(mp.fwd_flops, 4 * 36);  // 36 outputs x 4 taps
  EXPECT_TRUE(mp.reads.inputs && mp.reads.output);
  const LayerCost& ap = costs[net.indexOf("ap")];
  EXPECT_EQ(ap.fwd_flops, 4 * 16);  // 4 channels x (2+2 rows) x (2+2 cols)
  const LayerCost& d = costs[net.indexOf("d")];
  EXPECT_EQ(d.reads.saved, (LinearBytes{0, 16}));  // one mask byte per element
}

TEST(LayerCost, LayersBeforeAnyParameterHaveNoBackward) {
  NetworkBuilder b("p");
  auto x = b.input("data", Shape{{2, 8, 8}});
  x = b.maxPool("pool", x, 2, 2);
  x = b.conv("c", x, 2, 3, 1, 1);
  b.loss("loss", b.linear("fc", b.flatten("f", x), 2));
  const Network net = std::move(b).build();
  const auto costs = computeLayerCosts(net);
  const LayerCost& pool = costs[net.indexOf("pool")];
  EXPECT_FALSE(pool.backward_active);
  EXPECT_EQ(pool.bwd_data_flops, 0);
  EXPECT_FALSE(pool.reads.inputs);
  EXPECT_EQ(costs[net.indexOf("c")].bwd_data_flops, 0);
}

TEST(LayerCost, TorchvisionMacsMatchPublishedGFlops) {
  // torchvision's model table gives "GFLOPS" that count multiply-accumulates of conv and linear.
  const std::pair<const char*, double> published[] = {
      {"alexnet", 0.71},  {"vgg11", 7.61},     {"vgg16", 15.47},   {"vgg19", 19.63},
      {"googlenet", 1.5}, {"resnet18", 1.81},  {"resnet34", 3.66}, {"resnet50", 4.09},
      {"resnet101", 7.8}, {"resnet152", 11.51}};
  for (const auto& [name, gmacs] : published) {
    const double macs =
        static_cast<double>(sumCosts(computeLayerCosts(buildZooModel(name))).fwd_macs);
    EXPECT_NEAR(macs / 1e9, gmacs, 0.01 * gmacs) << name;
  }
}

}  // namespace
}  // namespace swapscope
