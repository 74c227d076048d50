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

#include "analysis/swap_policy.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/interrupt.h"
#include "cli/network_options.h"
#include "cli/run_output.h"
#include "collectors/profiler.h"
#include "collectors/timeline_rows.h"
#include "common/bytes.h"
#include "common/error.h"
#include "common/stats.h"
#include "graph/network_json.h"
#include "runtime/dataset.h"
#include "runtime/executor.h"
#include "store/run_db.h"

namespace swapscope::cli {
namespace {

using json = nlohmann::ordered_json;

/// A field of the plan that must exist with the right type; Error(BadInput) naming it otherwise.
const json& field(const json& obj, const char* name, json::value_t type, const std::string& file,
                  const std::string& where) {
  const std::string path = where.empty() ? name : where + "." + name;
  if (!obj.is_object() || !obj.contains(name))
    throwBadInput("'" + file + "': missing field '" + path + "'");
  const json& v = obj.at(name);
  const bool ok =
      type == json::value_t::number_float ? v.is_number()
      : type == json::value_t::number_unsigned
          ? (v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0))
          : v.type() == type;
  if (!ok)
    throwBadInput("'" + file + "': field '" + path + "' has the wrong type (" + v.type_name() +
                  ")");
  return v;
}

std::string pct(double predicted, double measured) {
  std::ostringstream o;
  o << std::showpos << std::fixed << std::setprecision(1)
    << (measured != 0 ? 100.0 * (predicted - measured) / measured : 0.0) << " %";
  return o.str();
}

}  // namespace

int cmdRun(const std::vector<std::string>& argv, std::ostream& out) {
  ArgParser args(
      "swapscope run --plan plan.json [--model NAME | --net FILE] [--iters N]\n"
      "              [--warmup N] [--device cpu] [--seed S] [--db FILE [--force]] [--json]",
      "Runs a plan made by `swapscope plan` on the engine (synthetic data of the\n"
      "network's shape) and prints predicted against measured: t_iter (the median of the\n"
      "measured iterations), the pool peak and the stall time, with relative errors.\n"
      "--db records the measured timeline in a run database.");
  args.option("--plan", "FILE", "the plan JSON (required)");
  addNetworkOptions(args);
  args.option("--iters", "N", "measured iterations (default 5)");
  args.option("--warmup", "N", "unmeasured iterations first (default 1)");
  args.option("--device", "DEV", "cpu (default)");
  args.option("--seed", "S", "seed (default 1)");
  args.option("--db", "FILE", "record the run in this run database");
  args.flag("--force", "replace --db if it exists");
  args.flag("--json", "print JSON");
  if (!args.parse(argv)) {
    out << args.help();
    return kExitOk;
  }
  const std::string planPath = args.required("--plan");
  std::ifstream in(planPath);
  if (!in) throwBadInput("cannot open '" + planPath + "'");
  const json plan = json::parse(in, nullptr, false);
  if (plan.is_discarded()) throwBadInput("'" + planPath + "' is not valid JSON");
  if (field(plan, "format", json::value_t::string, planPath, "") != "swapscope-plan") {
    throwBadInput("'" + planPath + "': field 'format' is not \"swapscope-plan\"");
  }
  const auto version =
      field(plan, "version", json::value_t::number_unsigned, planPath, "").get<int>();
  if (version != 1)
    throwBadInput("'" + planPath + "': plan version " + std::to_string(version) + " is not 1");
  const json& netId = field(plan, "network", json::value_t::object, planPath, "");
  const std::string hash =
      field(netId, "structure_hash", json::value_t::string, planPath, "network");
  const std::int64_t k =
      field(plan, "k", json::value_t::number_unsigned, planPath, "").get<std::int64_t>();
  const std::int64_t budget =
      field(plan, "budget", json::value_t::number_unsigned, planPath, "").get<std::int64_t>();
  const json& swapNames = field(plan, "swap_set", json::value_t::array, planPath, "");
  const json& pred = field(plan, "predictions", json::value_t::object, planPath, "");
  const double tIter =
      field(pred, "t_iter_s", json::value_t::number_float, planPath, "predictions");
  const std::int64_t peak =
      field(pred, "peak_bytes", json::value_t::number_unsigned, planPath, "predictions");
  const double stall = field(pred, "stall_s", json::value_t::number_float, planPath, "predictions");
  if (k < 1) throwBadInput("'" + planPath + "': field 'k' must be at least 1");

  Network net = [&] {
    if (args.has("--model") || args.has("--net")) return loadNetwork(args);
    const std::string db = field(plan, "source_db", json::value_t::string, planPath, "");
    store::RunReader reader(db);
    return networkFromJson(json::parse(reader.network().json), db + " (network)");
  }();
  if (net.structureHash() != hash) {
    throwBadInput("'" + planPath + "' was made for network " + netId.value("name", "?") +
                  " (structure " + hash + "), not " + net.name() + " (structure " +
                  net.structureHash() + ")");
  }
  std::vector<std::string> names;
  for (const auto& n : swapNames) {
    if (!n.is_string()) throwBadInput("'" + planPath + "': field 'swap_set' must hold FM names");
    names.push_back(n.get<std::string>());
  }
  const auto costs = computeLayerCosts(net);
  const SwapSet swapped = swapSetFromNames(net, costs, names);
  const std::int64_t iters = args.positiveInt("--iters").value_or(5);
  if (iters > 100000) throwBadInput("--iters: at most 100000, got " + std::to_string(iters));
  int warmup = 1;
  if (auto w = args.value("--warmup"))
    warmup = static_cast<int>(parseNumber(*w, "--warmup", 0, 1000));
  const std::uint64_t seed = seedOption(args);

  const std::unique_ptr<rt::Device> device = rt::openDevice(args.value("--device").value_or("cpu"));
  rt::ExecutorOptions options;
  options.seed = seed;
  rt::SwapExecutor ex(*device, net, k, swapped, budget, options);
  const rt::Dataset data = rt::syntheticDataset(net.sampleShape(), net.classes(), k, seed);
  std::unique_ptr<store::RunWriter> db;
  if (auto f = args.value("--db")) {
    store::RunMeta meta = collect::runMeta(*device, "run", budget, plan.value("policy", "?"));
    meta.versions["Swapscope"] = SWAPSCOPE_VERSION;
    meta.command_line = quotedCommandLine("run", argv);
    meta.extra["plan"] = plan.dump();
    db = std::make_unique<store::RunWriter>(*f, meta, args.has("--force"));
    db->writeNetwork(net, costs, ex.gmap());
  }
  InterruptScope interrupt;
  const std::int64_t runStart = device->nowNs();
  std::vector<double> times, stalls;
  for (int it = 0; it < warmup + iters && !interrupt.flag().load(); ++it) {
    const rt::IterationRecord rec = ex.trainIteration(data.images.data(), data.labels.data(),
                                                      static_cast<std::uint64_t>(it), {});
    if (it < warmup) continue;
    times.push_back(static_cast<double>(rec.duration_ns) * 1e-9);
    stalls.push_back(static_cast<double>(rec.stall_total_ns) * 1e-9);
    if (db) {
      collect::RowContext ctx{&net,
                              &ex.gmap(),
                              &costs,
                              k,
                              static_cast<int>(times.size() - 1),
                              runStart,
                              device->hostMemoryPinned(),
                              times.size() == 1};
      db->addIteration(collect::iterationRows(rec, ctx));
    }
  }
  if (times.empty()) throw Error(ErrorKind::Runtime, "interrupted before any measured iteration");
  const double mIter = median(times), mStall = median(stalls);
  const std::int64_t mPeak = ex.poolStats().high_water;
  if (db) {
    db->addBatch({k, plan.value("policy", "?"), warmup, ex.predictedPeak(), mPeak, ex.reuseDelay(),
                  ex.hoistedPrefetches()});
    db->finish(interrupt.flag().load() ? store::RunStatus::Incomplete : store::RunStatus::Complete);
  }
  if (args.has("--json")) {
    out << json{{"k", k},
                {"iterations", times.size()},
                {"t_iter_s", {{"predicted", tIter}, {"measured", mIter}}},
                {"peak_bytes", {{"predicted", peak}, {"measured", mPeak}}},
                {"stall_s", {{"predicted", stall}, {"measured", mStall}}}}
               .dump(2)
        << '\n';
    return kExitOk;
  }
  out << "ran " << planPath << ": " << net.name() << ", k = " << k << ", "
      << plan.value("policy", "?") << ", " << times.size() << " measured iterations on "
      << device->deviceName() << "\n"
      << std::fixed << std::setprecision(1) << "                 predicted     measured   error\n"
      << "  t_iter      " << std::setw(10) << tIter * 1e3 << " ms" << std::setw(10) << mIter * 1e3
      << " ms   " << pct(tIter, mIter) << "  (median)\n"
      << "  peak        " << std::setw(13) << peak << std::setw(13) << mPeak << "   "
      << pct(static_cast<double>(peak), static_cast<double>(mPeak)) << "  (bytes)\n"
      << "  stall       " << std::setw(10) << stall * 1e3 << " ms" << std::setw(10) << mStall * 1e3
      << " ms   " << pct(stall, mStall) << "  (median)\n";
  return kExitOk;
}

}  // namespace swapscope::cli
