// SPDX-License-Identifier: MIT
#include "cli/file_options.h"

namespace swapscope::cli {

void addForceFlag(ArgParser& args, const std::string& what) {
  args.flag("--force", "replace " + what + " if it exists (an input file is never replaced)");
}

files::OutputRules outputRules(const ArgParser& args,
                               std::initializer_list<const char*> input_options) {
  files::OutputRules rules;
  rules.force = args.has("--force");
  for (const char* option : input_options) {
    if (auto v = args.value(option)) {
      rules.inputs.push_back({"the " + std::string(option) + " file", *v});
    }
  }
  for (const std::string& p : args.positionalValues()) {
    rules.inputs.push_back({"the input", p});
  }
  return rules;
}

void checkOutputOption(const ArgParser& args, const char* option, const std::string& what,
                       const files::OutputRules& rules) {
  if (auto v = args.value(option)) files::checkOutputPath(*v, what, rules);
}

}  // namespace swapscope::cli
