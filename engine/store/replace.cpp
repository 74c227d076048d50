// SPDX-License-Identifier: MIT
#include "store/replace.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/error.h"
#include "common/files.h"
#include "store/run_db.h"
#include "store/sqlite.h"

namespace swapscope::store {

namespace fs = std::filesystem;

namespace {

/// How long folding the old file's -wal waits for another connection to let go of it.
constexpr int kFoldWaitMs = 1000;

std::string recordingCandidate(const std::string& target, int n) {
  const fs::path p(target);
  const std::string suffix = n == 1 ? ".recording" : ".recording-" + std::to_string(n);
  if (p.extension() == kRunDbExtension)
    return (p.parent_path() / (p.stem().string() + suffix + kRunDbExtension)).string();
  return target + suffix + kRunDbExtension;
}

bool exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

/// Folds `target`'s -wal (checkpointed, then removed by leaving WAL mode) or hot -journal
/// (rolled back by the first read) into it. Returns why it could not, or "".
std::string foldSideFiles(const std::string& target) {
  if (!exists(target + "-wal") && !exists(target + "-journal")) return "";
  try {
    Database old(target, Database::Mode::ReadWrite);
    old.setBusyTimeout(kFoldWaitMs);
    if (old.tryExec("SELECT count(*) FROM sqlite_schema; PRAGMA journal_mode = DELETE") !=
        SQLITE_OK) {
      return "its own side file could not be folded into it (" + old.lastError() +
             "; another process may hold it open)";
    }
  } catch (const Error& e) {
    return std::string("its own side file could not be folded into it: ") + e.what();
  }
  for (const char* side : {"-wal", "-journal"}) {
    if (exists(target + side)) return "its " + std::string(side) + " file is still there";
  }
  return "";
}

}  // namespace

std::string claimRecordingName(const std::string& target, std::vector<std::string>* earlier) {
  constexpr int kMaxRecordings = 1000;
  for (int n = 1; n <= kMaxRecordings; ++n) {
    const std::string name = recordingCandidate(target, n);
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::close(fd);
      // Earlier recordings past a name since removed too.
      for (int later = n + 1; earlier && later <= kMaxRecordings; ++later) {
        if (std::string other = recordingCandidate(target, later); exists(other))
          earlier->push_back(std::move(other));
      }
      return name;
    }
    if (errno != EEXIST) {
      throw Error(errno == EACCES || errno == EROFS || errno == ENOENT ? ErrorKind::BadInput
                                                                       : ErrorKind::Runtime,
                  "cannot create '" + name + "' to record the run that replaces '" + target +
                      "': " + std::strerror(errno));
    }
    if (earlier) earlier->push_back(name);
    if (const auto w = liveWriter(name)) {
      throwBadInput("'" + target + "' is already being replaced by a running swapscope " + w->kind +
                    " (pid " + std::to_string(w->pid) + " on " + w->host + ", started " +
                    w->started + ") that records into '" + name +
                    "': stop it or choose another file");
    }
  }
  throw Error(ErrorKind::Runtime, "cannot record a replacement of '" + target + "': '" +
                                      recordingCandidate(target, 1) + "' to '" +
                                      recordingCandidate(target, kMaxRecordings) +
                                      "' all exist; remove the recordings you no longer need");
}

std::string replaceWithRecording(const std::string& recording, const std::string& target) {
  if (const auto w = liveWriter(target))
    return "a running swapscope " + w->kind + " (pid " + std::to_string(w->pid) + ") writes it";
  if (std::string why = foldSideFiles(target); !why.empty()) return why;
  if (::rename(recording.c_str(), target.c_str()) != 0)
    return std::string("renaming failed: ") + std::strerror(errno);
  files::syncFolderOf(target);
  return "";
}

}  // namespace swapscope::store
