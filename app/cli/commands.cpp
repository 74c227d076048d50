// SPDX-License-Identifier: MIT
#include "cli/commands.h"

#include <algorithm>
#include <iterator>
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
  out << "usage: swapscope <verb> [options]   (swapscope <verb> --help, or swapscope help <verb>,\n"
         "                                     for its options)\n"
         "       swapscope --version [--json]   (the version, the CUDA runtime and the GPUs)\n\n"
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

/// --version --json: what printVersion says, as a JSON document.
void printVersionJson(std::ostream& out) {
  const GpuInventory inv = queryGpuInventory();
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (const GpuDevice& d : inv.devices) {
    gpus.push_back({{"index", d.index},
                    {"name", d.name},
                    {"memory_bytes", d.total_memory},
                    {"compute_capability",
                     std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor)},
                    {"multiprocessors", d.multiprocessors},
                    {"pci_bus_id", d.pci_bus_id}});
  }
  const auto version = [](int v) {
    return v ? nlohmann::ordered_json(formatCudaVersion(v)) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json j{
      {"swapscope", SWAPSCOPE_VERSION},
      {"cuda", inv.built_with_cuda
                   ? nlohmann::ordered_json{{"runtime", version(inv.runtime_version)},
                                            {"driver", version(inv.driver_version)}}
                   : nlohmann::ordered_json(nullptr)},
      {"gpus", gpus},
      {"gpus_unavailable", inv.devices.empty() ? nlohmann::ordered_json(inv.unavailable_reason)
                                               : nlohmann::ordered_json(nullptr)}};
  out << j.dump(2, ' ', false, kReplaceInvalidUtf8) << '\n';
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
  std::string verb = args.front();
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (verb == "--help" || verb == "-h" || (verb == "help" && rest.empty())) {
    printUsage(out);
    return kExitOk;
  }
  if (verb == "help") {
    // help VERB: the verb's own --help.
    if (rest.size() > 1) {
      err << "swapscope help: give one verb, got " << rest.size() << " words ('"
          << terminalSafe(rest[1]) << "' after '" << terminalSafe(rest[0]) << "')\n";
      return kExitUsage;
    }
    verb = rest.front();
    if (verb == "help") {  // help on help: the general usage, which says how to ask
      printUsage(out);
      return kExitOk;
    }
    if (std::none_of(std::begin(kVerbs), std::end(kVerbs),
                     [&](const Verb& v) { return verb == v.name; })) {
      err << "swapscope help: unknown verb '" << terminalSafe(verb) << "'\n\n";
      printUsage(err);
      return kExitUsage;
    }
    rest = {"--help"};
  }
  if (verb == "--version") {
    // --json is its one option; any other word is refused rather than ignored.
    if (rest.size() == 2 && rest[0] == "--json" && rest[1] == "--json") {
      err << "swapscope --version: option '--json' is given twice\n";
      return kExitUsage;
    }
    if (rest.size() > 1 || (rest.size() == 1 && rest.front() != "--json")) {
      err << "swapscope --version: unexpected argument '"
          << terminalSafe(rest.front() == "--json" ? rest[1] : rest.front())
          << "' (--version takes --json only)\n";
      return kExitUsage;
    }
    if (rest.empty()) {
      printVersion(out);
    } else {
      printVersionJson(out);
    }
    return kExitOk;
  }
  for (const Verb& v : kVerbs) {
    if (verb != v.name) continue;
    try {
      return v.run(rest, out, err);
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
