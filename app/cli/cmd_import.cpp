// SPDX-License-Identifier: MIT
/// @brief `swapscope import FILE.onnx --out net.json`: the network JSON an ONNX model maps to.
#include "cli/commands.h"
#include "common/error.h"
#include "graph/network_json.h"
#include "importer/onnx_import.h"
#include "options/args.h"
#include "options/file_options.h"
#include "options/network_options.h"

namespace swapscope::cli {

int cmdImport(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  ArgParser args("swapscope import FILE.onnx --out net.json|- [--input CxHxW] [--force]",
                 "Maps an ONNX model exported from PyTorch onto Swapscope's layers (docs/onnx.md)\n"
                 "and writes the network JSON (docs/network-json.md), which --net reads. A node\n"
                 "that does not map is refused with its name, operator and position. The weights\n"
                 "the file may hold are not written: train --onnx FILE starts from them.");
  args.positionals({"FILE.onnx"},
                   "the ONNX model (not standard input: - is refused, ./- names a file called "
                   "'-')");
  args.option("--out", "FILE",
              "the network JSON to write (required); - prints it to standard output, and the "
              "summary to standard error");
  args.option("--input", "CxHxW", "the per-sample input shape instead of the graph input's");
  addForceFlag(args, "the --out file");
  if (!args.parse(argv)) {
    out << args.help();
    return kExitOk;
  }
  const std::string path = args.positionalValues().at(0);
  refuseStandardInput(path, "FILE.onnx", "an ONNX model", kOnnxModelIsReadInPlace);
  const std::string outPath = args.required("--out");
  files::OutputRules rules = outputRules(args, {});
  rules.inputs.push_back({"the ONNX model", path});  // never replaced, even with --force
  const bool toStdout =
      checkOutputOrStandardOutput(args, "--out", "the network file --out", rules, err);
  OnnxImportOptions options;
  if (auto input = args.value("--input")) options.input = parseShape(*input, "--input");
  const OnnxModel m = importOnnxFile(path, options);
  // With --out -, standard output holds the network JSON alone: the summary goes to standard
  // error.
  if (toStdout) {
    out << networkToText(m.net);
  } else {
    writeNetworkFile(m.net, outPath, rules);
  }
  (toStdout ? err : out) << "imported " << path << ": " << m.net.size() << " layers, input "
                         << m.net.sampleShape().toString() << ", " << m.net.classes() << " classes"
                         << (m.hasWeights() ? ", with weights" : "") << "\nwrote "
                         << (toStdout ? std::string("the network JSON to standard output")
                                      : outPath)
                         << '\n';
  return kExitOk;
}

}  // namespace swapscope::cli
