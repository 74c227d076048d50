// SPDX-License-Identifier: MIT
/// @brief A thin RAII layer over the SQLite C API: one connection, prepared statements with
/// typed binds and columns, and transactions that roll back unless committed. Every failure is an
/// Error that names the database file, the statement and SQLite's own message.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace swapscope::store {

class Database {
 public:
  enum class Mode {
    ReadOnly,  ///< never writes to the file; fails if it does not exist
    Create,    ///< creates the file, which must not exist yet
  };
  Database(std::string path, Mode mode);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  /// Runs one or more statements that return no rows.
  void exec(const char* sql);
  /// The single integer a query such as "PRAGMA user_version" returns.
  std::int64_t queryInt(const char* sql);
  const std::string& path() const { return m_path; }
  sqlite3* handle() const { return m_db; }
  /// Throws the Error for SQLite result code `rc` while doing `what`. Corruption and "not a
  /// database" are BadInput (the file is wrong); everything else is Runtime.
  [[noreturn]] void fail(int rc, std::string_view what) const;

 private:
  std::string m_path;
  sqlite3* m_db = nullptr;
};

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
