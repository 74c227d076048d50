// SPDX-License-Identifier: MIT
/// @brief --sub-batches S and --sub-batch-size B, shared by train, run, plan and analyze: the
/// minibatch runs as S passes of k/S samples, gradients accumulating, before one SGD update
/// (analysis/sub_batch.h).
#pragma once

#include <cstdint>

#include "options/args.h"

namespace swapscope::cli {

/// Declares --sub-batches and --sub-batch-size. `autoHelp`, when not empty, documents the
/// value `auto` of --sub-batches (plan chooses S).
void addSubBatchOptions(ArgParser& args, const char* autoHelp = nullptr);

/// S for minibatch k: --sub-batches S, or k / B for --sub-batch-size B, or 1 when neither is
/// given; with `allowAuto`, 0 for --sub-batches auto (the caller chooses S). Error(BadInput)
/// naming the options and their values for both options at once, and naming the option and its
/// value for a value that is not an integer, below 1, above k, or that does not divide k.
std::int64_t subBatchOption(const ArgParser& args, std::int64_t k, bool allowAuto = false);

}  // namespace swapscope::cli
