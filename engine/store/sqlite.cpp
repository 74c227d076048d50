// SPDX-License-Identifier: MIT
#include "store/sqlite.h"

#include <sqlite3.h>

namespace swapscope::store {

Database::Database(std::string path, Mode mode) : m_path(std::move(path)) {
  const int flags = mode == Mode::ReadOnly
                        ? SQLITE_OPEN_READONLY
                        : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_EXRESCODE;
  const int rc = sqlite3_open_v2(m_path.c_str(), &m_db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc);
    sqlite3_close(m_db);
    m_db = nullptr;
    throw Error(mode == Mode::ReadOnly ? ErrorKind::BadInput : ErrorKind::Runtime,
                "cannot open '" + m_path + "': " + message);
  }
  sqlite3_extended_result_codes(m_db, 1);
  // A reader waits a little for a writer's commit instead of failing with SQLITE_BUSY.
  sqlite3_busy_timeout(m_db, 5000);
}

Database::~Database() {
  sqlite3_close_v2(m_db);
}

void Database::fail(int rc, std::string_view what) const {
  const int primary = rc & 0xff;
  const std::string message = m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc);
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
