// SPDX-License-Identifier: MIT
/// @brief The output-file rules of every verb: --force, and the inputs an output must never be.
#pragma once

#include <initializer_list>
#include <string>

#include "cli/args.h"
#include "common/files.h"

namespace swapscope::cli {

/// Declares --force with the verb's own wording of what it replaces.
void addForceFlag(ArgParser& args, const std::string& what);

/// The rules for the verb's outputs: --force as given, and as inputs the files named by
/// `input_options` (e.g. "--net", "--db", "--plan") and by the positional arguments.
files::OutputRules outputRules(const ArgParser& args,
                               std::initializer_list<const char*> input_options);

/// Checks the file named by `option`, if given, as an output under `rules` before any work
/// starts (files::checkOutputPath), so that a long run never ends in a refusal.
void checkOutputOption(const ArgParser& args, const char* option, const std::string& what,
                       const files::OutputRules& rules);

}  // namespace swapscope::cli
