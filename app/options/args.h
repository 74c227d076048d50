// SPDX-License-Identifier: MIT
/// @brief A small command-line parser for the verbs: declared flags and options, "--opt value"
/// and "--opt=value", generated --help, and errors that name the option (exit code 2).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace swapscope::cli {

/// `text` as a whole decimal integer from lo to hi, the one integer parser of the verbs and the
/// app. Error(BadInput) naming `what` and saying why: "expected an integer" (or "a positive
/// integer" where lo is 1) for text that is none; "<text> is out of range: from lo to hi" for an
/// integer outside the range, 64-bit overflow included.
std::int64_t parseInteger(const std::string& text, const std::string& what, std::int64_t lo,
                          std::int64_t hi);

/// A minibatch k as `what` (--batch, --max-batch) gives it: parseInteger's errors below 1, and
/// refuseAboveBatchLimit's above kMaxBatch (common/batch_limit.h), however many digits.
std::int64_t parseBatch(const std::string& text, const std::string& what);

/// "warning: <option> has no effect: <why>" on `err`, for an option that another makes moot
/// (an option that contradicts another is refused instead, naming both).
void warnNoEffect(std::ostream& err, const std::string& option, const std::string& why);

class ArgParser {
 public:
  ArgParser(std::string usage, std::string summary);

  void flag(const std::string& name, const std::string& help);
  void option(const std::string& name, const std::string& metavar, const std::string& help);
  /// Declares `count` positional arguments (e.g. compare's two files), listed in --help. Without
  /// this call a word that is not an option is an error.
  void positionals(std::vector<std::string> metavars, const std::string& help);
  const std::vector<std::string>& positionalValues() const { return m_positionals; }

  /// Parses args (the words after the verb). Throws Error(BadInput) on unknown options, missing
  /// values and stray arguments. Returns false when --help was given (the caller prints help()).
  bool parse(const std::vector<std::string>& args);

  bool has(const std::string& name) const { return m_values.count(name) > 0; }
  std::optional<std::string> value(const std::string& name) const;
  /// The option's value; Error(BadInput) naming the option when it is missing.
  std::string required(const std::string& name) const;
  /// A positive integer option, e.g. --iters; nullopt when absent. parseInteger's errors.
  std::optional<std::int64_t> positiveInt(const std::string& name) const;
  /// An integer option from lo to hi; nullopt when absent. parseInteger's errors.
  std::optional<std::int64_t> integer(const std::string& name, std::int64_t lo,
                                      std::int64_t hi) const;
  /// A minibatch option (--batch, --max-batch): parseBatch; nullopt when absent.
  std::optional<std::int64_t> batch(const std::string& name) const;

  std::string help() const;

 private:
  struct Spec {
    std::string name, metavar, help;
    bool takesValue;
  };
  const Spec* find(const std::string& name) const;
  /// "--batch" or "--batch=4" where --batch is declared.
  bool isDeclaredOption(const std::string& word) const;

  std::string m_usage, m_summary;
  std::vector<Spec> m_specs;
  std::map<std::string, std::string> m_values;
  std::vector<std::string> m_positionalNames, m_positionals;
  std::string m_positionalHelp;
};

}  // namespace swapscope::cli
