// SPDX-License-Identifier: MIT
#include "options/network_options.h"

#include <charconv>
#include <sstream>

#include "analysis/layer_cost.h"
#include "common/error.h"
#include "graph/network_json.h"
#include "graph/zoo.h"
#include "importer/onnx_import.h"
#include "options/file_options.h"

namespace swapscope::cli {

void addNetworkOptions(ArgParser& args) {
  args.option("--model", "NAME", "a zoo model (see `swapscope models`)");
  args.option("--net", "FILE",
              "a network JSON file (docs/network-json.md); - reads it from standard input, "
              "./- names a file called '-'");
  args.option("--onnx", "FILE",
              "an ONNX model exported from PyTorch (docs/onnx.md; not standard input: - is "
              "refused, ./- names a file called '-')");
  args.option("--input", "CxHxW", "input size of a zoo or ONNX model, e.g. 3x32x32");
  args.option("--classes", "N", "class count of a zoo model");
}

Shape parseShape(const std::string& text, const std::string& what) {
  Shape shape;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find('x', start);
    const std::string part = text.substr(start, end == std::string::npos ? end : end - start);
    std::int64_t v = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || v <= 0) {
      throwBadInput(what + ": expected positive sizes like 3x224x224, got '" + text + "'");
    }
    shape.dims.push_back(v);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return shape;
}

void refuseOnnxFromStandardInput(const ArgParser& args) {
  refuseStandardInput(args.value("--onnx").value_or(""), "--onnx", "an ONNX model",
                      kOnnxModelIsReadInPlace);
}

LoadedNetwork loadNetworkAndWeights(const ArgParser& args) {
  const auto onnxFile = args.value("--onnx");
  if (!onnxFile) return {loadNetwork(args), {}, {}};
  if (args.has("--model") || args.has("--net")) {
    throwBadInput("give one of --model, --net or --onnx, not two");
  }
  if (args.has("--classes")) {
    throwBadInput("--classes applies to zoo models; an ONNX model sets its classes itself");
  }
  refuseOnnxFromStandardInput(args);
  OnnxImportOptions options;
  if (auto input = args.value("--input")) options.input = parseShape(*input, "--input");
  OnnxModel m = importOnnxFile(*onnxFile, options);
  try {
    computeLayerCosts(m.net);
  } catch (const Error& e) {
    throw Error(e.kind(), *onnxFile + ": " + e.what());
  }
  return {std::move(m.net), std::move(m.weights), std::move(m.running_stats)};
}

Network loadNetwork(const ArgParser& args) {
  if (args.has("--onnx")) return loadNetworkAndWeights(args).net;
  const auto model = args.value("--model");
  const auto file = args.value("--net");
  if (model && file) throwBadInput("give either --model or --net, not both");
  if (!model && !file) throwBadInput("name a network with --model NAME, --net FILE or --onnx FILE");
  if (file) {
    if (args.has("--input") || args.has("--classes")) {
      throwBadInput("--input and --classes apply to zoo models; a network file sets them itself");
    }
    // --net - reads the network JSON from standard input (`import ... --out - | analyze --net -`).
    const bool piped = *file == kStandardInput;
    const std::string origin = piped ? standardInputName("--net") : *file;
    Network net = piped ? networkFromText(files::readStandardInput("the network JSON --net -",
                                                                   files::kMaxJsonFileBytes),
                                          origin)
                        : readNetworkFile(*file);
    // Counted once here so that a network too large for 64-bit counts names its file.
    try {
      computeLayerCosts(net);
    } catch (const Error& e) {
      throw Error(e.kind(), origin + ": " + e.what());
    }
    return net;
  }
  ZooOptions options;
  if (auto input = args.value("--input")) options.input = parseShape(*input, "--input");
  options.classes = args.positiveInt("--classes");
  return buildZooModel(*model, options);
}

void checkZooOptions(const ArgParser& args, const std::string& otherwise) {
  if (args.has("--model") || args.has("--net") || args.has("--onnx"))
    return;  // loadNetwork checks these
  for (const char* option : {"--input", "--classes"}) {
    if (args.has(option)) {
      throwBadInput(std::string(option) + " " + *args.value(option) +
                    " shapes a zoo model, but no --model is given: " + otherwise +
                    " (give --model NAME with it, or leave it out)");
    }
  }
}

std::int64_t batchOption(const ArgParser& args) {
  const std::optional<std::int64_t> batch = args.batch("--batch");
  if (!batch) args.required("--batch");  // throws the missing-option error
  return *batch;
}

Policy parsePolicy(const std::string& name, PolicyRows rows) {
  const auto policy = policyFromName(name);
  if (rows == PolicyRows::Fixed && (!policy || !policyInfo(*policy).fixed())) {
    throwBadInput("--policy: unknown policy '" + name + "' (choose " +
                  joinPolicyNames(PolicyRows::Fixed, ", ", " or ") + ")");
  }
  if (!policy) {
    throwBadInput("--policy: unknown policy '" + name + "' (" +
                  joinPolicyNames(PolicyRows::All, ", ", ", ") + ")");
  }
  return *policy;
}

Policy policyOption(const ArgParser& args) {
  return parsePolicy(args.value("--policy").value_or(std::string(policyName(Policy::KeepAll))),
                     PolicyRows::Fixed);
}

double parseNumber(const std::string& text, const std::string& what, double lo, double hi) {
  // Decimal digits only, as parseInteger reads them: no leading space, sign "+", or hex (which
  // std::stod would take: "0x10" is not a learning rate of 16 by accident).
  double v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v, std::chars_format::general);
  const std::size_t used = ec == std::errc() ? static_cast<std::size_t>(ptr - text.data()) : 0;
  if (used != text.size() || text.empty() || !(v >= lo && v <= hi)) {
    std::ostringstream range;
    range << lo << " to " << hi;
    throwBadInput(what + ": '" + text + "' is not a number from " + range.str());
  }
  return v;
}

std::uint64_t seedOption(const ArgParser& args) {
  const auto s = args.value("--seed");
  if (!s) return 1;
  // A whole number from 0 to 2^53 (every one of them a double holds exactly), said as such.
  const std::string range = "a whole number from 0 to 9007199254740992";
  if (s->empty() || s->find_first_not_of("0123456789") != std::string::npos || s->size() > 16) {
    throwBadInput("--seed: '" + *s + "' is not " + range);
  }
  const std::uint64_t v = std::stoull(*s);
  if (v > 9007199254740992ULL) throwBadInput("--seed: '" + *s + "' is not " + range);
  return v;
}

}  // namespace swapscope::cli
