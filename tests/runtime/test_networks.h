// SPDX-License-Identifier: MIT
/// @brief Small networks the runtime tests share.
#pragma once

#include "graph/builder.h"

namespace swapscope::rt {

/// One network with every layer kind: conv, bn, relu, both poolings, concat, add, adaptive
/// pooling, flatten, dropout, linear and the loss.
inline Network everyKind() {
  NetworkBuilder b("every-kind");
  auto x = b.input("data", Shape{{3, 12, 12}});
  x = b.conv("conv1", x, 8, 3, 1, 1, /*bias=*/true);
  x = b.batchNorm("bn1", x);
  x = b.relu("relu1", x);
  x = b.maxPool("pool1", x, 3, 2, 1);
  auto left = b.conv("left", x, 4, 1);
  auto right = b.relu("right.relu", b.conv("right", x, 4, 3, 1, 1));
  auto cat = b.concat("cat", {left, right});
  auto sum = b.add("sum", {cat, x});
  x = b.relu("relu2", sum);
  x = b.avgPool("pool2", x, 2, 2);
  x = b.adaptiveAvgPool("gap", x, 2, 2);
  x = b.flatten("flat", x);
  x = b.dropout("drop", x, 0.25);
  x = b.linear("fc", x, 10);
  b.loss("loss", x);
  return std::move(b).build();
}

/// The kinds of mobile networks: a depthwise convolution, ReLU6 (clip), hardswish,
/// squeeze-and-excitation (global pooling, a per-channel mul by a hardsigmoid gate), SiLU
/// (sigmoid and a same-shape mul), a general clip and dropout.
inline Network modernKinds() {
  NetworkBuilder b("modern-kinds");
  auto x = b.input("data", Shape{{3, 12, 12}});
  x = b.conv("conv1", x, 8, 3, 2, 1, /*bias=*/false);
  x = b.batchNorm("bn1", x);
  x = b.clip("relu6", x, 0.0, 6.0);
  x = b.conv("dw", x, 8, 3, 1, 1, /*bias=*/false, /*groups=*/8);
  x = b.hardSwish("hswish", x);
  auto s = b.adaptiveAvgPool("se.pool", x, 1, 1);
  s = b.relu("se.relu", b.conv("se.fc1", s, 4, 1));
  s = b.hardSigmoid("se.gate", b.conv("se.fc2", s, 8, 1));
  x = b.mul("se.scale", x, s);
  auto y = b.conv("conv2", x, 8, 1);
  x = b.mul("silu", y, b.sigmoid("silu.gate", y));
  x = b.clip("clip", x, -0.5, 0.75);
  x = b.flatten("flat", b.adaptiveAvgPool("gap", x, 2, 2));
  x = b.dropout("drop", x, 0.2);
  x = b.linear("fc", x, 10);
  b.loss("loss", x);
  return std::move(b).build();
}

/// everyKind without batch norm and dropout: every layer's output per sample depends on that
/// sample alone, so a minibatch run in sub-batches computes the full minibatch's gradient.
inline Network noBatchStatistics() {
  NetworkBuilder b("no-batch-statistics");
  auto x = b.input("data", Shape{{3, 12, 12}});
  x = b.conv("conv1", x, 8, 3, 1, 1, /*bias=*/true);
  x = b.relu("relu1", x);
  x = b.maxPool("pool1", x, 3, 2, 1);
  auto left = b.conv("left", x, 4, 1);
  auto right = b.relu("right.relu", b.conv("right", x, 4, 3, 1, 1));
  auto cat = b.concat("cat", {left, right});
  auto sum = b.add("sum", {cat, x});
  x = b.relu("relu2", sum);
  x = b.avgPool("pool2", x, 2, 2);
  x = b.adaptiveAvgPool("gap", x, 2, 2);
  x = b.flatten("flat", x);
  x = b.linear("fc", x, 10);
  b.loss("loss", x);
  return std::move(b).build();
}

}  // namespace swapscope::rt
