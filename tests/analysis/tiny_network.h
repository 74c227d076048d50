// SPDX-License-Identifier: MIT
/// A network small enough to work out its costs and GMAP by hand (see the expectations in
/// layer_cost_test.cpp and gmap_test.cpp):
///   data [1,4,4] -> c: conv 3x3, 2 filters, padding 1, no bias [2,4,4] -> r: relu
///   -> f: flatten [32] -> fc: linear 32->3 with bias -> loss
#pragma once

#include <ostream>

#include "common/bytes.h"
#include "graph/builder.h"

namespace swapscope {
/// Readable GoogleTest failure messages for sizes.
inline void PrintTo(const LinearBytes& b, std::ostream* os) {
  *os << "{fixed " << b.fixed << ", per_sample " << b.per_sample << "}";
}
}  // namespace swapscope

namespace swapscope::testing {

inline Network tinyNetwork() {
  NetworkBuilder b("tiny");
  auto x = b.input("data", Shape{{1, 4, 4}});
  x = b.conv("c", x, 2, 3, 1, 1, /*bias=*/false);
  x = b.relu("r", x);
  x = b.flatten("f", x);
  x = b.linear("fc", x, 3);
  b.loss("loss", x);
  return std::move(b).build();
}

}  // namespace swapscope::testing
