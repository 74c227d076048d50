// SPDX-License-Identifier: MIT
#include "analysis/sub_batch.h"

#include <string>

#include "common/error.h"

namespace swapscope {
namespace {

/// `part` (a count or a size) against the minibatch k.
void checkSplit(std::int64_t k, std::int64_t part, std::string_view noun, std::string_view what) {
  const std::string prefix = std::string(what) + ": ";
  if (part < 1) {
    throwBadInput(prefix + "the sub-batch " + std::string(noun) + " must be at least 1, not " +
                  std::to_string(part));
  }
  if (part > k) {
    throwBadInput(prefix + "a minibatch of " + std::to_string(k) + " has no sub-batch " +
                  std::string(noun) + " of " + std::to_string(part) + " (at most " +
                  std::to_string(k) + ")");
  }
  if (k % part != 0) {
    throwBadInput(prefix + "the minibatch of " + std::to_string(k) +
                  " does not split evenly: " + std::to_string(k) + " is not a multiple of " +
                  std::to_string(part) + " (" + std::to_string(k) + " = " +
                  std::to_string(k / part) + " x " + std::to_string(part) + " + " +
                  std::to_string(k % part) + "; sub-batches are equal, a remainder is refused)");
  }
}

}  // namespace

std::int64_t subBatchSize(std::int64_t k, std::int64_t sub_batches, std::string_view what) {
  checkSplit(k, sub_batches, "count", what);
  return k / sub_batches;
}

std::int64_t subBatchCount(std::int64_t k, std::int64_t size, std::string_view what) {
  checkSplit(k, size, "size", what);
  return k / size;
}

}  // namespace swapscope
