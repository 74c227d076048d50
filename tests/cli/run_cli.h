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

/// `swapscope plan` of a swap-all plan at k = 8 in 16 MiB from the fmnist-cnn sample run in
/// `sampleRuns`, written to `out` (replaced): a short plan for tests that run one.
inline Result writeFmnistPlan(const std::string& sampleRuns, const std::string& out) {
  return run({"plan", "--db", sampleRuns + "/fmnist-cnn-cpu-profile.swapdb", "--budget", "16MiB",
              "--policy", "swap-all", "--batch", "8", "--out", out, "--force"});
}

}  // namespace swapscope::cli::testing
