// SPDX-License-Identifier: MIT
#include "common/files.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>

#include "common/bytes.h"
#include "common/error.h"
#include "common/format.h"
#include "common/resolved_path.h"

namespace swapscope::files {
namespace {

std::string quoted(std::string_view what, const std::string& path) {
  return std::string(what) + " '" + path + "'";
}

/// What a non-regular file is, for messages.
std::string kindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

std::string openErrorText(int err) {
  switch (err) {
    case ENOENT:
      return "no such file";
    case EACCES:
      return "permission denied";
    case ENOTDIR:
      return "a component of the path is not a directory";
    case ELOOP:
      return "too many symbolic links";
    default:
      return errnoText(err);
  }
}

/// Opens an input without blocking (a FIFO with no writer would block a plain open) and checks
/// that it is a regular file within the size limit. Returns the descriptor and the size.
std::pair<int, std::uint64_t> openInput(const std::string& path, std::string_view what,
                                        std::uint64_t max_bytes) {
  if (path.empty()) throwBadInput(std::string(what) + ": the file name is empty");
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    // Opening a directory read-only succeeds on Linux; EISDIR comes only from odd cases.
    if (err == EISDIR) throwBadInput(quoted(what, path) + " is a directory, not a file");
    throwBadInput("cannot open " + quoted(what, path) + ": " + openErrorText(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throwBadInput("cannot read " + quoted(what, path) + ": " + errnoText(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throwBadInput(quoted(what, path) + " is " + kindOf(st.st_mode) + ", not a regular file");
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (max_bytes > 0 && size > max_bytes) {
    ::close(fd);
    throwBadInput(quoted(what, path) + " is " + formatBytes(static_cast<std::int64_t>(size)) +
                  ", more than the " + formatBytes(static_cast<std::int64_t>(max_bytes)) +
                  " such a file may have");
  }
  return {fd, size};
}

/// The process's umask, read without changing it (umask(2) cannot read without writing, and
/// writing it races with other threads creating files).
mode_t currentUmask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) == 0) {
      try {
        return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
      } catch (const std::exception&) {
        break;
      }
    }
  }
  return 022;
}

/// Whether `path` is a regular file that begins as every SQLite database does; none where it is
/// a regular file that cannot be read (so that nobody can tell).
std::optional<bool> isSqliteDatabase(const std::string& path) {
  static constexpr char kMagic[] = "SQLite format 3";  // and its terminating 0: 16 bytes
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  char head[sizeof kMagic] = {};
  const ssize_t got = ::read(fd, head, sizeof head);
  ::close(fd);
  if (got < 0) return std::nullopt;
  return got == static_cast<ssize_t>(sizeof head) && std::memcmp(head, kMagic, sizeof kMagic) == 0;
}

/// Where `path` names the -wal, -shm or -journal file of an SQLite database beside it, or of a
/// file that cannot be read to tell, that file and the suffix. SQLite reads those files as part of
/// the database (a -wal's frames are its last transactions), so writing one, or replacing it
/// while the database is open, loses what the database holds.
struct Companion {
  std::string database, suffix;
  bool unreadable = false;
};
std::optional<Companion> sqliteCompanion(const std::string& path) {
  for (const std::string& name : {path, resolvedPath(path).string()}) {
    for (const char* suffix : {"-wal", "-shm", "-journal"}) {
      const std::size_t n = std::strlen(suffix);
      if (name.size() <= n || name.compare(name.size() - n, n, suffix) != 0) continue;
      const std::string database = name.substr(0, name.size() - n);
      const std::optional<bool> is = isSqliteDatabase(database);
      if (!is || *is) return Companion{database, suffix, !is};
    }
  }
  return std::nullopt;
}

std::string folderOf(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

}  // namespace

std::string errnoText(int err) {
  char buf[256];
  // GNU strerror_r returns the message (possibly not in buf).
  return ::strerror_r(err, buf, sizeof buf);
}

std::optional<FileId> identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{st.st_dev, st.st_ino};
}

std::uint64_t checkInputFile(const std::string& path, std::string_view what,
                             std::uint64_t max_bytes) {
  const auto [fd, size] = openInput(path, what, max_bytes);
  ::close(fd);
  return size;
}

std::string readInputFile(const std::string& path, std::string_view what, std::uint64_t max_bytes) {
  const auto [fd, size] = openInput(path, what, max_bytes);
  std::string text;
  text.resize(static_cast<std::size_t>(size));
  std::size_t got = 0;
  while (true) {
    if (got == text.size()) {
      // The file may have grown since fstat; read on up to the limit.
      if (max_bytes > 0 && got >= max_bytes) {
        char probe;
        const ssize_t extra = ::read(fd, &probe, 1);
        if (extra > 0) {
          ::close(fd);
          throwBadInput(quoted(what, path) + " grew past " +
                        formatBytes(static_cast<std::int64_t>(max_bytes)) + " while being read");
        }
        break;
      }
      text.resize(text.size() + 4096);
    }
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw Error(ErrorKind::Runtime, "cannot read " + quoted(what, path) + ": " + errnoText(err));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  return text;
}

std::string readStandardInput(std::string_view what, std::uint64_t max_bytes) {
  std::string text;
  char buffer[65536];
  while (true) {
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {  // a descriptor left non-blocking
        pollfd p{STDIN_FILENO, POLLIN, 0};
        ::poll(&p, 1, -1);
        continue;
      }
      throw Error(ErrorKind::Runtime,
                  "cannot read " + std::string(what) + " from standard input: " + errnoText(errno));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (max_bytes > 0 && text.size() > max_bytes) {
      throwBadInput(std::string(what) + " on standard input is more than the " +
                    formatBytes(static_cast<std::int64_t>(max_bytes)) + " such a file may have");
    }
  }
  return text;
}

void checkOutputPath(const std::string& path, std::string_view what, const OutputRules& rules) {
  if (path.empty()) throwBadInput(std::string(what) + ": the file name is empty");
  auto refuse = [&](const Input& in) {
    throwBadInput(quoted(what, path) + " is the same file as " + quoted(in.what, in.path) +
                  "; an input is never overwritten, not even with --force");
  };
  // By name too, for an input that does not exist yet: a run database's -wal or -journal file
  // written by anyone else would be read by SQLite as part of the database. Names are compared
  // resolved, so a symbolic link to the input's folder names it as well.
  const std::filesystem::path out = resolvedPath(path);
  for (const Input& in : rules.inputs) {
    if (resolvedPath(in.path) == out) refuse(in);
  }
  if (const auto c = sqliteCompanion(path)) {
    const std::string whose =
        c->unreadable ? "'" + c->database +
                            "' (which cannot be read to tell whether it is an SQLite database), "
                            "which SQLite would read as part of it"
                      : "the SQLite database '" + c->database +
                            "', which SQLite reads as part of that database";
    throwBadInput(quoted(what, path) + " is the " + c->suffix + " file of " + whose +
                  "; it is never written, not even with --force: choose another name");
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    const FileId id{st.st_dev, st.st_ino};
    for (const Input& in : rules.inputs) {
      if (identity(in.path) == id) refuse(in);
    }
    if (!S_ISREG(st.st_mode)) {
      throwBadInput(quoted(what, path) + " is " + kindOf(st.st_mode) + "; give a file name");
    }
    if (!rules.force) {
      throwBadInput(quoted(what, path) + " exists; pass --force to replace it");
    }
  } else if (errno != ENOENT) {
    throwBadInput("cannot write " + quoted(what, path) + ": " + openErrorText(errno));
  } else if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode) && !rules.force) {
    // A symbolic link to a file that does not exist: the name is taken all the same (the write
    // replaces the link with the file).
    throwBadInput(quoted(what, path) +
                  " exists as a symbolic link to a missing file; pass --force to replace it");
  }
  const std::string folder = folderOf(path);
  struct stat dir {};
  if (::stat(folder.c_str(), &dir) != 0) {
    throwBadInput("cannot write " + quoted(what, path) + ": the folder '" + folder +
                  "' does not exist");
  }
  if (!S_ISDIR(dir.st_mode)) {
    throwBadInput("cannot write " + quoted(what, path) + ": '" + folder + "' is not a folder");
  }
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    throwBadInput("cannot write " + quoted(what, path) + ": the folder '" + folder +
                  "' is not writable (" + errnoText(errno) + ")");
  }
}

AtomicFile::AtomicFile(std::string path, std::string what, bool replace)
    : m_path(std::move(path)), m_what(std::move(what)), m_replace(replace) {
  const std::filesystem::path target(m_path);
  const std::string folder = folderOf(m_path);
  // Within a file name's 255 bytes however long the target's name is (up to 255 bytes itself):
  // its name cut short, never inside a UTF-8 character.
  constexpr std::size_t kNameMax = 255;
  const std::string suffix = ".tmp.XXXXXX";
  std::string base = target.filename().string();
  if (base.size() > kNameMax - 1 - suffix.size()) {
    base.resize(kNameMax - 1 - suffix.size());
    dropCutUtf8Character(base);
  }
  m_tmp = folder + "/." + base + suffix;
  m_fd = ::mkostemp(m_tmp.data(), O_CLOEXEC);
  if (m_fd < 0) {
    const int err = errno;
    m_tmp.clear();
    throw Error(ErrorKind::Runtime, "cannot write " + quoted(m_what, m_path) +
                                        ": cannot create a temporary file in '" + folder +
                                        "': " + errnoText(err));
  }
  // mkostemp creates mode 0600; give the file the mode a plain creation would, or keep the
  // mode of the file it replaces.
  struct stat old {};
  const mode_t mode =
      ::stat(m_path.c_str(), &old) == 0 ? (old.st_mode & 07777) : (0666 & ~currentUmask());
  ::fchmod(m_fd, mode);
  m_buffer.reserve(1 << 16);
}

AtomicFile::~AtomicFile() {
  discard();
}

void AtomicFile::discard() noexcept {
  if (m_fd >= 0) ::close(m_fd);
  m_fd = -1;
  if (!m_tmp.empty()) ::unlink(m_tmp.c_str());
  m_tmp.clear();
}

void AtomicFile::writeAll(const char* data, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(m_fd, data + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      discard();
      throw Error(ErrorKind::Runtime, "cannot write " + quoted(m_what, m_path) + ": " +
                                          errnoText(err) + " (the old file, if any, is unchanged)");
    }
    done += static_cast<std::size_t>(n);
  }
}

void AtomicFile::flushBuffer() {
  writeAll(m_buffer.data(), m_buffer.size());
  m_buffer.clear();
}

void AtomicFile::write(const void* data, std::size_t size) {
  if (m_fd < 0) throw Error(ErrorKind::Runtime, quoted(m_what, m_path) + " is already closed");
  const char* p = static_cast<const char*>(data);
  constexpr std::size_t kBuffer = 1 << 16;
  if (m_buffer.size() + size > kBuffer) flushBuffer();
  if (size >= kBuffer) {
    writeAll(p, size);
  } else {
    m_buffer.append(p, size);
  }
}

void AtomicFile::commit() {
  if (m_fd < 0) throw Error(ErrorKind::Runtime, quoted(m_what, m_path) + " is already closed");
  flushBuffer();
  auto fail = [&](const std::string& step, int err) {
    discard();
    throw Error(ErrorKind::Runtime, "cannot write " + quoted(m_what, m_path) + ": " + step + ": " +
                                        errnoText(err) + " (the old file, if any, is unchanged)");
  };
  if (::fsync(m_fd) != 0) fail("flushing to disk", errno);
  if (::close(m_fd) != 0) {
    m_fd = -1;
    fail("closing", errno);
  }
  m_fd = -1;
  if (m_replace) {
    if (::rename(m_tmp.c_str(), m_path.c_str()) != 0) fail("renaming into place", errno);
  } else {
    // Refuse to replace a file that appeared after the checks, without a window.
    if (const int err = renameWithoutReplacing(m_tmp, m_path); err != 0) {
      discard();
      if (err == EEXIST) {
        throwBadInput(quoted(m_what, m_path) +
                      " appeared while it was being written; pass "
                      "--force to replace it");
      }
      throw Error(ErrorKind::Runtime, "cannot write " + quoted(m_what, m_path) +
                                          ": renaming into place: " + errnoText(err));
    }
  }
  m_tmp.clear();
  syncFolderOf(m_path);  // the rename itself durable
}

int renameWithoutReplacing(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return errno;
  // The file system cannot rename without replacing: a hard link refuses the same way.
  if (::link(from.c_str(), to.c_str()) == 0) {
    ::unlink(from.c_str());
    return 0;
  }
  if (errno != EPERM && errno != EOPNOTSUPP && errno != ENOSYS) return errno;
  // Nor hard links (FAT, some network file systems): a rename after a last look.
  std::error_code ec;
  if (std::filesystem::exists(to, ec)) return EEXIST;
  return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
}

void syncFolderOf(const std::string& path) {
  const int dir = ::open(folderOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  ::fsync(dir);
  ::close(dir);
}

void writeOutputFile(const std::string& path, std::string_view what, std::string_view content,
                     const OutputRules& rules) {
  checkOutputPath(path, what, rules);
  AtomicFile file(path, std::string(what), rules.force);
  file.write(content);
  file.commit();
}

}  // namespace swapscope::files
