// SPDX-License-Identifier: MIT
/// @brief `swapscope run`: executes a plan file on the engine and prints predicted against
/// measured t_iter, peak and stall time, each with its relative error.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/gmap.h"
#include "analysis/memory.h"
#include "analysis/swap_policy.h"
#include "cli/commands.h"
#include "cli/device_options.h"
#include "cli/interrupt.h"
#include "cli/recording.h"
#include "collectors/kernel_collector.h"
#include "collectors/profiler.h"
#include "common/bytes.h"
#include "common/error.h"
#include "common/format.h"
#include "common/stats.h"
#include "graph/network_json.h"
#include "graph/zoo.h"
#include "options/args.h"
#include "options/file_options.h"
#include "options/network_options.h"
#include "options/run_output.h"
#include "perfmodel/compare.h"
#include "runtime/dataset.h"
#include "runtime/executor.h"
#include "runtime/trainer.h"
#include "store/plan_file.h"
#include "store/run_db.h"

namespace swapscope::cli {
namespace {

using json = nlohmann::ordered_json;

struct TransferSummary {
  std::int64_t bytes = 0, busy_ns = 0, overlapped = 0, count = 0, page_locked = 0;
};

std::pair<TransferSummary, TransferSummary> summarize(const collect::KernelProfile& p) {
  TransferSummary h2d, d2h;
  for (const collect::TransferRecord& t : p.transfers) {
    TransferSummary& s = t.to_device ? h2d : d2h;
    s.bytes += t.bytes;
    s.busy_ns += t.end_ns - t.start_ns;
    s.overlapped += t.overlapped_compute ? 1 : 0;
    s.page_locked += t.page_locked ? 1 : 0;
    ++s.count;
  }
  return {h2d, d2h};
}

json profileJson(const collect::KernelProfile& p, const std::string& source, double unprofiled,
                 double profiled, std::size_t iterations) {
  json steps = json::array();
  for (const collect::StepKernels& s : p.steps)
    steps.push_back({{"step", s.step}, {"kernel_ns", s.kernel_ns}, {"kernels", s.kernels}});
  json transfers = json::object();
  const auto [h2d, d2h] = summarize(p);
  for (const auto& [name, t] : {std::pair{"h2d", h2d}, std::pair{"d2h", d2h}}) {
    transfers[name] = {{"count", t.count},
                       {"bytes", t.bytes},
                       {"busy_ns", t.busy_ns},
                       {"overlapped", t.overlapped},
                       {"pinned", t.page_locked}};  // the JSON key keeps its name
  }
  return {{"source", source},
          {"iterations", iterations},
          {"t_iter_unprofiled_s", unprofiled},
          {"t_iter_profiled_s", profiled},
          {"overhead", profiled / unprofiled - 1.0},
          {"kernel_ns", p.kernelTotalNs()},
          {"untagged_kernels", p.untagged_kernels},
          {"dropped_records", p.dropped_records},
          {"steps", steps},
          {"transfers", transfers}};
}

void printProfile(std::ostream& out, const collect::KernelProfile& p, const std::string& source,
                  double unprofiled, double profiled, std::size_t iterations) {
  out << "collector: " << source << "\n"
      << "  overhead    " << formatRelativeError(profiled, unprofiled) << " (median of "
      << iterations << " profiled iterations, " << formatMilliseconds(profiled) << " ms, against "
      << formatMilliseconds(unprofiled) << " ms unprofiled)\n";
  std::int64_t kernels = 0;
  bool counted = true;
  for (const collect::StepKernels& s : p.steps) {
    kernels += std::max(s.kernels, 0);
    counted = counted && s.kernels >= 0;
  }
  out << "  kernels     " << formatMilliseconds(static_cast<double>(p.kernelTotalNs()) * 1e-9)
      << " ms in the last profiled iteration";
  if (counted) out << ", " << kernels << " kernels";
  if (p.untagged_kernels > 0) out << " (+" << p.untagged_kernels << " outside any step)";
  if (p.dropped_records > 0) out << "; " << p.dropped_records << " records dropped";
  out << "\n";
  const auto [h2d, d2h] = summarize(p);
  for (const auto& [name, t] : {std::pair{"h2d", h2d}, std::pair{"d2h", d2h}}) {
    if (t.count == 0) continue;
    out << "  " << name << "         " << t.count << " transfers, " << formatBytes(t.bytes);
    if (t.busy_ns > 0) {
      out << " at " << formatFixed(static_cast<double>(t.bytes) / static_cast<double>(t.busy_ns), 1)
          << " GB/s";
    }
    out << ", " << t.overlapped << " overlapped compute, " << t.page_locked << " page-locked\n";
  }
}

/// Whether any kernel of the run holds a workspace in the pool (the CUDA backend's convolutions).
bool hasWorkspaces(const rt::SwapExecutor& ex) {
  for (const rt::KernelChoice& c : ex.kernelChoices()) {
    if (c.forward_workspace > 0 || c.backward_workspace > 0) return true;
  }
  return false;
}

ArgParser runParser() {
  ArgParser args(
      "swapscope run --plan plan.json|- [--model NAME | --net FILE | --onnx FILE]\n"
      "              [--input CxHxW] [--classes N] [--iters N] [--warmup N]\n"
      "              [--data synthetic|fashion-mnist [--data-dir DIR]] [--seed S]\n"
      "              [--collector auto|cupti|cupti-all-api|events|off] [--strict-device]\n"
      "              [--db FILE [--force]] [--json]\n" +
          deviceUsage("              "),
      "Runs a plan made by `swapscope plan` on the engine (synthetic data of the\n"
      "network's shape) and prints predicted against measured: t_iter (the median of the\n"
      "measured iterations), the pool peak and the stall time, with relative errors.\n"
      "--db records the measured timeline in a run database. Ctrl-C or SIGTERM stops after\n"
      "the current iteration and marks the database incomplete.");
  args.option("--plan", "FILE",
              "the plan JSON (required); - reads it from standard input (plan --out - | run "
              "--plan -), ./- names a file called '-'");
  addNetworkOptions(args);
  args.option("--iters", "N", "measured iterations (default 5)");
  args.option("--warmup", "N", "unmeasured iterations first (default 1)");
  addDeviceOptions(args);
  args.option("--seed", "S", "seed (default 1)");
  args.option("--data", "D",
              "synthetic (default: random data of the network's shape) or fashion-mnist "
              "(consecutive minibatches of the training set)");
  args.option("--data-dir", "DIR",
              "where fashion-mnist is (default: the Debian package's; - is refused, ./- names a "
              "folder called '-')");
  args.option("--collector", "C",
              "auto (default: cupti on a CUDA device, off elsewhere), cupti (falls back to CUDA "
              "events and says why; records only the launch and copy API calls), cupti-all-api "
              "(also every other runtime and driver API call, to compare the overhead), events, "
              "or off. With a collector the measured iterations run once more under it: "
              "per-step kernel time, transfers, and its overhead");
  args.option("--db", "FILE",
              "record the run in this run database (an SQLite file, so not standard output: - "
              "is refused, ./- names a file called '-')");
  addForceFlag(args, "--db");
  args.flag("--strict-device",
            "refuse to run a plan whose model was fitted on another device (default: warn)");
  args.flag("--json", "print JSON");
  return args;
}

/// How to run a plan on the network it was made for, where another network was given (or is the
/// profile's): a zoo model by --model, built as the plan was, else its file.
std::string planNetworkHint(const store::PlanFile& plan) {
  const std::string name = quoteBounded(plan.network_name);
  if (findZooEntry(plan.network_name) != nullptr) {
    return "give --model " + plan.network_name +
           " (with the --input and --classes the plan was made with, if any) or the --net or "
           "--onnx file it was made for";
  }
  return "give the --net or --onnx file it was made for (its network is named " + name + ")";
}

/// The plan and the network it runs, with every option checked before the plan is read.
struct RunRequest {
  std::string planPath;
  std::int64_t iters = 5;
  int warmup = 1;
  std::uint64_t seed = 0;
  files::OutputRules rules;
  store::PlanFile plan;
  Network net;
};

RunRequest parseRunRequest(const ArgParser& args) {
  RunRequest q;
  q.planPath = args.required("--plan");
  // Every option is checked before the plan is read and its network built.
  checkZooOptions(args, "run takes the network the plan names");
  q.iters = args.integer("--iters", 1, 100000).value_or(5);
  if (auto w = args.value("--warmup"))
    q.warmup = static_cast<int>(parseInteger(*w, "option --warmup", 0, 1000));
  q.seed = seedOption(args);
  refuseStandardInput(args.value("--data-dir").value_or(""), "--data-dir",
                      "the Fashion-MNIST folder", kDataDirIsAFolder, "folder");
  refuseOnnxFromStandardInput(args);
  const bool planPiped = q.planPath == kStandardInput;
  if (planPiped && args.value("--net") == kStandardInput) {
    throwBadInput(
        "--plan - and --net - both name standard input, which holds one document; "
        "give one of them as a file");
  }
  q.rules = outputRules(args, {"--plan", "--net", "--onnx"});
  refuseStandardOutput(args, "--db", kRunDatabaseIsNoStream);
  checkOutputOption(args, "--db", "the run database --db", q.rules);  // live writers too
  // Read from standard input, the plan is named as such; its relative source_db is taken from
  // the current folder, which `plan --out -` writes it relative to.
  if (planPiped) q.planPath = standardInputName("--plan");
  q.plan = planPiped ? store::planFromText(files::readStandardInput("the plan JSON --plan -",
                                                                    files::kMaxJsonFileBytes),
                                           q.planPath)
                     : store::readPlanFile(q.planPath);
  q.net = args.has("--model") || args.has("--net") || args.has("--onnx")
              ? loadNetwork(args)
              : collect::planNetwork(q.plan, q.planPath, "give --model or --net",
                                     planPiped ? "the current folder, as the plan was read from "
                                                 "standard input"
                                               : "the plan file's folder");
  // The profile the plan was made from (where the network comes from without --model, --net
  // or --onnx) and the data set are inputs too: --db never replaces them, even with --force.
  // The profile is kept whichever network runs: replacing it would lose the measurements the
  // plan rests on.
  if (!q.plan.source_db.empty())
    addInput(q.rules, "the plan's source_db", store::sourceDbPath(q.plan, q.planPath));
  if (args.value("--data") == "fashion-mnist")
    addFashionMnistInputs(q.rules, args.value("--data-dir").value_or(rt::kFashionMnistDir));
  checkOutputOption(args, "--db", "the run database --db", q.rules);
  return q;
}

/// The plan run's iterations, collector and data.
collect::PlanRunConfig planRunConfig(const ArgParser& args, const RunRequest& q,
                                     const rt::Device& device, std::ostream& err) {
  collect::PlanRunConfig cfg;
  cfg.warmup = q.warmup;
  cfg.iterations = static_cast<int>(q.iters);
  cfg.seed = q.seed;
  const std::string collector = args.value("--collector").value_or("auto");
  if (collector == "auto") {
    cfg.collector = device.backendName() == "cuda" ? collect::CollectorMode::Cupti
                                                   : collect::CollectorMode::Off;
  } else if (const auto mode = collect::collectorModeFromName(collector)) {
    cfg.collector = *mode;
  } else {
    throwBadInput("--collector: unknown collector '" + collector +
                  "' (choose auto, cupti, cupti-all-api, events or off)");
  }
  const std::string dataName = args.value("--data").value_or("synthetic");
  if (args.has("--data-dir") && dataName != "fashion-mnist")
    warnNoEffect(err, "--data-dir", "it locates Fashion-MNIST, and --data is " + dataName);
  warnForceWithoutOutput(args, "--db", err);
  cfg.data_dir = args.value("--data-dir").value_or(rt::kFashionMnistDir);
  if (dataName == "fashion-mnist") {
    cfg.data = collect::PlanData::FashionMnist;
  } else if (dataName != "synthetic") {
    throwBadInput("--data: unknown data set '" + dataName +
                  "' (choose synthetic or fashion-mnist)");
  }
  return cfg;
}

/// The measured run against the plan, as both printers read it.
struct RunReport {
  const RunRequest& q;
  const rt::Device& device;
  const rt::SwapExecutor& ex;
  const collect::PlanRunResult& result;
  const std::vector<LayerCost>& costs;
  std::optional<std::string> deviceWarning;
  std::string kept;
  double mIter = 0, mStall = 0;
  perf::StallMetrics sm;
};

/// Per step: the plan's predicted stalls and starts against the measured iterations.
perf::StallMetrics stallMetrics(const store::PlanFile& plan, const rt::SwapExecutor& ex,
                                const collect::PlanRunResult& result) {
  const std::size_t steps = static_cast<std::size_t>(ex.gmap().steps()) + 1;
  std::vector<double> predictedStall(steps, 0.0), predictedStart;
  for (const store::PlanStall& st : plan.predictions.stalls) {
    if (st.step >= 1 && static_cast<std::size_t>(st.step) < steps)
      predictedStall[static_cast<std::size_t>(st.step)] = st.seconds;
  }
  if (plan.predictions.start_s.size() + 1 == steps) {
    predictedStart.push_back(0.0);
    predictedStart.insert(predictedStart.end(), plan.predictions.start_s.begin(),
                          plan.predictions.start_s.end());
  }
  return perf::compareStalls(plan.predictions.t_iter_s, predictedStall, predictedStart,
                             result.steps);
}

/// Per measured iteration, how many steps stalled (a stall above `threshold` of the iteration's
/// own t_iter): the sets whose scores against the predicted one StallMetrics gives as medians.
std::vector<int> stalledPerIteration(const std::vector<perf::MeasuredIteration>& iterations,
                                     double threshold) {
  std::vector<int> counts;
  for (const perf::MeasuredIteration& it : iterations) {
    int n = 0;
    for (std::size_t j = 1; j < it.stall.size(); ++j)
      n += it.stall[j] > threshold * it.t_iter ? 1 : 0;
    counts.push_back(n);
  }
  return counts;
}

/// The counts as "1, 0 and 2"; "from 0 to 3, median 1" beyond ten (a median of an even count
/// may be a half: "median 1.5").
std::string describeCounts(const std::vector<int>& counts) {
  if (counts.size() > 10) {
    const auto [lo, hi] = std::minmax_element(counts.begin(), counts.end());
    std::vector<double> values(counts.begin(), counts.end());
    // "from 4 to 6, median 5": inside the scores line's brackets, without brackets of its own.
    return "from " + std::to_string(*lo) + " to " + std::to_string(*hi) + ", median " +
           numberText(median(values));
  }
  std::string text;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == counts.size() ? " and " : ", ") + std::to_string(counts[i]);
  }
  return text;
}

void printRunJson(const RunReport& t, const store::RunWriter* db, const InterruptScope& interrupt,
                  std::ostream& out) {
  const store::PlanFile& plan = t.q.plan;
  const rt::SwapExecutor& ex = t.ex;
  const collect::PlanRunResult& result = t.result;
  const perf::StallMetrics& sm = t.sm;
  const std::int64_t dispatchNs = result.dispatch_ns;
  json doc{{"k", plan.k},
           {"sub_batches", plan.sub_batches},
           {"device", t.device.deviceName()},
           {"iterations", result.t_iter.size()},
           {"t_iter_s", {{"predicted", plan.predictions.t_iter_s}, {"measured", t.mIter}}},
           {"peak_bytes",
            {{"predicted", plan.predictions.peak_bytes},
             {"with_workspace", ex.predictedPeak()},
             {"measured", result.peak}}},
           {"stall_s", {{"predicted", plan.predictions.stall_s}, {"measured", t.mStall}}},
           {"stalled_steps",
            {{"threshold", sm.threshold},
             {"predicted", sm.predicted_stalled},
             {"measured", sm.measured_stalled},
             {"per_iteration", stalledPerIteration(result.steps, sm.threshold)},
             {"precision", sm.precision},
             {"recall", sm.recall},
             {"f1", sm.f1}}},
           {"start_error_s", sm.has_starts ? json{{"median", sm.start_error_median},
                                                  {"p90", sm.start_error_p90},
                                                  {"max", sm.start_error_max},
                                                  {"max_step", sm.start_error_worst_step}}
                                           : json(nullptr)},
           {"dispatch_s",
            dispatchNs >= 0 ? json(static_cast<double>(dispatchNs) * 1e-9) : json(nullptr)},
           {"reuse_delay", {{"planned", plan.reuse_delay}, {"run", ex.reuseDelay()}}},
           {"prefetches_moved",
            {{"planned", plan.prefetches_moved >= 0 ? json(plan.prefetches_moved) : json()},
             {"run", ex.prefetchesMoved()}}},
           {"kernel_choices", collect::kernelChoicesJson(t.q.net, ex)}};
  if (t.deviceWarning) doc["warnings"] = json::array({*t.deviceWarning});
  if (result.cancelled) doc["interrupted"] = interrupt.signalName();
  if (db) doc["db"] = db->path();
  if (!t.kept.empty()) doc["kept"] = t.kept;
  if (!result.collector_source.empty()) {
    doc["collector"] = profileJson(result.profile, result.collector_source, t.mIter,
                                   median(result.collector_t_iter), result.collector_t_iter.size());
    // Whether the profile covers every step 1..2N+1 (copies-only steps named as allowed).
    const collect::StepCoverage cov =
        collect::checkStepCoverage(result.profile, t.q.net, ex.gmap(), t.costs);
    doc["collector"]["step_coverage"] = {
        {"missing", cov.missing}, {"problems", cov.problems}, {"allowed", cov.allowed}};
  }
  out << doc.dump(2, ' ', false, kReplaceInvalidUtf8) << '\n';
}

void printRunText(const RunReport& t, const store::RunWriter* db, const InterruptScope& interrupt,
                  std::ostream& out) {
  const store::PlanFile& plan = t.q.plan;
  const rt::SwapExecutor& ex = t.ex;
  const collect::PlanRunResult& result = t.result;
  const perf::StallMetrics& sm = t.sm;
  const std::int64_t k = plan.k;
  const double tIter = plan.predictions.t_iter_s;
  const std::int64_t peak = plan.predictions.peak_bytes;
  const double stall = plan.predictions.stall_s;
  const double mIter = t.mIter, mStall = t.mStall;
  const std::int64_t mPeak = result.peak;
  const std::vector<double>& times = result.t_iter;
  out << "ran " << t.q.planPath << ": " << t.q.net.name() << ", k = " << k
      << (plan.sub_batches > 1 ? " in " + std::to_string(plan.sub_batches) + " sub-batches of " +
                                     std::to_string(k / plan.sub_batches)
                               : std::string())
      << ", " << plan.policy << ", " << times.size() << " measured iterations on "
      << t.device.deviceName() << "\n"
      << std::fixed << std::setprecision(1) << "                 predicted     measured   error\n"
      << "  t_iter      " << std::setw(10) << tIter * 1e3 << " ms" << std::setw(10) << mIter * 1e3
      << " ms   " << formatRelativeError(tIter, mIter) << "  (median)\n"
      << "  peak        " << std::setw(13) << peak << std::setw(13) << mPeak << "   "
      << formatRelativeError(static_cast<double>(peak), static_cast<double>(mPeak)) << "  (bytes)\n"
      << "  stall       " << std::setw(10) << stall * 1e3 << " ms" << std::setw(10) << mStall * 1e3
      << " ms   " << formatRelativeError(stall, mStall) << "  (median)\n"
      << "  stalled     " << std::setw(10) << sm.predicted_stalled.size()
      << (sm.predicted_stalled.size() == 1 ? " step " : " steps") << std::setw(7)
      << sm.measured_stalled.size() << (sm.measured_stalled.size() == 1 ? " step " : " steps")
      << "   (stall > " << formatFixed(sm.threshold * 100, 0)
      << " % of t_iter; measured: the steps stalled in more than half of the " << sm.iterations
      << (sm.iterations == 1 ? " iteration" : " iterations") << ")\n";
  // The scores compare each iteration's own stalled steps with the predicted ones; the counts
  // they come from are printed with them, as the sets above are the majority's.
  const std::vector<int> perIteration = stalledPerIteration(result.steps, sm.threshold);
  out << "  scores      each iteration's stalled steps (" << describeCounts(perIteration)
      << ") against the " << sm.predicted_stalled.size() << " predicted: precision "
      << formatFixed(sm.precision, 2) << ", recall " << formatFixed(sm.recall, 2) << ", F1 "
      << formatFixed(sm.f1, 2) << (sm.iterations == 1 ? "" : ", medians over the iterations")
      << " (precision is 1 where none is predicted, recall 1 where none stalled)\n";
  if (sm.has_starts) {
    out << "  step start  error " << formatMilliseconds(sm.start_error_median) << " ms median, "
        << formatMilliseconds(sm.start_error_p90) << " ms p90, "
        << formatMilliseconds(sm.start_error_max) << " ms max (step " << sm.start_error_worst_step
        << "), " << formatFixed(100 * sm.start_error_max / mIter, 1) << " % of t_iter\n";
  } else {
    // PlanRun refuses a start_s of another length than the steps': here it is empty.
    out << "  step start  not compared: the plan holds no predicted starts (made by an older "
           "Swapscope)\n";
  }
  if (ex.reuseDelay() != plan.reuse_delay) {
    out << "  the run keeps offloaded memory from reuse for " << ex.reuseDelay()
        << " steps, the plan for " << plan.reuse_delay
        << ": the schedule differs from the predicted one\n";
  }
  if (plan.prefetches_moved >= 0 && ex.prefetchesMoved() != plan.prefetches_moved) {
    out << "  the run opens " << ex.prefetchesMoved() << " prefetches early, the plan "
        << plan.prefetches_moved << ": the schedule differs from the predicted one\n";
  }
  if (ex.predictedPeak() != peak) {
    // PlanRun refused a plan whose peak is not its GMAP's: what differs is the device's own.
    out << "  the device's "
        << (hasWorkspaces(ex) ? "kernel workspaces and buffer padding raise"
                              : "buffer padding raises")
        << " the predicted peak to " << ex.predictedPeak() << " bytes ("
        << formatRelativeError(static_cast<double>(ex.predictedPeak()), static_cast<double>(mPeak))
        << " against the measured peak)\n";
  }
  if (!result.collector_source.empty()) {
    printProfile(out, result.profile, result.collector_source, mIter,
                 median(result.collector_t_iter), result.collector_t_iter.size());
  }
  if (result.cancelled) {
    out << "interrupted (" << interrupt.signalName() << ") after " << times.size()
        << " measured iterations" << (db ? ": the database is marked incomplete" : "") << '\n';
  }
  if (!t.kept.empty()) out << t.kept << '\n';
}

}  // namespace

int cmdRun(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  ArgParser args = runParser();
  if (!args.parse(argv)) {
    out << args.help();
    return kExitOk;
  }
  const RunRequest q = parseRunRequest(args);
  const store::PlanFile& plan = q.plan;
  const Network& net = q.net;
  const SwapSet swapped = collect::planSwapSet(net, plan, q.planPath, planNetworkHint(plan));
  const auto costs = computeLayerCosts(net);

  const std::unique_ptr<rt::Device> device = openDevice(args, err);
  // Predictions describe the device whose profile the model was fitted on.
  std::optional<std::string> deviceWarning;
  if (const std::string text = collect::planDeviceMismatch(plan, *device); !text.empty()) {
    if (args.has("--strict-device")) throwBadInput("--strict-device: " + text);
    deviceWarning = text;
    if (!args.has("--json")) out << "warning: " << text << '\n';
  }
  const collect::PlanRunConfig cfg = planRunConfig(args, q, *device, err);
  // The executor, the plan's steps and the data are checked before any database is created.
  collect::PlanRun prepared(*device, net, plan, q.planPath, swapped, cfg);
  const rt::SwapExecutor& ex = prepared.executor();
  // Before the database is created: a Ctrl-C while its schema is written stops the run after
  // it, not the process halfway through it.
  InterruptScope interrupt;
  std::unique_ptr<store::RunWriter> db;
  if (auto f = args.value("--db")) {
    store::RunMeta meta = collect::runMeta(*device, "run", plan.budget, plan.policy);
    meta.versions["Swapscope"] = SWAPSCOPE_VERSION;
    meta.command_line = quotedCommandLine("run", argv);
    meta.extra["plan"] = store::planToJson(plan).dump();
    db = std::make_unique<store::RunWriter>(*f, meta, args.has("--force"));
    announceRecording(*db, args.has("--json"), out);
  }
  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto progress = [&](const collect::RunProgress& p) {
    if (!tty) return;
    std::cerr << "\r  " << collect::runStageName(p.stage) << " iteration " << p.iteration << "/"
              << p.iterations << "  " << std::fixed << std::setprecision(3) << p.iteration_seconds
              << " s/iteration, " << std::setprecision(0) << p.eta_seconds << " s left     "
              << std::flush;
    if (p.iteration == p.iterations) std::cerr << '\n';
  };
  const auto runIt = [&] {
    return collect::runPlan(prepared, db.get(), progress, &interrupt.flag());
  };
  const collect::PlanRunResult result = db ? runKeepingNote(*db, runIt) : runIt();
  if (tty && result.cancelled) std::cerr << '\n';
  // The earlier database that --force did not replace, and where this run is.
  const std::string kept = db ? db->keptNote() : std::string();
  if (result.t_iter.empty()) {
    throw Error(ErrorKind::Runtime,
                "interrupted before any measured iteration" + (kept.empty() ? "" : "; " + kept));
  }
  const RunReport report{q,
                         *device,
                         ex,
                         result,
                         costs,
                         deviceWarning,
                         kept,
                         median(result.t_iter),
                         median(result.stall),
                         stallMetrics(plan, ex, result)};
  // Interrupted: the figures are printed, and the exit code says the run did not finish.
  if (args.has("--json")) {
    printRunJson(report, db.get(), interrupt, out);
  } else {
    printRunText(report, db.get(), interrupt, out);
  }
  return finishedExit(result.cancelled, kept, "run", err);
}

}  // namespace swapscope::cli
