// SPDX-License-Identifier: MIT
#include "store/sqlite.h"

#include <sqlite3.h>
#include <stdlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace swapscope::store {
namespace fs = std::filesystem;

namespace {

/// SQLite's message and, where the operating system gave one, its reason ("unable to open
/// database file (Permission denied)").
std::string openFailure(sqlite3* db, int rc) {
  std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  const int sys = db ? sqlite3_system_errno(db) : 0;
  if (sys != 0) message += std::string(" (") + std::strerror(sys) + ")";
  return message;
}

/// Whether the file's header marks it as a WAL-mode database (read and write versions 2).
bool walModeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<unsigned char, 20> header{};
  in.read(reinterpret_cast<char*>(header.data()), header.size());
  return in.gcount() == static_cast<std::streamsize>(header.size()) && header[18] == 2 &&
         header[19] == 2;
}

/// A URI filename (https://sqlite.org/uri.html) for an absolute path with `query`.
std::string uriFor(const std::string& path, const char* query) {
  std::string uri = "file://";
  for (const char c : fs::absolute(path).string()) {
    if (c == '?' || c == '#' || c == '%') {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(c));
      uri += hex;
    } else {
      uri += c;
    }
  }
  return uri + "?" + query;
}

/// `path` as SQLite takes a plain file name: where URI file names are on (Debian's SQLite has
/// them on for every open), a name that starts with "file:" would be read as a URI naming
/// another file, so a relative one is given as "./file:...".
std::string plainName(const std::string& path) {
  return path.rfind("file:", 0) == 0 ? "./" + path : path;
}

}  // namespace

Database::Database(std::string path, Mode mode) : m_path(std::move(path)) {
  // SQLite's Unix file system layer takes full paths (links resolved) of at most 512 bytes with
  // room for a side file's suffix ("-journal", 8 bytes), and fails a longer one as if the file
  // were missing.
  constexpr std::size_t kMaxFullPath = 512 - 8;
  std::error_code pathError;
  const std::string full = fs::weakly_canonical(fs::absolute(m_path), pathError).string();
  if (!pathError && full.size() > kMaxFullPath) {
    throw Error(ErrorKind::BadInput,
                (mode == Mode::Create ? "cannot create '" : "cannot open '") + m_path +
                    "': its full path (links resolved) is " + std::to_string(full.size()) +
                    " bytes long, and SQLite opens databases whose full path is at most " +
                    std::to_string(kMaxFullPath) + " bytes; move it to a shorter path");
  }
  if (mode == Mode::ReadOnly) {
    openReadOnly();
    return;
  }
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_EXRESCODE |
                    (mode == Mode::Create ? SQLITE_OPEN_CREATE : 0);
  const int rc =
      sqlite3_open_v2(plainName(m_path).c_str(), &m_db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = openFailure(m_db, rc);
    const int sys = m_db ? sqlite3_system_errno(m_db) : 0;
    sqlite3_close(m_db);
    m_db = nullptr;
    // A path that cannot hold a file is the caller's mistake; anything else is the system's.
    const bool badPath = sys == ENOENT || sys == ENOTDIR || sys == EACCES || sys == EROFS ||
                         sys == EISDIR || sys == ENAMETOOLONG;
    std::string where;
    if (sys == ENOENT) {
      const fs::path dir = fs::path(m_path).parent_path();
      std::error_code ec;
      if (!dir.empty() && !fs::is_directory(dir, ec))
        where = ": the directory '" + dir.string() + "' does not exist";
    }
    throw Error(badPath ? ErrorKind::BadInput : ErrorKind::Runtime,
                (mode == Mode::Create ? "cannot create '" : "cannot open '") + m_path + "'" +
                    (where.empty() ? ": " + message : where));
  }
  sqlite3_extended_result_codes(m_db, 1);
  // A reader waits a little for a writer's commit instead of failing with SQLITE_BUSY.
  sqlite3_busy_timeout(m_db, kBusyTimeoutMs);
}

void Database::openReadOnly() {
  // sqlite3_open_v2 opens lazily: the first read finds out whether the header, and in WAL mode
  // the -wal and -shm files, can be read.
  const auto attempt = [&](const std::string& name, int extraFlags, bool& opened) {
    sqlite3_close(m_db);
    m_db = nullptr;
    int rc = sqlite3_open_v2(
        name.c_str(), &m_db,
        SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE | extraFlags, nullptr);
    opened = rc == SQLITE_OK;
    if (!opened) return rc;
    sqlite3_extended_result_codes(m_db, 1);
    sqlite3_busy_timeout(m_db, kBusyTimeoutMs);
    return sqlite3_exec(m_db, "PRAGMA schema_version", nullptr, nullptr, nullptr);
  };
  std::error_code ec;
  const auto walSize = fs::file_size(m_path + "-wal", ec);
  const bool walPresent = !ec;
  const bool walFrames = walPresent && walSize > 0;
  // The -wal of a WAL-mode file holds committed transactions that immutable=1 would ignore:
  // where SQLite cannot read them in place, the file and its -wal are read from a private copy.
  // Sets `copyFailure` (why no copy could be made) where it fails.
  std::string copyFailure;
  const auto readPrivateCopy = [&](const std::string& why, bool& opened) {
    std::error_code tmpEc;
    std::string tmpl = (fs::temp_directory_path(tmpEc) / "swapscope-readonly-XXXXXX").string();
    const std::string noCopy = "; " + why + ", and a private copy cannot be made either: ";
    if (tmpEc) {
      const char* named = std::getenv("TMPDIR");
      copyFailure = noCopy + "no temporary folder (" + tmpEc.message() +
                    (named ? std::string("; TMPDIR is '") + named + "'" : "") + ")";
      return SQLITE_CANTOPEN;
    }
    if (mkdtemp(tmpl.data()) == nullptr) {
      copyFailure = noCopy + "cannot create '" + tmpl + "' (" + std::strerror(errno) +
                    "; TMPDIR names the temporary folder)";
      return SQLITE_CANTOPEN;
    }
    m_copyDir = tmpl;
    const fs::path copy = fs::path(m_copyDir) / fs::path(m_path).filename();
    if (!fs::copy_file(m_path, copy, tmpEc) ||
        !fs::copy_file(m_path + "-wal", copy.string() + "-wal", tmpEc)) {
      copyFailure = noCopy + "cannot copy it to '" + m_copyDir + "' (" + tmpEc.message() + ")";
      return SQLITE_CANTOPEN;
    }
    return attempt(copy.string(), 0, opened);
  };
  // Reads a WAL-mode file without SQLite's files beside it: without a -wal, or with an empty
  // one, the main file holds every committed row and immutable=1 reads it as it is; a -wal with
  // frames is read from a private copy of the file and its -wal.
  const auto readAside = [&](const std::string& why, bool& opened) {
    return walFrames ? readPrivateCopy(why, opened)
                     : attempt(uriFor(m_path, "immutable=1"), SQLITE_OPEN_URI, opened);
  };
  // A reader never creates files beside the user's database. SQLite reads a WAL-mode file
  // through its -wal and its -shm (the index of the -wal) and creates whichever is missing where
  // the folder lets it, files that a read-only connection cannot remove again: `info` on a
  // WAL-mode file copied without them would leave both beside it. Where both are there (a live
  // run, or a run a reader held as it finished) SQLite reads them in place and creates nothing;
  // otherwise no process writes the file (a writer keeps both while it has the file open), and
  // it is read aside.
  const bool walMode = walModeFile(m_path);
  const bool inPlace = !walMode || (walPresent && fs::exists(m_path + "-shm", ec));
  bool opened = false;
  const int rc = inPlace ? attempt(plainName(m_path), 0, opened)
                         : readAside(
                               "its -wal holds committed rows, which SQLite reads through a "
                               "-shm file beside it, and a reader creates none",
                               opened);
  if (rc == SQLITE_OK) return;
  const std::string first = openFailure(m_db, rc);
  const int primary = rc & 0xff;
  // A WAL-mode file with its -wal and -shm in a directory this process cannot write to, or
  // whose -shm it cannot write: read aside as well.
  if (inPlace && walMode && (primary == SQLITE_CANTOPEN || primary == SQLITE_READONLY)) {
    bool fallbackOpened = false;
    if (readAside("its -wal holds committed rows and the folder cannot take SQLite's -shm",
                  fallbackOpened) == SQLITE_OK) {
      return;
    }
  }
  sqlite3_close(m_db);
  m_db = nullptr;
  if (!m_copyDir.empty()) {
    fs::remove_all(m_copyDir, ec);
    m_copyDir.clear();
  }
  if (opened && (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB)) {
    // The file opened but its first page could not be read.
    throw Error(ErrorKind::BadInput,
                "'" + m_path + "' is damaged: " + first + " (while reading the header)");
  }
  if (opened && primary != SQLITE_CANTOPEN && primary != SQLITE_READONLY &&
      primary != SQLITE_PERM) {
    throw Error(ErrorKind::Runtime, "'" + m_path + "': reading the header failed: " + first);
  }
  if (primary == SQLITE_READONLY && fs::exists(m_path + "-journal", ec)) {
    // A hot rollback journal: a write to the file was interrupted, and SQLite must roll it back
    // (writing the file) before anyone reads it.
    // The name as SQLite reads it (./file:...), quoted for a POSIX shell.
    std::string quoted = "'";
    for (const char c : plainName(m_path))
      quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    quoted += "'";
    throw Error(ErrorKind::BadInput,
                "cannot open '" + m_path + "': a write to it was interrupted and left '" + m_path +
                    "-journal', which SQLite must roll back into the file before it can be read, "
                    "and a reader never writes; open it once with a writer (e.g. sqlite3 " +
                    quoted + " 'PRAGMA integrity_check') to roll it back (" + first + ")");
  }
  throw Error(ErrorKind::BadInput, "cannot open '" + m_path + "': " + first + copyFailure);
}

Database::~Database() {
  sqlite3_close_v2(m_db);
  if (!m_copyDir.empty()) {
    std::error_code ec;
    fs::remove_all(m_copyDir, ec);
  }
}

void Database::fail(int rc, std::string_view what) const {
  const int primary = rc & 0xff;
  const std::string message = primary == SQLITE_CANTOPEN || primary == SQLITE_IOERR
                                  ? openFailure(m_db, rc)
                                  : (m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc));
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) {
    throw Error(ErrorKind::BadInput,
                "'" + m_path + "' is damaged: " + message + " (while " + std::string(what) + ")");
  }
  throw Error(ErrorKind::Runtime, "'" + m_path + "': " + std::string(what) + " failed: " + message);
}

void Database::exec(const char* sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(m_db, sql, nullptr, nullptr, &err);
  sqlite3_free(err);  // sqlite3_errmsg still holds the message
  if (rc != SQLITE_OK) fail(rc, std::string("running \"") + sql + "\"");
}

int Database::tryExec(const char* sql) {
  return sqlite3_exec(m_db, sql, nullptr, nullptr, nullptr);
}

std::string Database::lastError() const {
  return m_db ? sqlite3_errmsg(m_db) : "no connection";
}

void Database::setBusyTimeout(int milliseconds) {
  sqlite3_busy_timeout(m_db, milliseconds);
}

std::int64_t Database::queryInt(const char* sql) {
  Statement st(*this, sql);
  if (!st.step()) fail(SQLITE_ERROR, std::string("reading \"") + sql + "\"");
  return st.integer(0);
}

Statement::Statement(Database& db, const char* sql) : m_db(db), m_sql(sql) {
  const int rc =
      sqlite3_prepare_v3(db.handle(), sql, -1, SQLITE_PREPARE_PERSISTENT, &m_stmt, nullptr);
  if (rc != SQLITE_OK) db.fail(rc, std::string("preparing \"") + sql + "\"");
}

Statement::~Statement() {
  sqlite3_finalize(m_stmt);
}

Statement& Statement::bind(int index, std::int64_t value) {
  const int rc = sqlite3_bind_int64(m_stmt, index, value);
  if (rc != SQLITE_OK) m_db.fail(rc, std::string("binding \"") + m_sql + "\"");
  return *this;
}

Statement& Statement::bind(int index, double value) {
  const int rc = sqlite3_bind_double(m_stmt, index, value);
  if (rc != SQLITE_OK) m_db.fail(rc, std::string("binding \"") + m_sql + "\"");
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  const int rc =
      sqlite3_bind_text64(m_stmt, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) m_db.fail(rc, std::string("binding \"") + m_sql + "\"");
  return *this;
}

Statement& Statement::bindNull(int index) {
  const int rc = sqlite3_bind_null(m_stmt, index);
  if (rc != SQLITE_OK) m_db.fail(rc, std::string("binding \"") + m_sql + "\"");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(m_stmt);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3_reset(m_stmt);
  m_db.fail(rc, std::string("running \"") + m_sql + "\"");
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(m_stmt);
  sqlite3_clear_bindings(m_stmt);
}

std::int64_t Statement::integer(int column) const {
  return sqlite3_column_int64(m_stmt, column);
}

double Statement::real(int column) const {
  return sqlite3_column_double(m_stmt, column);
}

std::string Statement::text(int column) const {
  const auto* p = sqlite3_column_text(m_stmt, column);
  const int n = sqlite3_column_bytes(m_stmt, column);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n))
           : std::string();
}

bool Statement::isNull(int column) const {
  return sqlite3_column_type(m_stmt, column) == SQLITE_NULL;
}

ValueType Statement::type(int column) const {
  switch (sqlite3_column_type(m_stmt, column)) {
    case SQLITE_INTEGER:
      return ValueType::Integer;
    case SQLITE_FLOAT:
      return ValueType::Real;
    case SQLITE_TEXT:
      return ValueType::Text;
    case SQLITE_BLOB:
      return ValueType::Blob;
    default:
      return ValueType::Null;
  }
}

std::string Statement::describe(int column) const {
  switch (type(column)) {
    case ValueType::Integer:
      return "integer " + std::to_string(integer(column));
    case ValueType::Real: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", real(column));
      return std::string("real ") + buf;
    }
    case ValueType::Text:
      return "text " + quoteBounded(text(column));
    case ValueType::Blob:
      return "a blob of " + std::to_string(sqlite3_column_bytes(m_stmt, column)) + " bytes";
    case ValueType::Null:
      break;
  }
  return "NULL";
}

Transaction::Transaction(Database& db) : m_db(db) {
  m_db.exec("BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (m_open) sqlite3_exec(m_db.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  m_db.exec("COMMIT");
  m_open = false;
}

std::string sqliteVersion() {
  return sqlite3_libversion();
}

}  // namespace swapscope::store
