// SPDX-License-Identifier: MIT
/// @brief The CIFAR ResNets of He et al. (2016, section 4.2) and a small Fashion-MNIST CNN.
///
/// CIFAR ResNet-(6n+2): a 3x3 conv with 16 filters, three stages of n basic blocks with 16, 32 and
/// 64 filters (the first block of stages 2 and 3 has stride 2), global average pooling and a
/// linear classifier. Where the channel count changes, the shortcut is a 1x1 projection with
/// batch norm (He et al.'s option B): the parameter-free option A (zero-padded identity) needs a
/// channel-padding layer that the layer set does not have. Option B adds 2,752 parameters.
#include "graph/builder.h"
#include "graph/zoo.h"
#include "graph/zoo_blocks.h"

namespace swapscope {

Network buildCifarResNet(int depth, const Shape& input, std::int64_t classes) {
  const int n = (depth - 2) / 6;
  NetworkBuilder b("resnet" + std::to_string(depth));
  auto x = b.input("data", input);
  x = b.conv("conv1", x, 16, 3, 1, 1, false);
  x = b.batchNorm("bn1", x);
  x = b.relu("relu", x);
  std::int64_t inPlanes = 16;
  for (int stage = 0; stage < 3; ++stage) {
    const std::int64_t planes = std::int64_t{16} << stage;
    for (int i = 0; i < n; ++i) {
      const std::string name = "layer" + std::to_string(stage + 1) + "." + std::to_string(i);
      const std::int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
      x = resnetBasicBlock(b, name, x, inPlanes, planes, stride);
      inPlanes = planes;
    }
  }
  x = b.adaptiveAvgPool("avgpool", x, 1, 1);
  x = b.flatten("flatten", x);
  x = b.linear("fc", x, classes);
  b.loss("loss", x);
  return std::move(b).build();
}

Network buildFashionCnn(const Shape& input, std::int64_t classes) {
  NetworkBuilder b("fmnist-cnn");
  auto x = b.input("data", input);
  x = b.conv("conv1", x, 32, 3, 1, 1);
  x = b.batchNorm("bn1", x);
  x = b.relu("relu1", x);
  x = b.maxPool("pool1", x, 2, 2);
  x = b.conv("conv2", x, 64, 3, 1, 1);
  x = b.batchNorm("bn2", x);
  x = b.relu("relu2", x);
  x = b.maxPool("pool2", x, 2, 2);
  x = b.flatten("flatten", x);
  x = b.linear("fc1", x, 128);
  x = b.relu("relu3", x);
  x = b.dropout("dropout", x, 0.25);
  x = b.linear("fc2", x, classes);
  b.loss("loss", x);
  return std::move(b).build();
}

}  // namespace swapscope
