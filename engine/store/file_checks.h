// SPDX-License-Identifier: MIT
/// @brief The checks a run database passes before its rows are read: the file against its SQLite
/// header, and every table and column of the schema present and readable.
#pragma once

#include <string>

#include "store/sqlite.h"

namespace swapscope::store {

/// Checks that `path` is a regular, non-empty SQLite file whose length matches its header.
void checkRunFile(const std::string& path);
/// Checks that every table and column the reader reads at schema `version` is present and
/// readable, so that a dropped or altered table is named here rather than failing a query later.
void checkTables(Database& db, const std::string& path, int version);

}  // namespace swapscope::store
