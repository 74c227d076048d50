// SPDX-License-Identifier: MIT
/// @brief torchvision's ImageNet architectures, layer for layer, with torchvision's module names
/// (features.0, layer1.0.conv1, inception3a.branch2.1.conv, ...). torchvision runs ReLU in place
/// and reuses one ReLU module per block; here every activation is its own layer (relu1, relu2, ...)
/// so that each feature map has a name.
#include <array>

#include "graph/builder.h"
#include "graph/zoo.h"
#include "graph/zoo_blocks.h"

namespace swapscope {

Network buildAlexNet(const Shape& input, std::int64_t classes) {
  NetworkBuilder b("alexnet");
  auto x = b.input("data", input);
  x = b.conv("features.0", x, 64, 11, 4, 2);
  x = b.relu("features.1", x);
  x = b.maxPool("features.2", x, 3, 2);
  x = b.conv("features.3", x, 192, 5, 1, 2);
  x = b.relu("features.4", x);
  x = b.maxPool("features.5", x, 3, 2);
  x = b.conv("features.6", x, 384, 3, 1, 1);
  x = b.relu("features.7", x);
  x = b.conv("features.8", x, 256, 3, 1, 1);
  x = b.relu("features.9", x);
  x = b.conv("features.10", x, 256, 3, 1, 1);
  x = b.relu("features.11", x);
  x = b.maxPool("features.12", x, 3, 2);
  x = b.adaptiveAvgPool("avgpool", x, 6, 6);
  x = b.flatten("flatten", x);
  x = b.dropout("classifier.0", x, 0.5);
  x = b.linear("classifier.1", x, 4096);
  x = b.relu("classifier.2", x);
  x = b.dropout("classifier.3", x, 0.5);
  x = b.linear("classifier.4", x, 4096);
  x = b.relu("classifier.5", x);
  x = b.linear("classifier.6", x, classes);
  b.loss("loss", x);
  return std::move(b).build();
}

Network buildVgg(int depth, const Shape& input, std::int64_t classes) {
  // torchvision's cfgs "A", "D" and "E"; 0 is a 2x2 max pooling.
  std::vector<int> cfg;
  if (depth == 11) cfg = {64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0};
  if (depth == 16) {
    cfg = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};
  }
  if (depth == 19) {
    cfg = {64,  64,  0,   128, 128, 0,   256, 256, 256, 256, 0,
           512, 512, 512, 512, 0,   512, 512, 512, 512, 0};
  }
  NetworkBuilder b("vgg" + std::to_string(depth));
  auto x = b.input("data", input);
  int i = 0;
  for (int v : cfg) {
    const std::string n = "features." + std::to_string(i);
    if (v == 0) {
      x = b.maxPool(n, x, 2, 2);
      i += 1;
    } else {
      x = b.conv(n, x, v, 3, 1, 1);
      x = b.relu("features." + std::to_string(i + 1), x);
      i += 2;
    }
  }
  x = b.adaptiveAvgPool("avgpool", x, 7, 7);
  x = b.flatten("flatten", x);
  x = b.linear("classifier.0", x, 4096);
  x = b.relu("classifier.1", x);
  x = b.dropout("classifier.2", x, 0.5);
  x = b.linear("classifier.3", x, 4096);
  x = b.relu("classifier.4", x);
  x = b.dropout("classifier.5", x, 0.5);
  x = b.linear("classifier.6", x, classes);
  b.loss("loss", x);
  return std::move(b).build();
}

namespace {

/// torchvision's BasicConv2d: conv (no bias) + batch norm (eps 0.001) + ReLU.
std::string basicConv(NetworkBuilder& b, const std::string& n, const std::string& in,
                      std::int64_t out, std::int64_t kernel, std::int64_t stride = 1,
                      std::int64_t pad = 0) {
  auto x = b.conv(n + ".conv", in, out, kernel, stride, pad, /*bias=*/false);
  x = b.batchNorm(n + ".bn", x, 0.001);
  return b.relu(n + ".relu", x);
}

/// torchvision's Inception block. Note that torchvision's "5x5" branch uses a 3x3 kernel.
std::string inception(NetworkBuilder& b, const std::string& n, const std::string& in,
                      std::int64_t c1, std::int64_t c3r, std::int64_t c3, std::int64_t c5r,
                      std::int64_t c5, std::int64_t pool) {
  auto b1 = basicConv(b, n + ".branch1", in, c1, 1);
  auto b2 = basicConv(b, n + ".branch2.0", in, c3r, 1);
  b2 = basicConv(b, n + ".branch2.1", b2, c3, 3, 1, 1);
  auto b3 = basicConv(b, n + ".branch3.0", in, c5r, 1);
  b3 = basicConv(b, n + ".branch3.1", b3, c5, 3, 1, 1);
  auto b4 = b.maxPool(n + ".branch4.0", in, 3, 1, 1, /*ceil_mode=*/true);
  b4 = basicConv(b, n + ".branch4.1", b4, pool, 1);
  return b.concat(n + ".concat", {b1, b2, b3, b4});
}

}  // namespace

Network buildGoogLeNet(const Shape& input, std::int64_t classes) {
  NetworkBuilder b("googlenet");
  auto x = b.input("data", input);
  x = basicConv(b, "conv1", x, 64, 7, 2, 3);
  x = b.maxPool("maxpool1", x, 3, 2, 0, true);
  x = basicConv(b, "conv2", x, 64, 1);
  x = basicConv(b, "conv3", x, 192, 3, 1, 1);
  x = b.maxPool("maxpool2", x, 3, 2, 0, true);
  x = inception(b, "inception3a", x, 64, 96, 128, 16, 32, 32);
  x = inception(b, "inception3b", x, 128, 128, 192, 32, 96, 64);
  x = b.maxPool("maxpool3", x, 3, 2, 0, true);
  x = inception(b, "inception4a", x, 192, 96, 208, 16, 48, 64);
  x = inception(b, "inception4b", x, 160, 112, 224, 24, 64, 64);
  x = inception(b, "inception4c", x, 128, 128, 256, 24, 64, 64);
  x = inception(b, "inception4d", x, 112, 144, 288, 32, 64, 64);
  x = inception(b, "inception4e", x, 256, 160, 320, 32, 128, 128);
  x = b.maxPool("maxpool4", x, 2, 2, 0, true);
  x = inception(b, "inception5a", x, 256, 160, 320, 32, 128, 128);
  x = inception(b, "inception5b", x, 384, 192, 384, 48, 128, 128);
  x = b.adaptiveAvgPool("avgpool", x, 1, 1);
  x = b.flatten("flatten", x);
  x = b.dropout("dropout", x, 0.2);
  x = b.linear("fc", x, classes);
  b.loss("loss", x);
  return std::move(b).build();
}

std::string resnetBasicBlock(NetworkBuilder& b, const std::string& n, const std::string& in,
                             std::int64_t in_planes, std::int64_t planes, std::int64_t stride) {
  auto x = b.conv(n + ".conv1", in, planes, 3, stride, 1, false);
  x = b.batchNorm(n + ".bn1", x);
  x = b.relu(n + ".relu1", x);
  x = b.conv(n + ".conv2", x, planes, 3, 1, 1, false);
  x = b.batchNorm(n + ".bn2", x);
  std::string shortcut = in;
  if (stride != 1 || in_planes != planes) {
    shortcut = b.conv(n + ".downsample.0", in, planes, 1, stride, 0, false);
    shortcut = b.batchNorm(n + ".downsample.1", shortcut);
  }
  x = b.add(n + ".add", {x, shortcut});
  return b.relu(n + ".relu2", x);
}

namespace {

/// ResNet v1.5 bottleneck: the stride sits on the 3x3 convolution, as in torchvision.
std::string bottleneck(NetworkBuilder& b, const std::string& n, const std::string& in,
                       std::int64_t in_planes, std::int64_t planes, std::int64_t stride) {
  constexpr std::int64_t kExpansion = 4;
  auto x = b.conv(n + ".conv1", in, planes, 1, 1, 0, false);
  x = b.batchNorm(n + ".bn1", x);
  x = b.relu(n + ".relu1", x);
  x = b.conv(n + ".conv2", x, planes, 3, stride, 1, false);
  x = b.batchNorm(n + ".bn2", x);
  x = b.relu(n + ".relu2", x);
  x = b.conv(n + ".conv3", x, planes * kExpansion, 1, 1, 0, false);
  x = b.batchNorm(n + ".bn3", x);
  std::string shortcut = in;
  if (stride != 1 || in_planes != planes * kExpansion) {
    shortcut = b.conv(n + ".downsample.0", in, planes * kExpansion, 1, stride, 0, false);
    shortcut = b.batchNorm(n + ".downsample.1", shortcut);
  }
  x = b.add(n + ".add", {x, shortcut});
  return b.relu(n + ".relu3", x);
}

}  // namespace

Network buildResNet(int depth, const Shape& input, std::int64_t classes) {
  std::array<int, 4> blocks{};
  bool useBottleneck = true;
  switch (depth) {
    case 18:
      blocks = {2, 2, 2, 2}, useBottleneck = false;
      break;
    case 34:
      blocks = {3, 4, 6, 3}, useBottleneck = false;
      break;
    case 50:
      blocks = {3, 4, 6, 3};
      break;
    case 101:
      blocks = {3, 4, 23, 3};
      break;
    case 152:
      blocks = {3, 8, 36, 3};
      break;
    default:
      blocks = {0, 0, 0, 0};
  }
  NetworkBuilder b("resnet" + std::to_string(depth));
  auto x = b.input("data", input);
  x = b.conv("conv1", x, 64, 7, 2, 3, false);
  x = b.batchNorm("bn1", x);
  x = b.relu("relu", x);
  x = b.maxPool("maxpool", x, 3, 2, 1);
  const std::int64_t expansion = useBottleneck ? 4 : 1;
  std::int64_t inPlanes = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const std::int64_t planes = std::int64_t{64} << stage;
    for (int i = 0; i < blocks[stage]; ++i) {
      const std::string n = "layer" + std::to_string(stage + 1) + "." + std::to_string(i);
      const std::int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
      x = useBottleneck ? bottleneck(b, n, x, inPlanes, planes, stride)
                        : resnetBasicBlock(b, n, x, inPlanes, planes, stride);
      inPlanes = planes * expansion;
    }
  }
  x = b.adaptiveAvgPool("avgpool", x, 1, 1);
  x = b.flatten("flatten", x);
  x = b.linear("fc", x, classes);
  b.loss("loss", x);
  return std::move(b).build();
}

}  // namespace swapscope
