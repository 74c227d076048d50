// SPDX-License-Identifier: MIT
/// @brief The size and option parsers: parseByteSize (common/bytes.h), the CLI's ArgParser
/// (options/args.h) and parseShape, parseNumber and the option helpers of
/// options/network_options.h. The first byte picks the parser ('b' parseByteSize, 's' parseShape,
/// 'n' parseNumber, 'a' ArgParser, 'p' ArgParser with two positionals; any other byte by its value
/// modulo 5, in that order), the rest is its text; for ArgParser the text is the argument words,
/// one per line. Invariants: what a parser accepts is in the range it promises.
#include <cmath>
#include <string>
#include <vector>

#include "common/batch_limit.h"
#include "common/bytes.h"
#include "common/error.h"
#include "fuzz_common.h"
#include "options/args.h"
#include "options/network_options.h"

using namespace swapscope;

namespace {

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    out.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

void byteSize(const std::string& text) {
  const std::int64_t v = parseByteSize(text, "--budget");
  if (v < 0) fuzz::finding("parseByteSize accepted '" + text + "' as " + std::to_string(v));
  (void)formatBytes(v);
}

void shape(const std::string& text) {
  const Shape s = cli::parseShape(text, "--input");
  if (s.dims.empty()) fuzz::finding("parseShape accepted '" + text + "' as no dimensions");
  for (const std::int64_t d : s.dims) {
    if (d <= 0) fuzz::finding("parseShape accepted '" + text + "' with a size below 1");
  }
}

void number(const std::string& text) {
  const double v = cli::parseNumber(text, "--lr", 0, 10);
  if (!(v >= 0 && v <= 10)) fuzz::finding("parseNumber accepted '" + text + "' out of [0, 10]");
}

/// A verb's parser, declared like `analyze` and `compare` (positional files), then queried the
/// way the verbs query it.
void argParser(const std::vector<std::string>& argv, bool positionals) {
  cli::ArgParser args("swapscope fuzz [options]", "The option set of a verb.");
  cli::addNetworkOptions(args);
  args.option("--batch", "K", "minibatch size");
  args.option("--budget", "SIZE", "GPU memory budget");
  args.option("--policy", "P", "swap policy");
  args.option("--lr", "X", "learning rate");
  args.option("--seed", "N", "seed");
  args.flag("--json", "JSON output");
  args.flag("--gmap", "print the GMAP");
  if (positionals) args.positionals({"A", "B"}, "two run databases");
  if (!args.parse(argv)) {
    if (args.help().empty()) fuzz::finding("empty --help");
    return;
  }
  if (positionals && args.positionalValues().size() != 2) {
    fuzz::finding("parse() returned without both positional arguments");
  }
  if (auto classes = args.positiveInt("--classes"); classes && *classes <= 0) {
    fuzz::finding("positiveInt accepted a value below 1");
  }
  if (auto v = args.value("--input")) shape(*v);
  if (auto v = args.value("--budget")) byteSize(*v);
  if (auto v = args.value("--lr")) number(*v);
  (void)cli::policyOption(args);
  (void)cli::seedOption(args);
  const std::int64_t k = cli::batchOption(args);
  if (k < 1 || k > kMaxBatch) fuzz::finding("batchOption accepted " + std::to_string(k));
  (void)args.required("--model");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(fuzz::asText(data + 1, size - 1));
  try {
    int parser = data[0] % 5;
    for (int i = 0; i < 5; ++i) {
      if (data[0] == "bsnap"[i]) parser = i;
    }
    switch (parser) {
      case 0:
        byteSize(text);
        break;
      case 1:
        shape(text);
        break;
      case 2:
        number(text);
        break;
      case 3:
        argParser(words(text), false);
        break;
      case 4:
        argParser(words(text), true);
        break;
    }
  } catch (const Error&) {
  }
  return 0;
}
