// SPDX-License-Identifier: MIT
/// @brief `swapscope profile`: the profiling stage. Runs the network under swap-all at the five
/// profiling minibatches and records steps, transfers, pool bytes and iterations in a run
/// database.
#include <unistd.h>

#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "cli/device_options.h"
#include "cli/interrupt.h"
#include "cli/recording.h"
#include "collectors/profiler.h"
#include "common/bytes.h"
#include "common/error.h"
#include "common/format.h"
#include "options/args.h"
#include "options/file_options.h"
#include "options/network_options.h"
#include "options/run_output.h"
#include "store/run_db.h"
#include "store/run_summary.h"

namespace swapscope::cli {

/// The largest k profiled on the CPU backend unless --max-batch says otherwise. A small network's
/// swap-all k_max in a few hundred MiB runs to thousands, and one iteration at k = 128 of
/// resnet56 already takes seconds on a small machine.
constexpr std::int64_t kCpuDefaultMaxBatch = 128;

int cmdProfile(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  ArgParser args(
      "swapscope profile --model NAME | --net FILE | --onnx FILE [--input CxHxW] [--classes N]\n"
      "                  --budget SIZE --db FILE [--force]\n"
      "                  [--iters N] [--warmup N] [--max-batch K] [--seed S] [--json]\n" +
          deviceUsage("                  "),
      "The profiling stage: computes k_max under swap-all for the budget, then trains at\n"
      "k = 1/8, 1/4, 1/2, 2/3 and 1 of k_max (capped by --max-batch) under swap-all. After\n"
      "--warmup unrecorded iterations per k it records --iters iterations: every step's time\n"
      "and FLOPs, every transfer, the pool bytes over the first one, and the iteration times.\n"
      "Each iteration is committed as it ends, so Ctrl-C, SIGTERM or a kill leaves a readable\n"
      "database marked incomplete (see `swapscope info`). A k the executor refuses (its\n"
      "kernels' workspaces, the packing of its buffers) is replaced, with a warning, by the\n"
      "largest k between the last one profiled and it that the executor accepts.");
  addNetworkOptions(args);
  args.option("--budget", "SIZE", "the memory pool: 512MiB, 2GiB, 123456 (required)");
  args.option("--db", "FILE",
              "the run database to create, e.g. resnet56.swapdb (required; an SQLite file, so "
              "not standard output: - is refused, ./- names a file called '-')");
  addDeviceOptions(args);
  args.option("--iters", "N", "recorded iterations per k (default 3)");
  args.option("--warmup", "N", "unrecorded iterations per k before those (default 1)");
  args.option("--max-batch", "K",
              "cap k_max at K (default on the CPU backend: " + std::to_string(kCpuDefaultMaxBatch) +
                  "; elsewhere no cap)");
  args.option("--seed", "S", "seed of initialisation and the synthetic data (default 1)");
  addForceFlag(args, "--db");
  args.flag("--json", "print a JSON summary instead of text");
  if (!args.parse(argv)) {
    out << args.help();
    return kExitOk;
  }

  // Nothing is created before the output is known to be safe: an existing database needs
  // --force, and the network file is never replaced by its own profile.
  const files::OutputRules rules = outputRules(args, {"--net", "--onnx"});
  refuseStandardOutput(args, "--db", kRunDatabaseIsNoStream);
  files::checkOutputPath(args.required("--db"), "the run database --db", rules);
  // Not even --force replaces a database that a live profile or run is still writing.
  if (rules.force) store::refuseIfLiveWriter(args.required("--db"));
  const Network net = loadNetwork(args);
  collect::ProfileConfig cfg;
  cfg.budget = parseByteSize(args.required("--budget"), "--budget");
  const std::string dbPath = args.required("--db");
  const std::int64_t iters = args.integer("--iters", 1, 100000).value_or(3);
  cfg.iterations = static_cast<int>(iters);
  if (auto w = args.value("--warmup")) {
    cfg.warmup = static_cast<int>(parseInteger(*w, "option --warmup", 0, 1000));
  }
  cfg.seed = seedOption(args);

  const std::unique_ptr<rt::Device> device = openDevice(args, err);
  const bool capDefault = !args.has("--max-batch") && device->backendName() == "cpu";
  cfg.max_batch = args.batch("--max-batch").value_or(capDefault ? kCpuDefaultMaxBatch : 0);

  // A budget that cannot run k = 1 is refused before any file is created.
  const std::int64_t kMax = collect::swapAllKMax(net, cfg.budget, *device);
  // So is a profile whose largest minibatch does not fit the budget, the device or the host.
  collect::checkProfileFits(*device, net, cfg);
  const bool json = args.has("--json");
  const bool tty = isatty(STDERR_FILENO) != 0;
  if (!json) {
    const std::int64_t top = cfg.max_batch > 0 ? std::min(kMax, cfg.max_batch) : kMax;
    out << "profiling " << net.name() << " on " << device->deviceName() << '\n'
        << "k_max under swap-all in " << formatBytes(cfg.budget) << ": " << kMax;
    if (top < kMax) {
      out << "; profiling up to k = " << top
          << (capDefault ? " (the CPU backend's default cap; --max-batch K to change)"
                         : " (--max-batch)");
    }
    out << "\nk = ";
    const auto ks = collect::profileBatches(top);
    for (std::size_t i = 0; i < ks.size(); ++i)
      out << (i ? ", " : "") << ks[i];
    out << "; " << cfg.warmup << " warm-up + " << cfg.iterations << " recorded iterations each\n";
    out.flush();
  }

  store::RunMeta meta = collect::runMeta(*device, "profile", cfg.budget, "swap-all");
  meta.command_line = quotedCommandLine("profile", argv);
  meta.versions["Swapscope"] = SWAPSCOPE_VERSION;
  InterruptScope interrupt;
  const auto progress = [&](const collect::RunProgress& p) {
    if (!tty) return;
    std::cerr << "\r  k = " << p.k << " (" << p.batch_index + 1 << "/" << p.batches
              << ")  iteration " << p.iteration << "/" << p.iterations << "  " << std::fixed
              << std::setprecision(3) << p.iteration_seconds << " s/iteration, "
              << std::setprecision(0) << p.eta_seconds << " s left     " << std::flush;
    if (p.iteration == p.iterations) std::cerr << '\n';
  };
  collect::ProfileResult result;
  std::string written, kept;  // where the run is; the earlier file kept beside it
  {
    store::RunWriter db(dbPath, meta, args.has("--force"));
    announceRecording(db, json, out);
    result = runKeepingNote(db, [&] {
      return collect::runProfile(*device, net, cfg, db, progress, &interrupt.flag());
    });
    if (result.cancelled && !json) {
      if (tty) std::cerr << '\n';
      out << "interrupted (" << interrupt.signalName() << "): the database is marked incomplete\n";
    }
    written = db.path();
    kept = db.keptNote();
  }

  store::RunReader reader(written);
  const store::RunData run = reader.load();
  const auto summary = store::summarizeBatches(run);
  const store::RowCounts counts = reader.counts();
  if (json) {
    nlohmann::ordered_json j{{"db", written},
                             {"status", store::runStatusName(run.meta.status)},
                             {"network", net.name()},
                             {"device", device->deviceName()},
                             {"budget", cfg.budget},
                             {"k_max", result.k_max},
                             {"max_batch", cfg.max_batch},
                             {"batches", batchesJson(summary)},
                             {"rows",
                              {{"samples", counts.samples},
                               {"transfers", counts.transfers},
                               {"memory", counts.memory},
                               {"iterations", counts.iterations},
                               {"fits", counts.fits}}}};
    if (!result.refused.empty()) j["refused_batches"] = collect::refusedBatchesJson(result.refused);
    if (!result.fit_error.empty()) j["fit_error"] = result.fit_error;
    j["stability"] = stabilityJson(result.stability);
    if (!kept.empty()) j["kept"] = kept;
    out << j.dump(2, ' ', false, kReplaceInvalidUtf8) << '\n';
    return finishedExit(result.cancelled, kept, "profile", err);  // as in text
  }
  for (const collect::RefusedBatch& r : result.refused)
    out << "warning: " << collect::describeRefusal(r, cfg.budget) << '\n';
  printBatches(out, summary);
  out << "wrote " << written << " (" << store::runStatusName(run.meta.status)
      << "): " << counts.samples << " step samples, " << counts.transfers << " transfers, "
      << counts.memory << " pool samples, " << counts.iterations << " iterations, " << counts.fits
      << " model fits\n";
  if (!result.fit_error.empty())
    out << "no model fits stored: " << result.fit_error
        << " (`swapscope plan --db` says the same)\n";
  if (result.stability) printStability(out, result.stability);
  if (!kept.empty()) out << kept << '\n';
  return finishedExit(result.cancelled, kept, "profile", err);
}

}  // namespace swapscope::cli
