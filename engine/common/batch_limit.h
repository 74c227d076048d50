// SPDX-License-Identifier: MIT
/// @brief The largest minibatch k that any verb, the planner's search and the app accept, and the
/// check that refuses a k above it with the option, the value and the limit.
#pragma once

#include <cstdint>
#include <string>

#include "common/error.h"

namespace swapscope {

/// 2^24 = 16,777,216 samples. Every size of a GMAP and every FLOP count is fixed + per_sample * k
/// in 64 bits. The zoo's largest per-sample count at its default input is VGG-19's 1.18e11
/// training FLOPs (`swapscope analyze --model vgg19 --batch 1`); its largest per-sample byte
/// count is ResNet-152's keep-all peak, 1.77e8 bytes. Times 2^24 they are 1.97e18 and 3.0e15,
/// the larger under a fourth of 2^63 (9.2e18), so each such count and the sums of a few of them
/// stay exact. k itself is exact as a double (below 2^53) and in the app's int spin box (below
/// 2^31). A network with larger per-sample counts (a zoo model at a large --input, a network
/// file) is checked where its counts are made (common/checked.h) and refused there, never
/// wrapped.
inline constexpr std::int64_t kMaxBatch = std::int64_t{1} << 24;

/// Error(BadInput) "<what> <value>: above the limit of 16777216 samples ..."; `what` names the
/// option or field ("--batch", "plan 'p.json': field 'k'"), `value` is as the user gave it (it
/// may exceed 64 bits).
[[noreturn]] inline void refuseAboveBatchLimit(const std::string& what, const std::string& value) {
  throwBadInput(what + " " + value + ": above the limit of " + std::to_string(kMaxBatch) +
                " samples per minibatch (the largest k whose byte and FLOP counts stay exact in "
                "64 bits for every zoo network)");
}

/// refuseAboveBatchLimit where k > kMaxBatch.
inline void checkBatchLimit(std::int64_t k, const std::string& what) {
  if (k > kMaxBatch) refuseAboveBatchLimit(what, std::to_string(k));
}

}  // namespace swapscope
