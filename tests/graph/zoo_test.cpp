// SPDX-License-Identifier: MIT
/// Shapes and parameter counts of every zoo network. The torchvision figures are the parameter
/// counts torchvision publishes for its models (sum of numel() over model.parameters()).
#include "graph/zoo.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace swapscope {
namespace {

std::int64_t paramCount(const Network& net) {
  // Counted here from shapes alone, independently of engine/analysis.
  std::int64_t total = 0;
  for (int i = 0; i < net.size(); ++i) {
    const Layer& l = net.layer(i);
    if (l.kind == LayerKind::Conv2d) {
      const auto& a = l.as<Conv2dAttrs>();
      total +=
          a.out_channels * (net.inputShape(i).channels() / a.groups) * a.kernel_h * a.kernel_w +
          (a.bias ? a.out_channels : 0);
    } else if (l.kind == LayerKind::BatchNorm2d) {
      total += 2 * net.outputShape(i).channels();
    } else if (l.kind == LayerKind::Linear) {
      const auto& a = l.as<LinearAttrs>();
      total += net.inputShape(i).dims[0] * a.out_features + (a.bias ? a.out_features : 0);
    }
  }
  return total;
}

int countKind(const Network& net, LayerKind kind) {
  int n = 0;
  for (const Layer& l : net.layers())
    n += l.kind == kind;
  return n;
}

struct Expected {
  const char* name;
  std::int64_t params;
  const char* probe;  // a layer whose output shape is checked
  Shape probeShape;
  int convs;
};

class ZooModel : public ::testing::TestWithParam<Expected> {};

TEST_P(ZooModel, MatchesTorchvisionShapesAndParameters) {
  const Expected& e = GetParam();
  const Network net = buildZooModel(e.name);
  EXPECT_EQ(paramCount(net), e.params);
  const int probe = net.indexOf(e.probe);
  ASSERT_GE(probe, 0) << e.probe;
  EXPECT_EQ(net.outputShape(probe), e.probeShape);
  EXPECT_EQ(countKind(net, LayerKind::Conv2d), e.convs);
  EXPECT_EQ(net.layer(net.lossLayer()).kind, LayerKind::SoftmaxCrossEntropy);
}

// Conv counts: torchvision's modules, downsample projections included.
INSTANTIATE_TEST_SUITE_P(
    Torchvision, ZooModel,
    ::testing::Values(Expected{"alexnet", 61100840, "features.12", Shape{{256, 6, 6}}, 5},
                      Expected{"vgg11", 132863336, "features.20", Shape{{512, 7, 7}}, 8},
                      Expected{"vgg16", 138357544, "features.30", Shape{{512, 7, 7}}, 13},
                      Expected{"vgg19", 143667240, "features.36", Shape{{512, 7, 7}}, 16},
                      Expected{"googlenet", 6624904, "inception5b.concat", Shape{{1024, 7, 7}}, 57},
                      Expected{"resnet18", 11689512, "layer4.1.relu2", Shape{{512, 7, 7}}, 20},
                      Expected{"resnet34", 21797672, "layer3.5.relu2", Shape{{256, 14, 14}}, 36},
                      Expected{"resnet50", 25557032, "layer4.2.relu3", Shape{{2048, 7, 7}}, 53},
                      Expected{"resnet101", 44549160, "layer3.22.relu3", Shape{{1024, 14, 14}},
                               104},
                      Expected{"resnet152", 60192808, "layer2.7.relu3", Shape{{512, 28, 28}}, 155}),
    [](const auto& p) { return std::string(p.param.name); });

/// He et al.'s CIFAR ResNet-(6n+2) with projection shortcuts, counted by formula: a 3x3 stem
/// (432 + bn 32), n blocks per stage of two 3x3 convs with batch norm, projections 16->32 and
/// 32->64 (1x1 conv + bn), and the 64 -> classes classifier.
std::int64_t cifarResNetParams(int n, std::int64_t classes) {
  std::int64_t total = 3 * 16 * 9 + 2 * 16;
  const std::int64_t widths[] = {16, 32, 64};
  for (int s = 0; s < 3; ++s) {
    const std::int64_t c = widths[s];
    const std::int64_t in = s == 0 ? 16 : widths[s - 1];
    total += (in * c * 9 + 2 * c) + (c * c * 9 + 2 * c);  // first block
    total += (n - 1) * 2 * (c * c * 9 + 2 * c);           // the others
    if (s > 0) total += in * c + 2 * c;                   // projection shortcut
  }
  return total + 64 * classes + classes;
}

TEST(ZooCifar, ResNetsFollowHeEtAl) {
  for (auto [name, n] : {std::pair{"resnet20", 3},
                         {"resnet32", 5},
                         {"resnet56", 9},
                         {"resnet110", 18},
                         {"resnet1202", 200}}) {
    const Network net = buildZooModel(name);
    EXPECT_EQ(paramCount(net), cifarResNetParams(n, 10)) << name;
    EXPECT_EQ(countKind(net, LayerKind::Conv2d), 6 * n + 1 + 2) << name;
    EXPECT_EQ(countKind(net, LayerKind::Linear), 1);
    EXPECT_EQ(net.inputShape(net.indexOf("avgpool")), (Shape{{64, 8, 8}})) << name;
  }
  // Option A would give 269,722 for ResNet-20 (He et al. report 0.27M); option B adds 2,752.
  EXPECT_EQ(cifarResNetParams(3, 10), 269722 + 2752);
}

TEST(ZooSmall, FashionCnn) {
  const Network net = buildZooModel("fmnist-cnn");
  EXPECT_EQ(net.sampleShape(), (Shape{{1, 28, 28}}));
  EXPECT_EQ(net.outputShape(net.indexOf("pool2")), (Shape{{64, 7, 7}}));
  EXPECT_EQ(net.classes(), 10);
  // conv1 320 + bn 64 + conv2 18,496 + bn 128 + fc1 3136*128+128 + fc2 1,290
  EXPECT_EQ(paramCount(net), 320 + 64 + 18496 + 128 + 401536 + 1290);
}

TEST(ZooOptions, InputSizeAndClassesAreParameters) {
  const Network net = buildZooModel("resnet18", {Shape{{3, 64, 64}}, 37});
  EXPECT_EQ(net.outputShape(net.indexOf("layer4.1.relu2")), (Shape{{512, 2, 2}}));
  EXPECT_EQ(net.classes(), 37);
  EXPECT_EQ(paramCount(net), 11689512 - 513 * 1000 + 513 * 37);
  const Network gray = buildZooModel("resnet20", {Shape{{1, 32, 32}}, std::nullopt});
  EXPECT_EQ(paramCount(gray), cifarResNetParams(3, 10) - 2 * 16 * 9);
}

TEST(ZooOptions, TooSmallInputNamesTheLayer) {
  try {
    buildZooModel("alexnet", {Shape{{3, 32, 32}}, std::nullopt});
    FAIL() << "alexnet accepted a 32x32 input";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("layer 'features."), std::string::npos) << e.what();
  }
}

TEST(ZooOptions, UnknownModelListsTheZoo) {
  try {
    buildZooModel("resnet9000");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("resnet9000"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("googlenet"), std::string::npos);
  }
}

TEST(ZooEntries, EveryEntryBuildsAtItsDefaultInput) {
  for (const ZooEntry& e : zooEntries()) {
    const Network net = buildZooModel(e.name);
    EXPECT_EQ(net.name(), e.name);
    EXPECT_EQ(net.sampleShape(), e.default_input);
    EXPECT_EQ(net.classes(), e.default_classes);
  }
}

}  // namespace
}  // namespace swapscope
