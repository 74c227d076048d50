// SPDX-License-Identifier: MIT
#include "store/file_checks.h"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"
#include "store/schema.h"
#include "store/table_rows.h"

namespace swapscope::store {
namespace fs = std::filesystem;
namespace {

/// Every table of the schema with its columns, from kSchemaSql itself.
const std::vector<std::pair<std::string, std::vector<std::string>>>& schemaTables() {
  static const auto tables = [] {
    Database mem(":memory:", Database::Mode::Create);
    mem.exec(kSchemaSql);
    std::vector<std::pair<std::string, std::vector<std::string>>> out;
    Statement names(mem, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY rowid");
    while (names.step())
      out.push_back({names.text(0), {}});
    for (auto& [table, columns] : out) {
      Statement cols(mem, "SELECT name FROM pragma_table_info(?1) ORDER BY cid");
      cols.bind(1, table);
      while (cols.step())
        columns.push_back(cols.text(0));
    }
    return out;
  }();
  return tables;
}

bool addedInVersion2(std::string_view table, std::string_view column) {
  for (const auto& [t, c] : kVersion2Columns) {
    if (t == table && c == column) return true;
  }
  return false;
}

std::uint32_t bigEndian(const unsigned char* p, int bytes) {
  std::uint32_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v = (v << 8) | p[i];
  return v;
}

/// The file's length against its header (https://sqlite.org/fileformat.html): whole pages, and
/// at least the pages the header counts. SQLite reads a page cut short as zeros, so its
/// quick_check does not see a file cut by a few bytes.
void checkFileSize(const std::string& path, const std::array<unsigned char, 100>& header,
                   std::uintmax_t size) {
  std::uint32_t pageSize = bigEndian(&header[16], 2);
  if (pageSize == 1) pageSize = 65536;
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) != 0) {
    damaged(path, "its header gives a page size of " + std::to_string(pageSize) +
                      " bytes, not a power of two from 512 to 65536");
  }
  if (size % pageSize != 0) {
    damaged(path, "it is " + std::to_string(size) + " bytes long, not a whole number of " +
                      std::to_string(pageSize) +
                      "-byte pages: it was cut short or bytes were appended");
  }
  // While a -wal with frames is next to it, the main file may lag behind the header (a
  // checkpoint writes page 1 first); the -wal then holds those pages.
  std::error_code ec;
  const auto wal = fs::file_size(path + "-wal", ec);
  if (!ec && wal > 0) return;
  const std::uint32_t pages = bigEndian(&header[28], 4);
  const bool pagesValid = pages > 0 && bigEndian(&header[24], 4) == bigEndian(&header[92], 4);
  if (pagesValid && size < std::uintmax_t{pages} * pageSize) {
    damaged(path, "its header counts " + std::to_string(pages) + " pages of " +
                      std::to_string(pageSize) + " bytes (" +
                      std::to_string(std::uintmax_t{pages} * pageSize) + " bytes), but it is " +
                      std::to_string(size) + " bytes long: it was cut short");
  }
}

}  // namespace

void checkRunFile(const std::string& path) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status)) throwBadInput("cannot open '" + path + "': no such file");
  if (!fs::is_regular_file(status)) throwBadInput("cannot open '" + path + "': not a regular file");
  const auto size = fs::file_size(path, ec);
  if (size == 0 && !fs::exists(path + "-wal", ec)) {
    throwBadInput("'" + path + "' is empty (0 bytes), not a Swapscope run database");
  }
  if (size > 0) {
    std::array<unsigned char, 100> header{};
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throwBadInput("cannot open '" + path + "': " + std::strerror(errno));
    const std::size_t got = std::fread(header.data(), 1, header.size(), f);
    std::fclose(f);
    static constexpr char kMagic[16] = "SQLite format 3";  // with its terminating NUL
    if (got < 16 || !std::equal(kMagic, kMagic + 16, header.begin())) {
      throwBadInput("'" + path +
                    "' is not a Swapscope run database: it is not an SQLite file (no SQLite "
                    "header)");
    }
    if (got < header.size()) {
      damaged(path, "it is " + std::to_string(size) +
                        " bytes long, shorter than the 100-byte SQLite header");
    }
    checkFileSize(path, header, size);
  }
}

void checkTables(Database& db, const std::string& path, int version) {
  for (const auto& [table, columns] : schemaTables()) {
    if (version < 3 && table == kVersion3Table) continue;
    Statement kind(db, "SELECT type FROM sqlite_schema WHERE name = ?1");
    kind.bind(1, table);
    if (!kind.step()) damaged(path, "table '" + table + "' is missing");
    if (kind.text(0) != "table") {
      damaged(path, "'" + table + "' is a " + quoteBounded(kind.text(0)) + ", not a table");
    }
    Statement have(db, "SELECT name FROM pragma_table_info(?1)");
    have.bind(1, table);
    std::set<std::string> present;
    while (have.step())
      present.insert(have.text(0));
    std::string select = "SELECT rowid";
    for (const std::string& c : columns) {
      if (version < 2 && addedInVersion2(table, c)) continue;
      if (!present.count(c)) damaged(path, "table '" + table + "' has no column '" + c + "'");
      select += ", " + c;
    }
    select += " FROM " + table + " LIMIT 0";
    if (db.tryExec(select.c_str()) != SQLITE_OK) {
      damaged(path, "table '" + table + "' cannot be read: " + db.lastError());
    }
  }
}

}  // namespace swapscope::store
