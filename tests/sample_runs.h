// SPDX-License-Identifier: MIT
/// @brief The repository's sample run databases (sample_runs/), as every test names them: they
/// are only read. SWAPSCOPE_SAMPLE_RUNS_DIR is defined for every test binary (swapscope_test).
#pragma once

#include <string>

namespace swapscope::testing {

/// The folder sample_runs/.
inline std::string sampleRunsDir() {
  return SWAPSCOPE_SAMPLE_RUNS_DIR;
}
/// sample_runs/`name`.
inline std::string sampleRun(const std::string& name) {
  return sampleRunsDir() + "/" + name;
}
/// The fmnist-cnn profile (k = 12, 24, 47, 63, 94).
inline std::string fmnistRun() {
  return sampleRun("fmnist-cnn-cpu-profile.swapdb");
}
/// The resnet56 (32x32 input) profile.
inline std::string resnet56Run() {
  return sampleRun("resnet56-32x32-cpu-profile.swapdb");
}

}  // namespace swapscope::testing
