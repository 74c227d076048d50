// SPDX-License-Identifier: MIT
#include "graph/network.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "graph/builder.h"
#include "graph/shape_inference.h"

namespace swapscope {
namespace {

/// Runs `f` and returns the BadInput message it throws (fails the test if it does not throw).
template <typename F>
std::string badInputMessage(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return {};
}

TEST(Network, OrdersLayersTopologicallyKeepingFileOrder) {
  std::vector<Layer> layers{
      {"loss", LayerKind::SoftmaxCrossEntropy, {"fc"}, NoAttrs{}},
      {"fc", LayerKind::Linear, {"flat"}, LinearAttrs{10, true, std::nullopt}},
      {"data", LayerKind::Input, {}, InputAttrs{Shape{{2, 3, 3}}}},
      {"flat", LayerKind::Flatten, {"data"}, NoAttrs{}},
  };
  const Network net = Network::build("t", layers);
  ASSERT_EQ(net.size(), 4);
  EXPECT_EQ(net.layer(0).name, "data");
  EXPECT_EQ(net.layer(1).name, "flat");
  EXPECT_EQ(net.layer(2).name, "fc");
  EXPECT_EQ(net.layer(3).name, "loss");
  EXPECT_EQ(net.outputShape(1), (Shape{{18}}));
  EXPECT_EQ(net.inputsOf(2), std::vector<int>{1});
  EXPECT_EQ(net.consumersOf(0), std::vector<int>{1});
  // The optional checks are filled from the inferred shapes.
  EXPECT_EQ(net.layer(2).as<LinearAttrs>().in_features, 18);
}

TEST(Network, ConvAndPoolShapesFollowPyTorch) {
  NetworkBuilder b("shapes");
  auto x = b.input("data", Shape{{3, 224, 224}});
  auto c = b.conv("c", x, 64, 7, 2, 3);
  auto p = b.maxPool("p", c, 3, 2, 0, /*ceil_mode=*/true);  // googlenet's maxpool1
  auto q = b.maxPool("q", p, 3, 2, 1);                      // resnet's maxpool
  auto g = b.conv("g", q, 32, 3, 1, 1, true, /*groups=*/4);
  auto a = b.avgPool("a", g, 2, 2);
  auto f = b.flatten("f", a);
  b.loss("loss", b.linear("fc", f, 5));
  const Network net = std::move(b).build();
  EXPECT_EQ(net.outputShape(net.indexOf("c")), (Shape{{64, 112, 112}}));
  EXPECT_EQ(net.outputShape(net.indexOf("p")), (Shape{{64, 56, 56}}));
  EXPECT_EQ(net.outputShape(net.indexOf("q")), (Shape{{64, 28, 28}}));
  EXPECT_EQ(net.outputShape(net.indexOf("g")), (Shape{{32, 28, 28}}));
  EXPECT_EQ(net.outputShape(net.indexOf("a")), (Shape{{32, 14, 14}}));
}

TEST(Network, CeilModeDropsAWindowThatStartsInThePadding) {
  EXPECT_EQ(windowedExtent(112, 3, 2, 0, true), 56);  // (112-3)/2 = 54.5 -> 56 with ceil
  EXPECT_EQ(windowedExtent(14, 2, 2, 0, true), 7);
  EXPECT_EQ(windowedExtent(5, 2, 2, 1, true), 3);  // the 4th window would start at 6 >= 5+1
  EXPECT_EQ(windowedExtent(5, 2, 2, 1, false), 3);
  EXPECT_EQ(windowedExtent(7, 3, 2, 0, false), 3);
}

TEST(Network, AddShapeMismatchNamesExpectedAndActual) {
  NetworkBuilder b("bad");
  auto x = b.input("data", Shape{{8, 16, 16}});
  auto c = b.conv("branch", x, 16, 3, 2, 1);
  auto s = b.add("sum", {c, x});
  b.loss("loss", b.linear("fc", b.flatten("f", s), 3));
  const std::string msg = badInputMessage([&] { std::move(b).build(); });
  EXPECT_NE(msg.find("layer 'sum' (add)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected input shape [16,8,8]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("got [8,16,16] from 'data'"), std::string::npos) << msg;
}

TEST(Network, ConcatNeedsEqualSpatialSize) {
  NetworkBuilder b("bad");
  auto x = b.input("data", Shape{{8, 16, 16}});
  auto p = b.maxPool("pool", x, 2, 2);
  auto c = b.concat("cat", {x, p});
  b.loss("loss", b.linear("fc", b.flatten("f", c), 3));
  const std::string msg = badInputMessage([&] { std::move(b).build(); });
  EXPECT_NE(msg.find("layer 'cat' (concat): expected input shape [C,16,16], got [8,8,8]"),
            std::string::npos)
      << msg;
}

TEST(Network, LinearNeedsAFlatInput) {
  NetworkBuilder b("bad");
  auto x = b.input("data", Shape{{8, 4, 4}});
  b.loss("loss", b.linear("fc", x, 3));
  const std::string msg = badInputMessage([&] { std::move(b).build(); });
  EXPECT_NE(msg.find("layer 'fc' (linear): expected input shape [F], got [8,4,4]"),
            std::string::npos)
      << msg;
}

TEST(Network, StructuralErrors) {
  auto data = Layer{"data", LayerKind::Input, {}, InputAttrs{Shape{{4}}}};
  auto fc = Layer{"fc", LayerKind::Linear, {"data"}, LinearAttrs{3, true, std::nullopt}};
  auto loss = Layer{"loss", LayerKind::SoftmaxCrossEntropy, {"fc"}, NoAttrs{}};
  EXPECT_NE(badInputMessage([&] {
              Network::build("n", {data, fc});
            }).find("no softmax"),
            std::string::npos);
  EXPECT_NE(badInputMessage([&] {
              Network::build("n", {fc, loss});
            }).find("'data' does not name"),
            std::string::npos);
  EXPECT_NE(badInputMessage([&] {
              Network::build("n", {data, fc, fc, loss});
            }).find("used twice"),
            std::string::npos);
  auto unused = Layer{"unused", LayerKind::ReLU, {"data"}, NoAttrs{}};
  EXPECT_NE(badInputMessage([&] {
              Network::build("n", {data, unused, fc, loss});
            }).find("layer 'unused' (relu): its output is never used"),
            std::string::npos);
  auto wrongAttrs = Layer{"fc", LayerKind::Linear, {"data"}, NoAttrs{}};
  EXPECT_NE(badInputMessage([&] {
              Network::build("n", {data, wrongAttrs, loss});
            }).find("attributes do not belong"),
            std::string::npos);
}

TEST(Network, AbsurdSizesAreRefusedBeforeTheyOverflow) {
  NetworkBuilder b("huge");
  auto x = b.input("data", Shape{{1 << 20, 1 << 20, 1 << 20}});
  b.loss("loss", b.linear("fc", b.flatten("f", x), 2));
  const std::string msg = badInputMessage([&] { std::move(b).build(); });
  EXPECT_NE(msg.find("layer 'data' (input): output [1048576,1048576,1048576] has more than 2^36"),
            std::string::npos)
      << msg;
}

TEST(Network, CycleIsReportedWithItsLayers) {
  std::vector<Layer> layers{
      {"data", LayerKind::Input, {}, InputAttrs{Shape{{4}}}},
      {"a", LayerKind::Add, {"data", "c"}, NoAttrs{}},
      {"b", LayerKind::ReLU, {"a"}, NoAttrs{}},
      {"c", LayerKind::ReLU, {"b"}, NoAttrs{}},
      {"loss", LayerKind::SoftmaxCrossEntropy, {"c"}, NoAttrs{}},
  };
  const std::string msg = badInputMessage([&] { Network::build("cyc", layers); });
  EXPECT_NE(msg.find("has a cycle: 'a' -> 'b' -> 'c' -> 'a'"), std::string::npos) << msg;
}

TEST(Network, StructureHashIgnoresNamesButNotAttributes) {
  auto build = [](const std::string& fcName, std::int64_t out) {
    NetworkBuilder b("h");
    auto x = b.input("data", Shape{{4}});
    b.loss("loss", b.linear(fcName, x, out));
    return std::move(b).build();
  };
  EXPECT_EQ(build("fc", 3).structureHash(), build("classifier", 3).structureHash());
  EXPECT_NE(build("fc", 3).structureHash(), build("fc", 4).structureHash());
  EXPECT_EQ(build("fc", 3).structureHash().size(), 16u);
}

}  // namespace
}  // namespace swapscope
