// SPDX-License-Identifier: MIT
/// @brief The output-file rules of every verb: --force, and the inputs an output must never be.
#pragma once

#include <initializer_list>
#include <string>

#include "common/files.h"
#include "options/args.h"

namespace swapscope::cli {

/// Declares --force with the verb's own wording of what it replaces.
void addForceFlag(ArgParser& args, const std::string& what);

/// The rules for the verb's outputs: --force as given, and as inputs the files named by
/// `input_options` (e.g. "--net", "--db", "--plan") and by the positional arguments, each with
/// SQLite's companions (addInput). An input given as kStandardInput names no file.
files::OutputRules outputRules(const ArgParser& args,
                               std::initializer_list<const char*> input_options);

/// Adds `path` as an input named `what`, with the -wal, -shm and -journal files SQLite keeps
/// beside a database: replacing one of them loses or corrupts what the input holds.
void addInput(files::OutputRules& rules, const std::string& what, const std::string& path);

/// Adds the Fashion-MNIST files a run reads from `dir` (compressed or not) as inputs.
void addFashionMnistInputs(files::OutputRules& rules, const std::string& dir);

/// Checks the file named by `option`, if given, as an output under `rules` before any work
/// starts (files::checkOutputPath), so that a long run never ends in a refusal. With --force,
/// a run database that a live profile or run is still writing is refused as well.
/// warnNoEffect for --force where `output` (the option that names the file it replaces) is not
/// given.
void warnForceWithoutOutput(const ArgParser& args, const char* output, std::ostream& err);
void checkOutputOption(const ArgParser& args, const char* option, const std::string& what,
                       const files::OutputRules& rules);

/// The value of an output option that names standard output, as in many tools: `--out -`
/// (plan, trace and import) and `analyze --dump-net -` print the document instead of writing a
/// file, and the verb's own report goes to standard error. A file named "-" is written as ./-.
/// The outputs that cannot be a stream (`train --save-weights`, `profile --db`, `run --db`)
/// refuse "-" (refuseStandardOutput).
inline constexpr const char* kStandardOutput = "-";

/// As checkOutputOption, for an option that takes kStandardOutput: "-" is neither checked as a
/// file (an existing "-" is not refused, and none is created) nor looked at by --force, which
/// then gets a warning on `err` that it has no effect. Returns whether the option is "-".
bool checkOutputOrStandardOutput(const ArgParser& args, const char* option, const std::string& what,
                                 const files::OutputRules& rules, std::ostream& err);

/// Refuses kStandardOutput as the value of an output option whose file cannot be standard
/// output (a binary weight file, a run database that SQLite writes in place), with
/// Error(BadInput) naming the option, `why` (what the file is and why it needs a name) and that
/// ./- names a file called '-'. Call before checkOutputOption, so that "-" is neither refused as
/// an existing file nor created.
void refuseStandardOutput(const ArgParser& args, const char* option, const std::string& why);

/// refuseStandardOutput's reason for a run database (`profile --db`, `run --db`).
inline constexpr const char* kRunDatabaseIsNoStream =
    "a run database is an SQLite file, written in place as the run goes, not a stream";

/// The value of an input option that names standard input: `--net -` reads the network JSON and
/// `run --plan -` the plan JSON from it (`swapscope plan ... --out - | swapscope run --plan -`).
/// At most one input of a command is standard input. The inputs that cannot be a stream (a run
/// database, an ONNX model, a weight file, the data set's folder) refuse "-"
/// (refuseStandardInput). A file named "-" is read as ./-.
inline constexpr const char* kStandardInput = "-";

/// How messages name the standard input read for `option` ("standard input (--net -)"); it
/// names no folder, so a plan's relative source_db read from it is taken from the current folder,
/// where `plan --out -` writes it relative to.
std::string standardInputName(const std::string& option);

/// Refuses kStandardInput as the `value` of `option` (an option, or the name of a positional
/// argument), an input that cannot be read from standard input, with Error(BadInput) naming the
/// option, `what` it names ("a run database") and `why`, and that ./- names a `kind` ("file" or
/// "folder") called '-'. Call before the input is opened, so that no file named "-" is read
/// instead.
void refuseStandardInput(const std::string& value, const std::string& option,
                         const std::string& what, const std::string& why,
                         const std::string& kind = "file");

/// refuseStandardInput's reason for a run database that a verb reads (`info`, `plan`, `trace`,
/// `compare` and the app).
inline constexpr const char* kRunDatabaseIsReadInPlace =
    "SQLite reads it in place, page by page, not as a stream";
/// refuseStandardInput's reason for the Fashion-MNIST folder (`train --data-dir`, `run
/// --data-dir`).
inline constexpr const char* kDataDirIsAFolder = "it is a folder of four files";
/// refuseStandardInput's reason for an ONNX model (`--onnx`, `import`).
inline constexpr const char* kOnnxModelIsReadInPlace =
    "it may keep its weights in external data files named relative to its own folder";

}  // namespace swapscope::cli
