// SPDX-License-Identifier: MIT
/// @brief Building blocks shared by the zoo's builders (internal to engine/graph).
#pragma once

#include <cstdint>
#include <string>

#include "graph/builder.h"

namespace swapscope {

/// The ResNet basic block: two 3x3 conv-bn pairs, a shortcut (a 1x1 conv-bn projection where the
/// stride or the channel count changes), add, ReLU. Returns the block's output.
std::string resnetBasicBlock(NetworkBuilder& b, const std::string& n, const std::string& in,
                             std::int64_t in_planes, std::int64_t planes, std::int64_t stride);

}  // namespace swapscope
