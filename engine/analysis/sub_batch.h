// SPDX-License-Identifier: MIT
/// @brief moDNN's sub-batching (moDNN §IV-A): a minibatch of k samples runs as S passes of k/S
/// samples each, the parameter gradients accumulating over the passes, before one SGD update
/// whose gradient is the whole minibatch's mean. The GMAP, the memory curve and the peak are
/// those of one pass at k/S: the parameter gradients are persistent buffers, so they stay
/// allocated across the passes, and everything per sample is counted at k/S (docs/analysis.md,
/// "Sub-batches").
#pragma once

#include <cstdint>
#include <string_view>

namespace swapscope {

/// The samples of one pass when minibatch k runs as `sub_batches` passes: k / sub_batches.
/// Error(BadInput), starting with `what` (the option or field that gave the count, e.g.
/// "--sub-batches 5"), naming both numbers where the count is below 1, above k, or does not
/// divide k (a remainder is refused, never dropped or padded).
std::int64_t subBatchSize(std::int64_t k, std::int64_t sub_batches, std::string_view what);

/// The number of passes when minibatch k runs in sub-batches of `size` samples: k / size, with
/// the same checks (a size below 1, above k, or not dividing k).
std::int64_t subBatchCount(std::int64_t k, std::int64_t size, std::string_view what);

}  // namespace swapscope
