// SPDX-License-Identifier: MIT
/// @brief `swapscope plan`: fits the performance model to a run database and plans the minibatch
/// and swap set for a budget: predicted t_iter, throughput, peak, stalls and the swap set.
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "analysis/policy.h"
#include "cli/commands.h"
#include "cli/sub_batch_options.h"
#include "common/bytes.h"
#include "common/error.h"
#include "common/format.h"
#include "graph/network_json.h"
#include "options/args.h"
#include "options/file_options.h"
#include "options/network_options.h"
#include "options/plan_options.h"
#include "perfmodel/model.h"
#include "perfmodel/planner.h"
#include "perfmodel/stability.h"
#include "perfmodel/sub_batch_plan.h"
#include "store/plan_file.h"
#include "store/run_db.h"

namespace swapscope::cli {
namespace {

using json = nlohmann::ordered_json;

std::string ms(double seconds) {
  return formatMilliseconds(seconds) + " ms";
}

/// What to say when the planner chose S = K passes of one sample; empty otherwise. `candidates`
/// counts the splits it planned: two (K whole, or S = 1, and S = K) where K is prime.
std::string onePerPassNote(std::int64_t k, std::int64_t passes, int candidates) {
  if (passes <= 1 || passes != k) return "";
  const std::string n = std::to_string(k);
  if (candidates == 2) {
    return "each of the " + n + " passes holds one sample: k = " + n +
           " is prime, so one sample per pass is its only split (a k with more divisors splits "
           "into larger passes)";
  }
  return "each of the " + n + " passes holds one sample: no larger pass of k = " + n +
         " fits the budget or runs faster";
}

/// Options that contradict each other are refused, naming both; one that another makes moot is
/// named in a warning.
void checkPlanOptions(const ArgParser& args, const perf::PlanRequest& req,
                      const std::string& dbPath, std::ostream& err) {
  if (req.batch && args.has("--max-batch")) {
    throwBadInput("give --batch K or --max-batch K, not both: --batch " + *args.value("--batch") +
                  " fixes k, --max-batch " + *args.value("--max-batch") +
                  " caps the search for it");
  }
  checkBatchWithMode(req.batch, req.mode);
  if (req.batch && args.has("--mode")) {
    warnNoEffect(err, "--mode " + *args.value("--mode"),
                 "--batch " + *args.value("--batch") + " fixes k, so no k is searched");
  }
  checkZooOptions(args, "plan takes the network profiled in " + dbPath);
  if (args.has("--link-bandwidth") && req.gpus <= 1) {
    warnNoEffect(err, "--link-bandwidth " + *args.value("--link-bandwidth"),
                 "it sets the all-reduce between GPUs, and without --gpus N above 1 there is "
                 "none (Δ = 0)");
  }
  if (args.has("--epochs") && req.dataset_size == 0) {
    warnNoEffect(err, "--epochs " + *args.value("--epochs"),
                 "the whole-training time needs --dataset-size M too");
  }
  warnForceWithoutOutput(args, "--out", err);
  if (args.value("--out") == kStandardOutput && args.has("--json")) {
    throwBadInput("give --out - or --json, not both: each prints the plan JSON to standard output");
  }
}

/// The plan's options, checked before the run database is read.
struct PlanOptions {
  std::string dbPath;
  files::OutputRules rules;
  perf::PlanRequest req;
  bool allowSplit = false;
  const char* given = nullptr;  ///< the sub-batch option given, if any
  bool split = false;
  std::int64_t subBatches = 1;
  bool outToStdout = false;  ///< --out -: the plan file's JSON on standard output
};

ArgParser planParser() {
  ArgParser args(
      "swapscope plan --db FILE [--model NAME | --net FILE | --onnx FILE] [--input CxHxW]\n"
      "               [--classes N] --budget SIZE [--batch K] [--policy " +
          joinPolicyNames(PolicyRows::All, "|", "|") +
          "] [--mode argmin|paper]\n"
          "               [--max-batch K] [--epochs E --dataset-size M] [--gpus N --link-bandwidth "
          "B]\n"
          "               [--lr-base X --k-base K --lr-c C]\n"
          "               [--sub-batches S|auto | --sub-batch-size B | --allow-sub-batches]\n"
          "               [--out plan.json|- [--force]] [--json]",
      "Fits the performance model to a run database (made by `swapscope profile`) and plans\n"
      "for a budget: the minibatch k (searched unless --batch), the swap set, and the simulated\n"
      "iteration: t_iter, throughput, peak memory and the stall before each step. Without\n"
      "--model/--net it plans for the profiled network; another network uses the per-type\n"
      "curves and is marked transferred.");
  args.option("--db", "FILE",
              "the run database with a profile (required; an SQLite file, so not standard "
              "input: - is refused, ./- names a file called '-')");
  addNetworkOptions(args);
  args.option("--budget", "SIZE", "the memory budget (required)");
  args.option("--batch", "K", "plan this k instead of searching");
  args.option("--policy", "P", policyChoices(PolicyRows::All, Policy::AccUdnn));
  args.option("--mode", "M",
              "argmin (default: minimise simulated training time) or paper (Algorithm 2)");
  args.option("--max-batch", "K", "search k up to K at most");
  args.option("--epochs", "E", "epochs for the whole-training time (default 1)");
  args.option("--dataset-size", "M",
              "samples per epoch; with it, minimise ceil(E M / (N k)) (t_iter + Δ) on N GPUs");
  args.option("--gpus", "N", "data-parallel GPUs; Δ is the ring all-reduce of the parameters");
  args.option("--link-bandwidth", "B", "all-reduce link bandwidth, bytes/s (e.g. 25GB)");
  args.option("--lr-base", "X", "base learning rate for eq. 9 (default 0.1)");
  args.option("--k-base", "K", "minibatch of the base learning rate (default 256)");
  args.option("--lr-c", "C", "eq. 9's c (default 0: linear scaling)");
  addSubBatchOptions(args,
                     "with --batch K; auto: the S dividing K with the least simulated t_iter");
  args.flag("--allow-sub-batches",
            "with --batch K: K in one pass where it fits the budget (its peak, and its buffers "
            "pack), else split into the S dividing K with the least simulated t_iter (moDNN), "
            "saying why");
  args.option("--out", "FILE",
              "write the plan JSON (docs/plan-json.md); - prints it to standard output, and the "
              "text report to standard error");
  addForceFlag(args, "the --out file");
  args.flag("--json", "print the plan JSON instead of text");
  return args;
}

PlanOptions parsePlanOptions(const ArgParser& args, std::ostream& err) {
  PlanOptions o;
  o.dbPath = args.required("--db");
  refuseStandardInput(o.dbPath, "--db", "a run database", kRunDatabaseIsReadInPlace);
  refuseOnnxFromStandardInput(args);
  o.rules = outputRules(args, {"--db", "--net", "--onnx"});
  o.outToStdout = checkOutputOrStandardOutput(args, "--out", "the plan file --out", o.rules, err);
  // Every option is checked before the run database is read and fitted.
  perf::PlanRequest& req = o.req;
  req.budget = parseByteSize(args.required("--budget"), "--budget");
  req.batch = args.batch("--batch");
  req.max_batch = args.batch("--max-batch").value_or(0);
  if (auto p = args.value("--policy")) req.policy = parsePolicy(*p, PolicyRows::All);
  if (auto m = args.value("--mode")) req.mode = parsePlanMode(*m);
  if (auto e = args.value("--epochs")) req.epochs = parseNumber(*e, "--epochs", 0.001, 1e6);
  req.dataset_size = args.positiveInt("--dataset-size").value_or(0);
  req.gpus = static_cast<int>(args.integer("--gpus", 1, 1024).value_or(1));  // the app's range
  if (auto b = args.value("--link-bandwidth")) {
    req.link_bandwidth = static_cast<double>(parseByteSize(*b, "--link-bandwidth"));
  }
  if (auto v = args.value("--lr-base")) req.lr_base = parseNumber(*v, "--lr-base", 0, 100);
  req.k_base = args.positiveInt("--k-base").value_or(256);
  if (auto v = args.value("--lr-c")) req.lr_c = parseNumber(*v, "--lr-c", 0, 1e6);
  checkPlanOptions(args, req, o.dbPath, err);
  // Sub-batches split the fixed minibatch: S given (0 for auto), checked against --batch here,
  // or --allow-sub-batches, where the planner splits K only when it does not fit.
  o.allowSplit = args.has("--allow-sub-batches");
  o.given = args.has("--sub-batches")      ? "--sub-batches"
            : args.has("--sub-batch-size") ? "--sub-batch-size"
                                           : nullptr;
  if (o.allowSplit && o.given) {
    throwBadInput(std::string("give at most one of --allow-sub-batches and ") + o.given +
                  ", not both: --allow-sub-batches chooses S where K does not fit, " + o.given +
                  " gives it");
  }
  o.split = o.allowSplit || o.given;
  if (o.split && !req.batch) {
    throwBadInput(std::string(o.allowSplit ? "--allow-sub-batches" : o.given) +
                  " splits a fixed minibatch: give --batch K");
  }
  if (o.given) o.subBatches = subBatchOption(args, *req.batch, true);
  return o;
}

/// The fitted model's timeline fits, which the stall prediction rests on (docs/perfmodel.md).
void printStallModel(const perf::PerfModel& model, const store::RunData& run,
                     const std::string& dbPath, std::ostream& out) {
  const perf::DispatchFit& dispatch = model.dispatch();
  const perf::ContentionFit& contention = model.contention();
  if (dispatch.present && contention.present) {
    const perf::LinkFit &h2d = model.link(false), &h2dBeside = model.linkBesideCompute(false);
    const perf::LinkFit &d2h = model.link(true), &d2hBeside = model.linkBesideCompute(true);
    auto rate = [](const perf::LinkFit& f) { return formatFixed(f.bandwidth / 1e9, 2); };
    const int left = contention.slowdown.outliers + contention.start_block.outliers +
                     contention.copy_start_block.outliers;
    out << "  stall model       hand-off " << ms(dispatch.seconds) << " per step ("
        << ms(dispatch.woken_seconds) << " after a wait); compute "
        << formatFixed(100 * contention.slowdown.slope, 0)
        << " % slower beside a copy; a step waits "
        << formatFixed(100 * contention.copy_start_block.slope, 0)
        << " % of a copy starting in its hand-off, "
        << formatFixed(100 * contention.start_block.slope, 0)
        << " % of a running copy; copies without / beside "
        << "compute h2d " << rate(h2d) << " / " << rate(h2dBeside) << " GB/s, d2h "
        << (d2h.from_other_direction ? std::string("none recorded (h2d's stand in)")
                                     : rate(d2h) + " / " + rate(d2hBeside) + " GB/s")
        << "\n";
    if (left > 0) {
      out << "                    " << left
          << " outlying samples left out of the contention fits (steps preempted by other work "
          << "on the machine: " << contention.slowdown.outliers << " compute times, "
          << contention.start_block.outliers + contention.copy_start_block.outliers
          << " start waits)\n";
    }
  } else {
    out << "  stall model       " << dbPath << " records no t_ready (run-database schema version "
        << run.schema_version
        << "): no hand-off or contention fits, so stalls are under-predicted; profile again\n";
  }
}

/// The plan and what it came from, as the text printer reads it.
struct PlanReport {
  const PlanOptions& o;
  const store::RunData& run;
  const Network& net;
  const perf::PerfModel& model;
  const perf::Planner& planner;
  const perf::SubBatchPlan& sub;
  const perf::PlanResult& r;
  const store::PlanFile& planFile;
  const std::vector<std::string>& warnings;  ///< about the profile the model is fitted to
  const std::string& onePerPass;
};

void printPlanText(const PlanReport& t, std::ostream& out) {
  const perf::PlanRequest& req = t.o.req;
  const std::string& dbPath = t.o.dbPath;
  const Network& net = t.net;
  const perf::PerfModel& model = t.model;
  const perf::PlanResult& r = t.r;
  const perf::Evaluation& e = r.best;
  const perf::SubBatchPlan& sub = t.sub;
  const store::PlanFile& planFile = t.planFile;
  const auto passes = static_cast<std::int64_t>(planFile.sub_batches);
  // Swap-set summary: how many FMs, the bytes the swaps move per iteration, and which swappable
  // FMs stay on the device.
  const std::vector<bool> canSwap = swappableFms(net, t.planner.costs());
  std::size_t swappable = 0;
  std::vector<std::string> kept, recomputed;
  for (int i = 0; i < net.size(); ++i) {
    if (!canSwap[static_cast<std::size_t>(i)]) continue;
    ++swappable;
    if (r.gmap.recomputed[static_cast<std::size_t>(i)]) {
      recomputed.push_back(net.layer(i).name);
    } else if (!e.swapped[static_cast<std::size_t>(i)]) {
      kept.push_back(net.layer(i).name);
    }
  }
  auto names = [&](const std::vector<std::string>& list) {
    for (std::size_t i = 0; i < list.size() && i < 8; ++i)
      out << (i ? ", " : "") << list[i];
    if (list.size() > 8) out << " and " << list.size() - 8 << " more";
    out << '\n';
  };
  out << "plan for " << net.name() << " in " << formatBytes(req.budget) << " on " << model.device()
      << " (model from " << dbPath << ")\n"
      << "  fits describe     " << model.device() << " (backend " << t.run.meta.backend
      << ", profiled " << t.run.meta.started_utc << "): predictions hold for that device only\n";
  for (const std::string& w : t.warnings)
    out << "  warning           " << dbPath << ": " << w << '\n';
  printStallModel(model, t.run, dbPath, out);
  out << "  policy            " << policyName(req.policy) << ", "
      << (req.batch ? "k fixed" : std::string("mode ") + std::string(perf::planModeName(req.mode)))
      << " (" << r.evaluated << " simulations; k_max " << r.k_max
      << (passes > 1 ? " per sub-batch" : "") << ")\n"
      << "  k                 " << planFile.k;
  if (passes > 1) {
    out << " in " << passes << " sub-batches of " << e.k
        << (t.o.subBatches == 0 || t.o.allowSplit
                ? " (least t_iter of " + std::to_string(sub.candidates) + " divisors of k)"
                : std::string());
  }
  out << "  (learning rate " << planFile.learning_rate << " by eq. 9)\n";
  if (sub.whole_need == perf::PlanResult::kNeedOverflows) {
    out << "  sub-batches       k = " << planFile.k << " alone needs more bytes than a 64-bit "
        << "count holds under " << policyName(req.policy) << ", the budget is "
        << formatBytes(req.budget) << " (" << req.budget << " bytes): split into " << passes
        << " passes\n";
  } else if (sub.whole_need > 0) {
    // A searched policy's least peak at K is swap-all's: no swap set it tries needs less.
    const bool searched = !policyInfo(req.policy).fixed();
    out << "  sub-batches       k = " << planFile.k << " alone needs "
        << (searched ? "at least " : "") << formatBytes(sub.whole_need) << " (" << sub.whole_need
        << " bytes" << (searched ? ", swap-all's peak" : "") << ") under " << policyName(req.policy)
        << ", the budget is " << formatBytes(req.budget) << " (" << req.budget
        << " bytes): split into " << passes << " passes\n";
  } else if (sub.whole_does_not_pack) {
    out << "  sub-batches       k = " << planFile.k << " alone fits its peak in "
        << formatBytes(req.budget) << " under " << policyName(req.policy)
        << ", but its buffers pack neither ahead of time nor at run time: split into " << passes
        << " passes\n";
  }
  out << "  t_iter            " << ms(planFile.predictions.t_iter_s) << "  (" << std::fixed
      << std::setprecision(1) << planFile.predictions.throughput << " samples/s)\n"
      << "  peak              " << formatBytes(e.peak) << " (" << e.peak << " bytes"
      << (passes > 1 ? ", one sub-batch" : "") << ")\n"
      << "  stall             " << ms(planFile.predictions.stall_s)
      << " per iteration (the compute stream's idle time, hand-offs included); "
      << planFile.predictions.stalls.size()
      << (planFile.predictions.stalls.size() == 1 ? " step stalls" : " steps stall") << "\n"
      << "  swap set          " << planFile.swap_set.size() << " of " << swappable
      << " swappable FMs, " << formatBytes(e.bytesMoved() * passes) << " moved per iteration ("
      << formatBytes(e.offload_bytes * passes) << " to host, "
      << formatBytes(e.prefetch_bytes * passes) << " to device)\n";
  if (!req.batch && req.mode == perf::PlanMode::Paper) {
    out << "  constraint (6)    met by Algorithm 1's t_ready at all " << e.sim.steps.size() - 1
        << " steps (pinned area budget - M_peak(k): " << formatBytes(r.pinned_area) << ")\n";
  }
  if (!kept.empty() && !planFile.swap_set.empty()) {
    out << "  kept on device    ";
    names(kept);
  }
  if (!recomputed.empty()) {
    out << "  recomputed        ";
    names(recomputed);
  }
  if (req.gpus > 1) {
    const double delta = planFile.predictions.delta_s;
    out << "  all-reduce (Δ)    " << ms(delta) << " per iteration across " << req.gpus
        << " GPUs (ring all-reduce of the parameters); with it, " << std::setprecision(1)
        << static_cast<double>(planFile.k) / (planFile.predictions.t_iter_s + delta)
        << " samples/s per GPU\n";
  }
  if (planFile.predictions.t_whole_s > 0) {
    // Milliseconds for a small data set (one decimal of a second read "0.0 s" below 50 ms).
    out << "  whole training    " << formatDuration(planFile.predictions.t_whole_s) << '\n';
  }
  if (e.extrapolated)
    out << "  note: some steps are predicted outside the profiled range (extrapolated)\n";
  if (e.transferred) out << "  note: per-type curves from another network (transferred)\n";
  if (!t.onePerPass.empty()) out << "  note: " << t.onePerPass << '\n';
  if (!planFile.predictions.stalls.empty()) {
    out << "stalls:\n";
    for (const store::PlanStall& s : planFile.predictions.stalls) {
      out << "  step " << std::setw(4) << s.step << "  " << std::setw(4) << s.direction << "  "
          << s.layer << "  " << ms(s.seconds) << '\n';
    }
  }
}

/// Where some steps have no fitted curve (a layer type the profile did not record, on a network
/// planned with the profile's per-type curves), the plan counts them as 0 s: it says so, naming
/// the layer types. Empty where every step has a curve.
std::string missingCurvesWarning(const perf::PerfModel& model, const Network& net,
                                 const std::vector<LayerCost>& costs, const perf::Evaluation& e) {
  if (e.missing == 0) return {};
  std::set<std::string> kinds;
  for (int layer = 0; layer < net.size(); ++layer) {
    if (net.layer(layer).kind == LayerKind::Input) continue;  // no step: the load is a copy
    for (const perf::StepKind kind : {perf::StepKind::Forward, perf::StepKind::Backward}) {
      if (model.step(net, costs, layer, kind, e.k).missing)
        kinds.insert(std::string(layerKindName(net.layer(layer).kind)));
    }
  }
  std::string names;
  for (const std::string& k : kinds)
    names += (names.empty() ? "" : ", ") + k;
  return std::to_string(e.missing) + (e.missing == 1 ? " step has" : " steps have") +
         " no fitted curve and " + (e.missing == 1 ? "is" : "are") +
         " counted as 0 s, so t_iter is low by their time (layer types the profile did not "
         "record: " +
         names + ")";
}

}  // namespace

int cmdPlan(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  ArgParser args = planParser();
  if (!args.parse(argv)) {
    out << args.help();
    return kExitOk;
  }
  const PlanOptions o = parsePlanOptions(args, err);
  const perf::PlanRequest& req = o.req;
  const std::string& dbPath = o.dbPath;

  store::RunReader reader(dbPath);
  const store::RunData run = reader.load();
  store::requireNetwork(dbPath, run.network, "plan");
  const Network net = args.has("--model") || args.has("--net") || args.has("--onnx")
                          ? loadNetwork(args)
                          : networkFromText(run.network.json, dbPath + " (network)");
  const perf::PerfModel model = perf::PerfModel::fit(run);

  const perf::Planner planner(model, net);
  perf::SubBatchPlan sub;
  if (o.allowSplit) {
    sub = perf::planAllowingSubBatches(planner, req);
  } else if (o.split) {
    sub = perf::planSubBatches(planner, req, o.subBatches);
  }
  const perf::PlanResult r = o.split ? sub.pass : planner.plan(req);
  // A budget or k that cannot train is the user's input (exit 2); a paper-mode search that
  // finds no k meeting constraint (6) is the model's answer (exit 1).
  if (!r.trainable) perf::throwNoPlan(r);
  const store::PlanFile planFile =
      o.split ? perf::toPlanFile(sub, req, model, net, run.meta.backend, dbPath)
              : perf::toPlanFile(r, req, model, net, run.meta.backend, dbPath);
  const auto passes = static_cast<std::int64_t>(planFile.sub_batches);
  auto doc = store::planToJson(planFile);
  if (auto f = args.value("--out"); f && !o.outToStdout)
    store::writePlanFile(planFile, *f, o.rules);
  const bool chosenSplit = o.allowSplit || (o.given && o.subBatches == 0);
  const std::string onePerPass =
      chosenSplit ? onePerPassNote(planFile.k, passes, sub.candidates) : std::string();
  // A profile recorded while other work ran: its fits, and so the plan, may be far off.
  const std::optional<perf::ProfileStability> stability = perf::readStability(run);
  std::vector<std::string> warnings;
  if (std::string w = perf::notAProfileWarning(run); !w.empty()) warnings.push_back(std::move(w));
  if (std::string w = perf::unfinishedProfileWarning(run.meta); !w.empty())
    warnings.push_back(std::move(w));
  if (std::string w = missingCurvesWarning(model, net, planner.costs(), r.best); !w.empty())
    warnings.push_back(std::move(w));
  if (stability) {
    if (std::string w = perf::stabilityWarning(*stability); !w.empty())
      warnings.push_back(std::move(w));
  }
  // A budget the profiled device does not have: the plan is made, but it cannot run there.
  const std::string aboveDevice =
      store::budgetAboveDeviceWarning(req.budget, run.meta.device_memory);
  if (args.has("--json")) {
    for (const std::string& note : warnings)
      doc["notes"].push_back(note);
    if (!aboveDevice.empty()) doc["notes"].push_back("--budget: " + aboveDevice);
    if (!onePerPass.empty()) doc["notes"].push_back(onePerPass);
    out << doc.dump(2, ' ', false, kReplaceInvalidUtf8) << '\n';
    return kExitOk;
  }
  if (!aboveDevice.empty())
    err << "warning: --budget " << *args.value("--budget") << ": " << aboveDevice << '\n';
  if (o.outToStdout) {
    // Standard output holds the plan file's JSON alone (what --out FILE would hold); the report
    // goes to standard error.
    out << store::planFileText(planFile, kStandardOutput);
  }
  printPlanText({o, run, net, model, planner, sub, r, planFile, warnings, onePerPass},
                o.outToStdout ? err : out);
  return kExitOk;
}

}  // namespace swapscope::cli
