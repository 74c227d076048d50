// SPDX-License-Identifier: MIT
/// Edits a copy of a run database with SQLite itself, as no writer of the project would: the
/// damaged or unusual files the CLI tests feed the verbs.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

namespace swapscope::cli::testing {

/// Runs `sql` on the database file `db`; the rows its last statement changed, or -1 (and a test
/// failure naming the statement and SQLite's message) where it could not.
inline int editDb(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  if (sqlite3_open(db.c_str(), &h) != SQLITE_OK) {
    ADD_FAILURE() << "cannot open " << db << ": " << sqlite3_errmsg(h);
    sqlite3_close(h);
    return -1;
  }
  char* error = nullptr;
  const int rc = sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &error);
  if (rc != SQLITE_OK) ADD_FAILURE() << sql << ": " << (error ? error : "");
  sqlite3_free(error);
  const int changed = rc == SQLITE_OK ? sqlite3_changes(h) : -1;
  sqlite3_close(h);
  return changed;
}

}  // namespace swapscope::cli::testing
