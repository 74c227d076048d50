// SPDX-License-Identifier: MIT
/// A small network for database and profiling tests: every step is fast, and a residual add, a
/// batch norm and a pooling layer give the GMAP swapped FMs of several kinds.
#pragma once

#include "graph/builder.h"

namespace swapscope::testing {

inline Network tinyNetwork() {
  NetworkBuilder b("tiny");
  auto x = b.input("data", Shape{{2, 8, 8}});
  auto c1 = b.conv("conv1", x, 4, 3, 1, 1);
  auto n1 = b.batchNorm("bn1", c1);
  auto r1 = b.relu("relu1", n1);
  auto c2 = b.conv("conv2", r1, 4, 3, 1, 1, false);
  auto s = b.add("sum", {c2, r1});
  auto p = b.maxPool("pool", s, 2, 2);
  auto f = b.flatten("flat", p);
  auto l = b.linear("fc", f, 3);
  b.loss("loss", l);
  return std::move(b).build();
}

}  // namespace swapscope::testing
