// SPDX-License-Identifier: MIT
/// @brief Run-database reader: the input is written to a file in a private directory (under
/// /dev/shm where it exists) and opened the way `swapscope info` opens it: RunReader's checks,
/// load(), the row counts and the per-minibatch summaries, printed as text and as JSON (cmdInfo
/// itself, in-process). Any -wal, -shm or -journal file SQLite leaves is removed after each input.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <streambuf>

#include "cli/commands.h"
#include "common/error.h"
#include "fuzz_common.h"

using namespace swapscope;
namespace fs = std::filesystem;

namespace {

/// Discards what is written (the summaries are formatted in full, then dropped).
class NullBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

struct Workspace {
  std::string dir, path;
  Workspace() {
    std::error_code ec;
    const fs::path base = fs::is_directory("/dev/shm", ec) && access("/dev/shm", W_OK) == 0
                              ? fs::path("/dev/shm")
                              : fs::temp_directory_path();
    std::string tmpl = (base / "swapscope-fuzz-run-db-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      fuzz::finding("cannot create a directory under " + base.string() + ": " +
                    std::strerror(errno));
    }
    dir = tmpl;
    path = dir + "/run.swapdb";
  }
  ~Workspace() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  void write(const std::uint8_t* data, std::size_t size) const {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) fuzz::finding("cannot write " + path + ": " + std::strerror(errno));
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = ::write(fd, data + done, size - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fuzz::finding("cannot write " + path + ": " + std::strerror(errno));
      done += static_cast<std::size_t>(n);
    }
    close(fd);
  }
  void clean() const {
    std::error_code ec;
    for (const char* suffix : {"-wal", "-shm", "-journal"})
      fs::remove(path + suffix, ec);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Workspace ws;
  static NullBuffer nullBuffer;
  static std::ostream out(&nullBuffer);
  ws.write(data, size);
  for (const bool json : {false, true}) {
    std::vector<std::string> argv{"--db", ws.path};
    if (json) argv.emplace_back("--json");
    try {
      cli::cmdInfo(argv, out, out);
    } catch (const Error&) {
      break;  // the reader refused the file: the JSON form would refuse it the same way
    }
  }
  ws.clean();
  return 0;
}
