// SPDX-License-Identifier: MIT
#include "graph/json_guard.h"

#include <cstdio>
#include <iterator>
#include <set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/format.h"

namespace swapscope {
namespace {

/// Containers nested deeper than this inside an echoed value are shown as [...] or {...}.
constexpr int kEchoDepth = 3;

template <typename Json>
bool tooDeep(const Json& doc, int max_depth) {
  // Depth-first over the containers only, with an explicit stack of (container, depth).
  std::vector<std::pair<const Json*, int>> stack;
  if (doc.is_structured()) stack.emplace_back(&doc, 1);
  while (!stack.empty()) {
    const auto [node, depth] = stack.back();
    stack.pop_back();
    if (depth > max_depth) return true;
    for (const Json& child : *node) {
      if (child.is_structured()) stack.emplace_back(&child, depth + 1);
    }
  }
  return false;
}

/// Appends `text` escaped, at most `budget` characters of it, and a length note when cut.
void appendEscaped(std::string& out, std::string_view text, std::size_t budget) {
  std::size_t i = 0;
  std::size_t written = 0;
  for (; i < text.size() && written < budget; ++written) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t n = utf8CharLength(text, i);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f || n == 0) {  // control characters, bytes not UTF-8
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    ++i;
  }
  if (i == text.size()) return;
  // Cut between characters (a multi-byte one is taken whole or not at all).
  out += "... (" + std::to_string(text.size()) + " bytes)";
}

template <typename Json>
void echoInto(std::string& out, const Json& v, int depth, std::size_t limit) {
  if (out.size() > limit) return;
  if (v.is_string()) {
    const auto& s = v.template get_ref<const std::string&>();
    out += '"';
    appendEscaped(out, s, limit > out.size() ? limit - out.size() : 1);
    out += '"';
    return;
  }
  if (!v.is_structured()) {
    out += v.dump();  // numbers, booleans and null: a few characters
    return;
  }
  const bool array = v.is_array();
  if (v.empty()) {
    out += array ? "[]" : "{}";
    return;
  }
  if (depth >= kEchoDepth) {
    out += array ? "[...]" : "{...}";
    return;
  }
  out += array ? '[' : '{';
  bool first = true;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!first) out += ',';
    first = false;
    if (out.size() > limit) {
      out += "...";
      break;
    }
    if (!array) {
      out += '"';
      appendEscaped(out, it.key(), limit > out.size() ? limit - out.size() : 1);
      out += "\":";
    }
    echoInto(out, *it, depth + 1, limit);
  }
  out += array ? ']' : '}';
}

template <typename Json>
std::string echo(const Json& v, std::size_t max_chars) {
  std::string out;
  echoInto(out, v, 0, max_chars);
  if (out.size() > max_chars + 40) {
    // A container cut short: keep the start and say so.
    std::string cut = out.substr(0, max_chars);
    dropCutUtf8Character(cut);
    return cut + "...";
  }
  return out;
}

/// A character iterator that records the furthest character the parser has read, so that its
/// callback knows where in the text it is (nlohmann's callbacks get no position).
struct ReadingIterator {
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  const char* at = nullptr;
  const char** furthest = nullptr;

  reference operator*() const { return *at; }
  ReadingIterator& operator++() {
    *furthest = ++at;
    return *this;
  }
  ReadingIterator operator++(int) {
    ReadingIterator before = *this;
    ++*this;
    return before;
  }
  friend bool operator==(const ReadingIterator& a, const ReadingIterator& b) {
    return a.at == b.at;
  }
};

template <typename Json>
Json parseUniqueKeys(std::string_view text, const std::string& origin, bool allow_exceptions) {
  const char* furthest = text.data();
  // The keys seen so far in each object being read, innermost last.
  std::vector<std::set<std::string>> open;
  const typename Json::parser_callback_t noteKeys = [&](int, nlohmann::json::parse_event_t event,
                                                        Json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) {
      open.emplace_back();
    } else if (event == Event::object_end) {
      if (!open.empty()) open.pop_back();
    } else if (event == Event::key && !open.empty()) {
      const auto& key = parsed.template get_ref<const std::string&>();
      if (!open.back().insert(key).second) {
        // The parser has just read the key's closing quote.
        const auto read = static_cast<std::size_t>(furthest - text.data());
        const std::string where = describeTextOffset(text, read > 0 ? read - 1 : 0);
        throwBadInput(origin + ": key \"" + echoText(key) + "\" is given twice in one object (" +
                      where.substr(0, where.find(',')) +
                      "); JSON readers disagree on which one counts, so give it once");
      }
    }
    return true;
  };
  const ReadingIterator first{text.data(), &furthest};
  const ReadingIterator last{text.data() + text.size(), &furthest};
  return Json::parse(first, last, noteKeys, allow_exceptions);
}

}  // namespace

nlohmann::json parseJsonUniqueKeys(std::string_view text, const std::string& origin,
                                   bool allow_exceptions) {
  return parseUniqueKeys<nlohmann::json>(text, origin, allow_exceptions);
}

nlohmann::ordered_json parseOrderedJsonUniqueKeys(std::string_view text, const std::string& origin,
                                                  bool allow_exceptions) {
  return parseUniqueKeys<nlohmann::ordered_json>(text, origin, allow_exceptions);
}

void refuseNulByte(std::string_view text, const std::string& origin) {
  const std::size_t at = text.find('\0');
  if (at == std::string_view::npos) return;
  throwBadInput(origin + ": a NUL byte at " + describeTextOffset(text, at) +
                "; a JSON text has none (a binary file?)");
}

std::optional<std::size_t> jsonTooDeepAt(std::string_view text, int max_depth) {
  int depth = 0;
  bool inString = false;
  bool escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        inString = false;
      }
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

bool jsonTooDeep(const nlohmann::json& doc, int max_depth) {
  return tooDeep(doc, max_depth);
}
bool jsonTooDeep(const nlohmann::ordered_json& doc, int max_depth) {
  return tooDeep(doc, max_depth);
}

std::string describeTextOffset(std::string_view text, std::size_t offset) {
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

std::string echoText(std::string_view text, std::size_t max_chars) {
  std::string out;
  appendEscaped(out, text, max_chars);
  return out;
}

std::string echoJson(const nlohmann::json& value, std::size_t max_chars) {
  return echo(value, max_chars);
}
std::string echoJson(const nlohmann::ordered_json& value, std::size_t max_chars) {
  return echo(value, max_chars);
}

std::string boundedParseError(const char* what) {
  const std::string_view msg(what);
  constexpr std::string_view kLastRead = "; last read: '";
  const std::size_t at = msg.find(kLastRead);
  if (at == std::string_view::npos) return echoText(msg, 4 * kMaxEchoChars);
  std::string_view token = msg.substr(at + kLastRead.size());
  if (!token.empty() && token.back() == '\'') token.remove_suffix(1);
  return echoText(msg.substr(0, at), 4 * kMaxEchoChars) + std::string(kLastRead) + echoText(token) +
         "'";
}

}  // namespace swapscope
