// SPDX-License-Identifier: MIT
/// @brief The CLI's verbs, callable in-process (tests use this instead of spawning the binary).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace swapscope::cli {

/// Exit codes of every verb.
enum ExitCode : int { kExitOk = 0, kExitFailure = 1, kExitUsage = 2 };

/// JSON printed or written by a verb replaces bytes that are not UTF-8 (a device name, a command
/// line or a file name recorded in a run database may hold them) instead of failing to print.
inline constexpr auto kReplaceInvalidUtf8 = nlohmann::json::error_handler_t::replace;

/// Runs `swapscope <args...>` (args excludes the program name). Errors go to `err` with the exit
/// code of their kind: 2 for bad usage or bad input, 1 for runtime failures.
int runCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// One function per verb; each parses its own options and may throw swapscope::Error.
int cmdModels(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmdImport(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmdAnalyze(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmdTrain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmdProfile(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmdInfo(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmdTrace(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmdPlan(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmdRun(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmdCompare(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace swapscope::cli
