// SPDX-License-Identifier: MIT
#include "cli/commands.h"

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/bytes.h"
#include "common/error.h"
#include "runtime/gpu_inventory.h"

namespace swapscope::cli {
namespace {

struct Verb {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>&, std::ostream&, std::ostream&);
};

constexpr Verb kVerbs[] = {
    {"models", "list the model zoo", cmdModels},
    {"analyze", "static analysis: shapes, parameters, FLOPs, memory, GMAP, k_max", cmdAnalyze},
    {"import", "map an ONNX model exported from PyTorch onto a network JSON file", cmdImport},
    {"train", "train on the engine inside a budget under a swap policy", cmdTrain},
    {"profile", "the profiling stage: swap-all at five minibatches into a run database",
     cmdProfile},
    {"info", "summarise a run database", cmdInfo},
    {"plan", "fit the model to a run database; plan k and the swap set for a budget", cmdPlan},
    {"run", "execute a plan on the engine: predicted against measured", cmdRun},
    {"compare", "two run databases side by side: curves, PCIe, steps, predicted vs measured",
     cmdCompare},
    {"trace", "one recorded iteration as Chrome trace JSON for Perfetto", cmdTrace},
};

void printUsage(std::ostream& out) {
  out << "usage: swapscope <verb> [options]   (swapscope <verb> --help for its options)\n\n"
         "Plan and run CNN training under a GPU memory budget.\n\nverbs:\n";
  for (const Verb& v : kVerbs) {
    std::string name = v.name;
    name.resize(10, ' ');
    out << "  " << name << v.summary << '\n';
  }
  out << "\nexit codes: 0 ok, 1 runtime failure, 2 bad usage or bad input\n";
}

/// The version, and what this build and this machine can run on.
void printVersion(std::ostream& out) {
  out << "swapscope " << SWAPSCOPE_VERSION << '\n';
  const GpuInventory inv = queryGpuInventory();
  if (inv.built_with_cuda) {
    out << "CUDA runtime " << formatCudaVersion(inv.runtime_version) << ", driver "
        << (inv.driver_version ? formatCudaVersion(inv.driver_version) : "none") << '\n';
  }
  if (inv.devices.empty()) out << "GPUs: none (" << inv.unavailable_reason << ")\n";
  for (const GpuDevice& d : inv.devices) {
    out << "GPU " << d.index << ": " << d.name << ", " << formatBytes(d.total_memory)
        << ", compute capability " << d.compute_major << '.' << d.compute_minor << ", "
        << d.multiprocessors << " SMs, PCI " << d.pci_bus_id << '\n';
  }
}

/// A message as it may reach a terminal: control characters (an escape sequence in a file name,
/// say) are written as \xNN, so a hostile name cannot move the cursor or clear the screen.
std::string terminalSafe(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      s += "\\x";
      s += kHex[c >> 4];
      s += kHex[c & 0xf];
    } else {
      s += ch;
    }
  }
  return s;
}

}  // namespace

int runCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty()) {
    printUsage(err);
    return kExitUsage;
  }
  const std::string& verb = args.front();
  if (verb == "--help" || verb == "-h" || verb == "help") {
    printUsage(out);
    return kExitOk;
  }
  if (verb == "--version") {
    printVersion(out);
    return kExitOk;
  }
  for (const Verb& v : kVerbs) {
    if (verb != v.name) continue;
    try {
      return v.run({args.begin() + 1, args.end()}, out, err);
    } catch (const Error& e) {
      err << "swapscope " << verb << ": error: " << terminalSafe(e.what()) << '\n';
      return e.kind() == ErrorKind::BadInput ? kExitUsage : kExitFailure;
    } catch (const nlohmann::json::exception& e) {
      err << "swapscope " << verb << ": error: " << terminalSafe(e.what()) << '\n';
      return kExitFailure;
    } catch (const std::exception& e) {
      err << "swapscope " << verb << ": internal error: " << terminalSafe(e.what()) << '\n';
      return kExitFailure;
    }
  }
  err << "swapscope: unknown verb '" << terminalSafe(verb) << "'\n\n";
  printUsage(err);
  return kExitUsage;
}

}  // namespace swapscope::cli
