// SPDX-License-Identifier: MIT
#include "options/args.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "common/batch_limit.h"
#include "common/error.h"
#include "graph/json_guard.h"

namespace swapscope::cli {

ArgParser::ArgParser(std::string usage, std::string summary)
    : m_usage(std::move(usage)), m_summary(std::move(summary)) {
  flag("--help", "show this help and exit");
}

void ArgParser::flag(const std::string& name, const std::string& help) {
  m_specs.push_back({.name = name, .metavar = "", .help = help, .takesValue = false});
}

void ArgParser::option(const std::string& name, const std::string& metavar,
                       const std::string& help) {
  m_specs.push_back({.name = name, .metavar = metavar, .help = help, .takesValue = true});
}

void ArgParser::positionals(std::vector<std::string> metavars, const std::string& help) {
  m_positionalNames = std::move(metavars);
  m_positionalHelp = help;
}

const ArgParser::Spec* ArgParser::find(const std::string& name) const {
  for (const Spec& s : m_specs) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool ArgParser::isDeclaredOption(const std::string& word) const {
  if (word.rfind("--", 0) != 0) return false;
  return find(word.substr(0, word.find('='))) != nullptr;
}

bool ArgParser::parse(const std::vector<std::string>& args) {
  // --help after a word that is refused still asks for the help, as --help before it does: the
  // help is printed whichever comes first.
  const auto helpAfter = [&](std::size_t i) {
    return std::any_of(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end(),
                       [](const std::string& w) { return w == "--help" || w == "-h"; });
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string word = args[i];
    if (word == "-h") word = "--help";
    if (word.rfind("--", 0) != 0) {
      if (m_positionals.size() < m_positionalNames.size()) {
        m_positionals.push_back(word);
        continue;
      }
      if (helpAfter(i)) return false;
      throwBadInput("unexpected argument '" + word + "' (see --help)");
    }
    std::optional<std::string> inlineValue;
    if (const auto eq = word.find('='); eq != std::string::npos) {
      inlineValue = word.substr(eq + 1);
      word = word.substr(0, eq);
    }
    const Spec* spec = find(word);
    if (spec == nullptr) {
      if (helpAfter(i)) return false;
      throwBadInput("unknown option '" + word + "' (see --help)");
    }
    if (word == "--help") return false;
    if (!spec->takesValue) {
      if (inlineValue) throwBadInput("option '" + word + "' takes no value");
      m_values[word] = "";
      continue;
    }
    if (!inlineValue) {
      // The next word is the value, unless it is one of this verb's options ("--model --batch 4"
      // forgot the model). Other words are values, "-1" and "--not-an-option" included.
      if (i + 1 >= args.size() || isDeclaredOption(args[i + 1])) {
        throwBadInput("option '" + word + "' needs a value (" + spec->metavar + ")");
      }
      inlineValue = args[++i];
    }
    if (m_values.count(word)) throwBadInput("option '" + word + "' is given twice");
    m_values[word] = *inlineValue;
  }
  if (m_positionals.size() < m_positionalNames.size()) {
    throwBadInput("missing " + m_positionalNames[m_positionals.size()] + " (see --help)");
  }
  return true;
}

std::optional<std::string> ArgParser::value(const std::string& name) const {
  auto it = m_values.find(name);
  if (it == m_values.end()) return std::nullopt;
  return it->second;
}

std::string ArgParser::required(const std::string& name) const {
  auto v = value(name);
  if (!v) {
    const Spec* spec = find(name);
    throwBadInput("missing required option " + name + (spec ? " " + spec->metavar : "") +
                  " (see --help)");
  }
  return *v;
}

void warnNoEffect(std::ostream& err, const std::string& option, const std::string& why) {
  err << "warning: " << option << " has no effect: " << why << '\n';
}

std::int64_t parseInteger(const std::string& text, const std::string& what, std::int64_t lo,
                          std::int64_t hi) {
  std::int64_t out = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  const bool whole = ptr == text.data() + text.size() && !text.empty();
  const std::string range = "from " + std::to_string(lo) + " to " + std::to_string(hi);
  if (ec == std::errc::result_out_of_range && whole) {
    throwBadInput(what + ": " + echoText(text) + " is out of range: " + range);
  }
  if (ec != std::errc() || !whole) {
    throwBadInput(what + ": expected " + (lo == 1 ? "a positive integer" : "an integer") +
                  ", got '" + echoText(text) + "'");
  }
  if (out < lo && lo == 1) {
    throwBadInput(what + ": expected a positive integer, got '" + text + "'");
  }
  if (out < lo || out > hi) throwBadInput(what + ": " + text + " is out of range: " + range);
  return out;
}

std::optional<std::int64_t> ArgParser::integer(const std::string& name, std::int64_t lo,
                                               std::int64_t hi) const {
  const auto v = value(name);
  if (!v) return std::nullopt;
  return parseInteger(*v, "option " + name, lo, hi);
}

std::optional<std::int64_t> ArgParser::positiveInt(const std::string& name) const {
  return integer(name, 1, std::numeric_limits<std::int64_t>::max());
}

std::int64_t parseBatch(const std::string& text, const std::string& what) {
  // Digits beyond 64 bits are above the limit too: say so rather than "out of range".
  const std::size_t lead = std::min(text.find_first_not_of('0'), text.size());
  if (text.size() - lead > 18 &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    refuseAboveBatchLimit(what, text);
  const std::int64_t k = parseInteger(text, what, 1, std::numeric_limits<std::int64_t>::max());
  checkBatchLimit(k, what);
  return k;
}

std::optional<std::int64_t> ArgParser::batch(const std::string& name) const {
  const auto v = value(name);
  if (!v) return std::nullopt;
  return parseBatch(*v, name);
}

std::string ArgParser::help() const {
  std::string s = "usage: " + m_usage + "\n\n" + m_summary + "\n\n";
  if (!m_positionalNames.empty()) {
    s += "arguments:\n  ";
    for (const std::string& n : m_positionalNames)
      s += n + " ";
    s += " " + m_positionalHelp + "\n\n";
  }
  s += "options:\n";
  std::size_t width = 0;
  for (const Spec& spec : m_specs) {
    width = std::max(width, spec.name.size() + (spec.takesValue ? spec.metavar.size() + 1 : 0));
  }
  for (const Spec& spec : m_specs) {
    std::string left = spec.name + (spec.takesValue ? " " + spec.metavar : "");
    left.resize(width, ' ');
    s += "  " + left + "  " + spec.help + "\n";
  }
  return s;
}

}  // namespace swapscope::cli
