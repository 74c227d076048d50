// SPDX-License-Identifier: MIT
/// @brief One chunk of the multi-tensor SGD update: at most a chunk's worth of one parameter
/// tensor's elements, its pointers offset to the chunk's first element. A plain struct, read by
/// the CUDA kernel as the host packed it (runtime/multi_tensor_sgd.h).
#pragma once

#include <cstdint>

namespace swapscope::rt {

struct SgdChunk {
  float* weights = nullptr;
  const float* grad = nullptr;
  float* momentum = nullptr;
  std::int64_t count = 0;  ///< elements, 1..the chunk size
};

}  // namespace swapscope::rt
