// SPDX-License-Identifier: MIT
/// @brief The multi-tensor SGD update (PyTorch's foreach path): every parameter tensor of a step
/// cut into chunks of at most `chunk` elements, one SgdChunk each, so that one kernel launch
/// updates them all, one block per chunk. The CUDA backend packs the table here, uploads it and
/// launches once; sgdChunksOnHost applies the same table on the CPU, the reference the packing
/// is tested against.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/device.h"
#include "runtime/sgd_chunk.h"

namespace swapscope::rt {

/// The elements of one chunk: 64 Ki floats, a block of 256 threads doing 256 each.
inline constexpr std::int64_t kSgdChunkElements = std::int64_t{1} << 16;

/// The chunks of `tensors`, in their order, each tensor's elements in order; tensors of no
/// elements give none. Every tensor must carry the same lr, momentum and weight decay (one
/// launch takes one of each): Error(Runtime) naming the first that differs. `chunk` >= 1.
std::vector<SgdChunk> packSgdChunks(const std::vector<SgdArgs>& tensors,
                                    std::int64_t chunk = kSgdChunkElements);

/// What the CUDA kernel computes for each chunk, on the host: PyTorch's SGD, g += wd*w;
/// v = mu*v + g; w -= lr*v, element by element.
void sgdChunksOnHost(const std::vector<SgdChunk>& chunks, float lr, float mu, float wd);

}  // namespace swapscope::rt
