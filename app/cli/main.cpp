// SPDX-License-Identifier: MIT
/// @brief `swapscope`, the headless command-line program. It links no Qt.
#include <cerrno>
#include <csignal>
#include <iostream>

#include "cli/commands.h"
#include "common/files.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  // A write past the file-size limit then fails with EFBIG, which the output files handle (the
  // old file kept, the temporary removed), instead of killing the program with SIGXFSZ.
  std::signal(SIGXFSZ, SIG_IGN);
  const int code =
      swapscope::cli::runCli(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
  std::cout.flush();
  if (!std::cout) {  // e.g. a full disk or /dev/full: what was printed is lost, so say so
    const int err = errno;
    std::cerr << "swapscope: error: cannot write the standard output"
              << (err != 0 ? ": " + swapscope::files::errnoText(err) : std::string()) << '\n';
    return code == 0 ? 1 : code;
  }
  return code;
}
