// SPDX-License-Identifier: MIT
/// @brief `swapscope`, the headless command-line program. It links no Qt.
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  const int code =
      swapscope::cli::runCli(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
  std::cout.flush();
  return code;
}
