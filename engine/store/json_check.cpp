// SPDX-License-Identifier: MIT
#include "store/json_check.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "store/sqlite.h"

namespace swapscope::store {
namespace {

using json = nlohmann::json;

/// Accepts every JSON event: a syntax check that builds nothing and does not recurse, so a
/// hostile value (deeply nested, megabytes long) costs one linear pass. Keeps where it stopped.
struct SyntaxCheck : json::json_sax_t {
  std::size_t stopped_at = 0;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception&) override {
    stopped_at = position;
    return false;
  }
};

}  // namespace

std::optional<std::string> jsonError(const std::string& text) {
  SyntaxCheck check;
  if (json::sax_parse(text, &check)) return std::nullopt;
  const std::size_t at = std::min(check.stopped_at > 0 ? check.stopped_at - 1 : 0, text.size());
  const std::size_t from = at > 30 ? at - 30 : 0;
  return "is not valid JSON (" + std::to_string(text.size()) + " bytes; parsing stopped at byte " +
         std::to_string(check.stopped_at) + ", near " + quoteBounded(text.substr(from, 60), 60) +
         ")";
}

}  // namespace swapscope::store
