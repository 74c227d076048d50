// SPDX-License-Identifier: MIT
#include "runtime/multi_tensor_sgd.h"

#include <algorithm>
#include <string>

#include "common/error.h"

namespace swapscope::rt {

std::vector<SgdChunk> packSgdChunks(const std::vector<SgdArgs>& tensors, std::int64_t chunk) {
  if (chunk < 1) {
    throw Error(ErrorKind::Runtime,
                "the multi-tensor update's chunk is " + std::to_string(chunk) + " elements");
  }
  std::vector<SgdChunk> out;
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    const SgdArgs& a = tensors[t];
    const SgdArgs& first = tensors.front();
    if (a.lr != first.lr || a.momentum_factor != first.momentum_factor ||
        a.weight_decay != first.weight_decay) {
      throw Error(ErrorKind::Runtime,
                  "the multi-tensor update takes one learning rate, momentum and weight decay, "
                  "but tensor " +
                      std::to_string(t) + " has lr " + std::to_string(a.lr) + ", momentum " +
                      std::to_string(a.momentum_factor) + ", weight decay " +
                      std::to_string(a.weight_decay) + " (tensor 0: " + std::to_string(first.lr) +
                      ", " + std::to_string(first.momentum_factor) + ", " +
                      std::to_string(first.weight_decay) + ")");
    }
    for (std::int64_t begin = 0; begin < a.count; begin += chunk) {
      out.push_back({.weights = a.weights + begin,
                     .grad = a.grad + begin,
                     .momentum = a.momentum + begin,
                     .count = std::min(chunk, a.count - begin)});
    }
  }
  return out;
}

void sgdChunksOnHost(const std::vector<SgdChunk>& chunks, float lr, float mu, float wd) {
  for (const SgdChunk& c : chunks) {
    for (std::int64_t i = 0; i < c.count; ++i) {
      const float g = c.grad[i] + wd * c.weights[i];
      c.momentum[i] = mu * c.momentum[i] + g;
      c.weights[i] -= lr * c.momentum[i];
    }
  }
}

}  // namespace swapscope::rt
