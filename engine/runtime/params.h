// SPDX-License-Identifier: MIT
/// @brief Seeded, reproducible parameter initialisation, as torchvision's ResNet does it:
/// convolutions He-normal with fan_out (std = sqrt(2 / (out * kh * kw))) and zero bias; linear
/// layers uniform in +-1/sqrt(fan_in) for weight and bias (PyTorch's default); batch norm gamma
/// 1, beta 0, running mean 0 and running variance 1. Values depend only on (seed, layer name).
#pragma once

#include <cstdint>
#include <vector>

#include "graph/network.h"

namespace swapscope::rt {

/// The initial learnable values of `layer` in the kernel layout (runtime/kernel.h).
std::vector<float> initialWeights(const Network& net, int layer, std::uint64_t seed);
/// The initial running statistics of `layer` (batch norm: mean 0, variance 1).
std::vector<float> initialRunningStats(const Network& net, int layer);

}  // namespace swapscope::rt
