// SPDX-License-Identifier: MIT
#include "cli/sub_batch_options.h"

#include <charconv>
#include <string>

#include "analysis/sub_batch.h"
#include "common/error.h"

namespace swapscope::cli {
namespace {

/// The option's integer value, any sign (the range is checked against k afterwards); an integer
/// beyond 64 bits is out of the range 1..k.
std::int64_t integerValue(const std::string& option, const std::string& text, std::int64_t k) {
  std::int64_t out = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec == std::errc::result_out_of_range) (void)parseInteger(text, "option " + option, 1, k);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    throwBadInput("option " + option + ": expected an integer, got '" + text + "'");
  }
  return out;
}

}  // namespace

void addSubBatchOptions(ArgParser& args, const char* autoHelp) {
  std::string help =
      "run each minibatch as S sub-batches of K/S samples, the gradients accumulating before "
      "one SGD update; the memory is one sub-batch's (default 1; S must divide K)";
  if (autoHelp) help += "; " + std::string(autoHelp);
  args.option("--sub-batches", autoHelp ? "S|auto" : "S", help);
  args.option("--sub-batch-size", "B", "the same as --sub-batches K/B (B must divide K)");
}

std::int64_t subBatchOption(const ArgParser& args, std::int64_t k, bool allowAuto) {
  const auto count = args.value("--sub-batches");
  const auto size = args.value("--sub-batch-size");
  if (count && size) {
    throwBadInput("give at most one of --sub-batches S and --sub-batch-size B, not both (" +
                  *count + " and " + *size + ")");
  }
  if (count) {
    if (allowAuto && *count == "auto") return 0;
    const std::int64_t s = integerValue("--sub-batches", *count, k);
    subBatchSize(k, s, "--sub-batches " + *count);  // refuses a count that does not split k
    return s;
  }
  if (size) {
    return subBatchCount(k, integerValue("--sub-batch-size", *size, k),
                         "--sub-batch-size " + *size);
  }
  return 1;
}

}  // namespace swapscope::cli
