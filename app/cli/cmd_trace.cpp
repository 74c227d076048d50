// SPDX-License-Identifier: MIT
/// @brief `swapscope trace`: one recorded iteration of a run database as Chrome trace JSON for
/// Perfetto (ui.perfetto.dev) or chrome://tracing.
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "common/error.h"
#include "common/files.h"
#include "options/args.h"
#include "options/file_options.h"
#include "store/chrome_trace.h"
#include "store/run_db.h"

namespace swapscope::cli {

int cmdTrace(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  ArgParser args("swapscope trace --db FILE [--k K] [--iteration I] --out trace.json|- [--force]",
                 "Writes one recorded iteration as Chrome trace JSON that Perfetto opens: the\n"
                 "compute, swap-out and swap-in streams are threads, each step and transfer a\n"
                 "slice, stalls are marked on the compute thread and the pool bytes are a\n"
                 "counter. Times are microseconds from the run's start.");
  args.option("--db", "FILE",
              "the run database (required; an SQLite file, so not standard input: - is "
              "refused, ./- names a file called '-')");
  args.option("--k", "K", "the minibatch (default: the largest recorded)");
  args.option("--iteration", "I", "the recorded iteration at that k, from 0 (default 0)");
  args.option("--out", "FILE",
              "the trace file to write (required); - prints the trace to standard output, and "
              "the summary line to standard error");
  addForceFlag(args, "the --out file");
  if (!args.parse(argv)) {
    out << args.help();
    return kExitOk;
  }
  const std::string path = args.required("--db");
  refuseStandardInput(path, "--db", "a run database", kRunDatabaseIsReadInPlace);
  const std::string outPath = args.required("--out");
  const files::OutputRules rules = outputRules(args, {"--db"});
  const bool toStdout =
      checkOutputOrStandardOutput(args, "--out", "the trace file --out", rules, err);
  store::RunReader reader(path);
  const store::RunData run = reader.load();
  std::int64_t k = store::largestRecordedK(run);
  if (auto v = args.batch("--k")) k = *v;
  int iteration = 0;
  if (auto v = args.value("--iteration")) {
    try {
      std::size_t used = 0;
      iteration = std::stoi(*v, &used);
      if (used != v->size() || iteration < 0) throw std::invalid_argument("");
    } catch (const std::exception&) {
      throwBadInput("--iteration: '" + *v + "' is not an iteration number (0, 1, ...)");
    }
  }
  const auto trace = store::chromeTrace(run, k, iteration);
  const std::string text = trace.dump(-1, ' ', false, kReplaceInvalidUtf8) + '\n';
  // With --out -, standard output holds the trace alone: the summary goes to standard error.
  if (toStdout) {
    out << text;
  } else {
    files::writeOutputFile(outPath, "the trace file --out", text, rules);
  }
  (toStdout ? err : out) << "wrote "
                         << (toStdout ? std::string("the trace to standard output") : outPath)
                         << ": " << run.network.name << " at k = " << k << ", iteration "
                         << iteration << ", " << trace["traceEvents"].size()
                         << " events (open in ui.perfetto.dev)\n";
  return kExitOk;
}

}  // namespace swapscope::cli
