// SPDX-License-Identifier: MIT
#include "options/file_options.h"

#include "common/error.h"
#include "common/resolved_path.h"
#include "store/run_db.h"

namespace swapscope::cli {

void addForceFlag(ArgParser& args, const std::string& what) {
  args.flag("--force", "replace " + what + " if it exists (an input file is never replaced)");
}

files::OutputRules outputRules(const ArgParser& args,
                               std::initializer_list<const char*> input_options) {
  files::OutputRules rules;
  rules.force = args.has("--force");
  for (const char* option : input_options) {
    if (auto v = args.value(option); v && *v != kStandardInput) {
      addInput(rules, "the " + std::string(option) + " file", *v);
    }
  }
  for (const std::string& p : args.positionalValues()) {
    if (p != kStandardInput) addInput(rules, "the input", p);
  }
  return rules;
}

void addInput(files::OutputRules& rules, const std::string& what, const std::string& path) {
  rules.inputs.push_back({what, path});
  // SQLite names the companions after the database's resolved path, so those of a database
  // opened through a symbolic link lie beside the file it points to.
  const std::string resolved = files::resolvedPath(path).string();
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    rules.inputs.push_back({what + "'s " + suffix + " file", path + suffix});
    if (files::resolvedPath(path + suffix).string() != resolved + suffix)
      rules.inputs.push_back({what + "'s " + suffix + " file", resolved + suffix});
  }
}

void addFashionMnistInputs(files::OutputRules& rules, const std::string& dir) {
  for (const char* stem : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                           "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}) {
    for (const char* suffix : {".gz", ""})
      rules.inputs.push_back({"the data set file", dir + "/" + stem + suffix});
  }
}

void warnForceWithoutOutput(const ArgParser& args, const char* output, std::ostream& err) {
  if (args.has("--force") && !args.has(output))
    warnNoEffect(err, "--force", std::string("no file is written without ") + output);
}

void checkOutputOption(const ArgParser& args, const char* option, const std::string& what,
                       const files::OutputRules& rules) {
  if (auto v = args.value(option)) {
    files::checkOutputPath(*v, what, rules);
    // Not even --force replaces a database that a live profile or run is still writing.
    if (rules.force) store::refuseIfLiveWriter(*v);
  }
}

bool checkOutputOrStandardOutput(const ArgParser& args, const char* option, const std::string& what,
                                 const files::OutputRules& rules, std::ostream& err) {
  if (args.value(option) != kStandardOutput) {
    checkOutputOption(args, option, what, rules);
    return false;
  }
  if (rules.force) {
    warnNoEffect(err, "--force",
                 std::string(option) + " - writes to standard output, which replaces no file");
  }
  return true;
}

void refuseStandardOutput(const ArgParser& args, const char* option, const std::string& why) {
  if (args.value(option) != kStandardOutput) return;
  throwBadInput(std::string(option) + " -: - would be standard output, but " + why +
                "; name a file (./- names a file called '-')");
}

std::string standardInputName(const std::string& option) {
  return "standard input (" + option + " -)";
}

void refuseStandardInput(const std::string& value, const std::string& option,
                         const std::string& what, const std::string& why, const std::string& kind) {
  if (value != kStandardInput) return;
  throwBadInput(option + " -: standard input is not supported for " + what + " (" + why +
                "); name a " + kind + " (./- names a " + kind + " called '-')");
}

}  // namespace swapscope::cli
