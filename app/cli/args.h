// SPDX-License-Identifier: MIT
/// @brief A small command-line parser for the verbs: declared flags and options, "--opt value"
/// and "--opt=value", generated --help, and errors that name the option (exit code 2).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace swapscope::cli {

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
  /// A positive integer option, e.g. --batch; nullopt when absent.
  std::optional<std::int64_t> positiveInt(const std::string& name) const;

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
