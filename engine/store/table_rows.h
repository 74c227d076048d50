// SPDX-License-Identifier: MIT
/// @brief The run-database reader's checked access to one table: every value's type and range
/// checked, errors naming the file, the table, the row, the column and the value.
#pragma once

#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/batch_limit.h"
#include "common/error.h"
#include "store/json_check.h"
#include "store/run_db.h"
#include "store/sqlite.h"

namespace swapscope::store {

/// The largest minibatch a run database may record: the limit of every verb.
constexpr std::int64_t kMaxRecordedK = kMaxBatch;

/// Throws Error(BadInput): the run database at `path` is damaged, and why.
[[noreturn]] void damaged(const std::string& path, const std::string& why);

/// Reads one table with every value's type and range checked. Errors name the file, the table,
/// the row's rowid, the column and the value.
class TableRows {
 public:
  static constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  static constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  static constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

  TableRows(Database& db, const char* table, std::vector<const char*> columns, const char* orderBy)
      : m_path(db.path()), m_table(table), m_columns(columns.begin(), columns.end()) {
    m_sql = "SELECT rowid";
    for (const std::string& c : m_columns)
      m_sql += std::string(", ") + c;
    m_sql += std::string(" FROM ") + table + " ORDER BY " + orderBy;
    m_st = std::make_unique<Statement>(db, m_sql.c_str());
  }
  bool next() { return m_st->step(); }
  std::int64_t rowid() const { return m_st->integer(0); }

  std::int64_t integer(int c, std::int64_t lo = kMin, std::int64_t hi = kMax) const {
    if (m_st->type(c + 1) != ValueType::Integer)
      bad(c, "holds " + describe(c) + ", not an integer");
    const std::int64_t v = m_st->integer(c + 1);
    if (v < lo || v > hi) bad(c, "is " + std::to_string(v) + rangeWhy(v, lo, hi));
    return v;
  }
  /// An `int` field: 0 .. INT_MAX unless told otherwise.
  int int32(int c, std::int64_t lo = 0, std::int64_t hi = kIntMax) const {
    return static_cast<int>(integer(c, std::max<std::int64_t>(lo, std::numeric_limits<int>::min()),
                                    std::min(hi, kIntMax)));
  }
  std::int64_t nonNegative(int c) const { return integer(c, 0); }
  bool flag(int c) const { return integer(c, 0, 1) != 0; }
  double real(int c, bool nonNegative = false) const {
    const ValueType t = m_st->type(c + 1);
    if (t != ValueType::Real && t != ValueType::Integer)
      bad(c, "holds " + describe(c) + ", not a number");
    const double v = m_st->real(c + 1);
    if (nonNegative && !(v >= 0)) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", v);
      bad(c, std::string("is ") + buf + "; it cannot be negative");
    }
    return v;
  }
  std::string text(int c) const {
    if (m_st->type(c + 1) != ValueType::Text) bad(c, "holds " + describe(c) + ", not text");
    return m_st->text(c + 1);
  }
  /// A text column that must be valid JSON.
  std::string jsonText(int c) const {
    std::string v = text(c);
    if (auto why = jsonError(v)) bad(c, *why);
    return v;
  }
  std::string describe(int c) const { return m_st->describe(c + 1); }
  [[noreturn]] void bad(int c, const std::string& why) const {
    badRow(m_columns.at(c) + " " + why);
  }
  [[noreturn]] void badRow(const std::string& why) const {
    damaged(m_path, "table '" + m_table + "' row " + std::to_string(rowid()) + ": " + why);
  }

 private:
  static std::string rangeWhy(std::int64_t v, std::int64_t lo, std::int64_t hi) {
    if (v < lo && lo == 0) return "; it cannot be negative";
    if (v < lo && hi == kMax) return "; it must be " + std::to_string(lo) + " or more";
    return ", outside " + std::to_string(lo) + ".." + std::to_string(hi);
  }

  std::string m_path, m_table;
  std::vector<std::string> m_columns;
  std::string m_sql;
  std::unique_ptr<Statement> m_st;
};

/// Column `c` as a JSON array of T.
template <typename T>
std::vector<T> parseArray(const TableRows& rows, int c) {
  const std::string text = rows.text(c);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_array()) {
    rows.bad(c, "is " + quoteBounded(text) + ", not a JSON array");
  }
  try {
    return j.get<std::vector<T>>();
  } catch (const nlohmann::json::exception&) {
    rows.bad(c, "is " + quoteBounded(text) + ", which holds a value of the wrong type");
  }
}

/// Column `c` as a step direction; Update only where `update`.
Direction directionFromName(const TableRows& rows, int c, bool update);
/// Column `c` as a transfer kind.
TransferKind transferKindFromName(const TableRows& rows, int c);
/// Column `c` as a fit's scope, direction or form.
FitScope fitScopeFromName(const TableRows& rows, int c);
FitDirection fitDirectionFromName(const TableRows& rows, int c);
FitRowForm fitRowFormFromName(const TableRows& rows, int c);

}  // namespace swapscope::store
