// SPDX-License-Identifier: MIT
/// @brief The one way Swapscope reads and writes the user's files.
///
/// Inputs: a file the user names (network, plan, run database, data set, weights) must be a
/// readable regular file, not a folder, FIFO or device, and no larger than the format allows.
/// Reading never blocks on a FIFO and never loads an unbounded file.
///
/// Outputs: an existing file is replaced only when the user says so (--force); a path that is the
/// same file as one of the command's inputs (same device and inode, whatever the name) is never
/// replaced. Every output is written to a temporary file in the target's folder, flushed to disk
/// and renamed over the target, so a failure (full disk, quota, signal) leaves the old file
/// byte-identical and no temporary file behind.
#pragma once

#include <sys/types.h>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace swapscope::files {

/// A file's identity: two paths name the same file exactly when these are equal.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  friend bool operator==(const FileId&, const FileId&) = default;
};

/// The identity of the file at `path` (symbolic links followed), or nullopt where none exists.
std::optional<FileId> identity(const std::string& path);

/// An input of a command, for the same-file check of its outputs: what it is ("the network
/// --net") and its path.
struct Input {
  std::string what;
  std::string path;
};

/// Checks that `path` is a readable regular file of at most `max_bytes` bytes (0: no limit).
/// Throws Error(BadInput) that names `what`, the path and the reason ("is a directory", "is a
/// FIFO, not a regular file", "permission denied", "no such file", "is 3.0 GiB, more than ...").
/// Returns the file's size.
std::uint64_t checkInputFile(const std::string& path, std::string_view what,
                             std::uint64_t max_bytes = 0);

/// Reads a whole input file after the same checks, without ever blocking on a FIFO.
std::string readInputFile(const std::string& path, std::string_view what, std::uint64_t max_bytes);

/// Reads standard input to its end, for an input option given as "-" (`--net -`, `run --plan -`):
/// at most `max_bytes` bytes (0: no limit), more is Error(BadInput) naming `what` and the limit;
/// a read error is Error(Runtime) naming `what`. Unlike a named file, a pipe or a terminal is
/// read as it comes (that is what "-" asks for).
std::string readStandardInput(std::string_view what, std::uint64_t max_bytes);

/// The largest network or plan JSON file read (both are a few hundred KiB for ResNet-152).
inline constexpr std::uint64_t kMaxJsonFileBytes = 64ull << 20;

/// What may happen to an output path.
struct OutputRules {
  bool force = false;              ///< replace an existing file (never an input, never a non-file)
  std::vector<Input> inputs = {};  ///< the command's inputs: never replaced, with or without force
};

/// Checks an output path before any work is done, so that a long run does not end in a refusal:
/// the path must not be one of the inputs (always refused), must not exist unless rules.force
/// (refused: "exists; pass --force to replace it"), must not be a folder or other non-file, must
/// not be the -wal, -shm or -journal file of an SQLite database beside it (always refused: SQLite
/// reads those as part of the database), and its folder must exist. Throws Error(BadInput)
/// naming `what` and the path.
void checkOutputPath(const std::string& path, std::string_view what, const OutputRules& rules);

/// A file being written: bytes go to a temporary file next to the target; commit() flushes it
/// to disk and renames it over the target. Destroyed without commit(), or when commit() fails,
/// the temporary file is removed and the target is untouched.
class AtomicFile {
 public:
  /// Opens the temporary file. `replace` false: commit() refuses (BadInput) if the target has
  /// appeared since (the rename itself refuses, so there is no window).
  AtomicFile(std::string path, std::string what, bool replace);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// Appends bytes; Error(Runtime) naming the file and the reason (e.g. "No space left on
  /// device") on failure.
  void write(const void* data, std::size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }

  /// Flushes, fsyncs, renames over the target and fsyncs the folder.
  void commit();

  const std::string& path() const { return m_path; }

 private:
  void writeAll(const char* data, std::size_t size);
  void flushBuffer();
  void discard() noexcept;

  std::string m_path, m_what, m_tmp;
  bool m_replace;
  int m_fd = -1;
  std::string m_buffer;
};

/// checkOutputPath(), then the whole content through an AtomicFile.
void writeOutputFile(const std::string& path, std::string_view what, std::string_view content,
                     const OutputRules& rules);

/// strerror for errno values, thread-safe.
std::string errnoText(int err);

/// Renames `from` to `to` only where `to` does not exist, with no moment where it could replace
/// a file that appeared there: a rename that does not replace, else (a file system without it)
/// a hard link and an unlink, else (one without hard links either) a rename after a last look.
/// 0, or the errno (EEXIST: `to` exists).
int renameWithoutReplacing(const std::string& from, const std::string& to);

/// Makes a rename or a creation in the folder of `path` durable (an fsync of the folder).
void syncFolderOf(const std::string& path);

}  // namespace swapscope::files
