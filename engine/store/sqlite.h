// SPDX-License-Identifier: MIT
/// @brief A thin RAII layer over the SQLite C API: one connection, prepared statements with
/// typed binds and columns, and transactions that roll back unless committed. Every failure is an
/// Error that names the database file, the statement and SQLite's own message.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/error.h"
#include "common/format.h"

struct sqlite3;
struct sqlite3_stmt;

namespace swapscope::store {

class Database {
 public:
  enum class Mode {
    /// Never writes to the file and never creates a file beside it; fails if it does not exist.
    /// A WAL-mode file is read in place where its -wal and -shm are both there (a live run);
    /// otherwise (copied without them, or a read-only directory that cannot take the -shm)
    /// with `immutable=1` when there is no -wal to read, else through a private copy of the
    /// file and its -wal in the temporary folder, removed on close.
    ReadOnly,
    Create,     ///< creates the file, which must not exist yet
    ReadWrite,  ///< opens an existing file to write to it
  };
  /// How long a statement waits for another connection's lock before failing with "database
  /// is locked".
  static constexpr int kBusyTimeoutMs = 5000;
  Database(std::string path, Mode mode);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  /// Runs one or more statements that return no rows.
  void exec(const char* sql);
  /// As exec(), but returns SQLite's result code instead of throwing.
  int tryExec(const char* sql);
  void setBusyTimeout(int milliseconds);
  /// SQLite's message for the last failure on this connection.
  std::string lastError() const;
  /// The single integer a query such as "PRAGMA user_version" returns.
  std::int64_t queryInt(const char* sql);
  const std::string& path() const { return m_path; }
  sqlite3* handle() const { return m_db; }
  /// Throws the Error for SQLite result code `rc` while doing `what`. Corruption and "not a
  /// database" are BadInput (the file is wrong); everything else is Runtime.
  [[noreturn]] void fail(int rc, std::string_view what) const;

 private:
  void openReadOnly();
  std::string m_path;
  sqlite3* m_db = nullptr;
  std::string m_copyDir;  ///< the private copy's directory, removed on close
};

/// The type SQLite stored a value with (sqlite3_column_type).
enum class ValueType { Integer, Real, Text, Blob, Null };

class Statement {
 public:
  Statement(Database& db, const char* sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  /// Binds are 1-based, as in SQLite.
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, std::int64_t{value}); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bindNull(int index);
  /// Advances: true while a row is available, false when done.
  bool step();
  /// Runs a statement that returns no rows, then resets it for the next binds.
  void run();
  void reset();

  /// Columns are 0-based, as in SQLite.
  std::int64_t integer(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  bool isNull(int column) const;
  ValueType type(int column) const;
  /// The value for a message, at most about 80 characters: `integer 5`, `real 1.5`,
  /// `text 'abc'`, `a blob of 3 bytes`, `NULL`.
  std::string describe(int column) const;

 private:
  Database& m_db;
  sqlite3_stmt* m_stmt = nullptr;
  const char* m_sql;
};

/// BEGIN on construction; ROLLBACK on destruction unless commit() was called.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& m_db;
  bool m_open = true;
};

/// The SQLite library's version, e.g. "3.40.1".
std::string sqliteVersion();

}  // namespace swapscope::store
