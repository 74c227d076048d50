// SPDX-License-Identifier: MIT
/// Runs a CLI verb in-process and captures its exit code, stdout and stderr.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace swapscope::cli::testing {

struct Result {
  int code;
  std::string out, err;
};

inline Result run(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int code = runCli(args, out, err);
  return {code, out.str(), err.str()};
}

}  // namespace swapscope::cli::testing
