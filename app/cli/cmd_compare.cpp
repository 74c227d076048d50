// SPDX-License-Identifier: MIT
/// @brief `swapscope compare A.swapdb B.swapdb`: two runs side by side: identity, fitted curves
/// at common work, PCIe fits, per-step time differences (largest first) and predicted against
/// measured where a run recorded its plan. Opens both files read-only.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "common/bytes.h"
#include "common/format.h"
#include "options/args.h"
#include "options/file_options.h"
#include "options/table.h"
#include "perfmodel/compare.h"
#include "store/run_db.h"

namespace swapscope::cli {
namespace {

using json = nlohmann::ordered_json;
using Align = TextTable::Align;

std::string gbps(double bytesPerS) {
  return bytesPerS > 0 ? formatFixed(bytesPerS / 1e9, 2) + " GB/s" : "-";
}

/// `value` where `points` measured it, else null.
json measured(int points, double value) {
  return points > 0 ? json(value) : json(nullptr);
}

json sideJson(const perf::RunSide& s) {
  json j{{"path", s.path},
         {"kind", s.kind},
         {"status", s.status},
         {"device", s.device},
         {"backend", s.backend},
         {"host_cpu", s.host_cpu},
         {"network", s.network},
         {"structure_hash", s.structure_hash},
         {"policy", s.policy},
         {"budget", s.budget},
         {"ks", s.ks},
         {"batches", json::array()},
         // Without iterations there are no fits: null, never a rate of 0 or a factor of 1; and
         // a figure nothing measured (no copy to the host, none beside one the other way) is
         // null too.
         {"pcie", s.fitted ? json{{"h2d_bytes_per_s", s.h2d_bytes_per_s},
                                  {"h2d_latency_s", s.h2d_latency_s},
                                  {"h2d_points", s.h2d_points},
                                  {"d2h_bytes_per_s", measured(s.d2h_points, s.d2h_bytes_per_s)},
                                  {"d2h_latency_s", measured(s.d2h_points, s.d2h_latency_s)},
                                  {"d2h_points", s.d2h_points},
                                  {"duplex_factor", measured(s.duplex_points, s.duplex_factor)},
                                  {"duplex_points", s.duplex_points}}
                           : json(nullptr)}};
  for (const auto& [k, passes] : s.batches)
    j["batches"].push_back({{"k", k}, {"passes", passes}});
  if (s.check) {
    const auto& c = *s.check;
    j["predicted_vs_measured"] = {
        {"k", c.k},
        {"t_iter_s", {{"predicted", c.t_iter_predicted}, {"measured", c.t_iter_measured}}},
        {"peak_bytes", {{"predicted", c.peak_predicted}, {"measured", c.peak_measured}}},
        {"stall_s", {{"predicted", c.stall_predicted}, {"measured", c.stall_measured}}}};
  } else {
    j["predicted_vs_measured"] = nullptr;
  }
  return j;
}

void printCompareJson(const perf::RunComparison& c, std::ostream& out) {
  json curves = json::array();
  for (const auto& w : c.curves) {
    curves.push_back({{"target", w.target},
                      {"direction", w.direction},
                      {"work", w.work},
                      {"bytes_axis", w.bytes_axis},
                      {"seconds_a", w.seconds_a},
                      {"seconds_b", w.seconds_b},
                      {"form_a", w.form_a},
                      {"form_b", w.form_b},
                      {"extrapolated", w.extrapolated}});
  }
  json steps = json::array();
  for (const auto& d : c.steps) {
    steps.push_back({{"step", d.step},
                     {"layer", d.layer},
                     {"direction", d.direction},
                     {"seconds_a", d.seconds_a},
                     {"seconds_b", d.seconds_b}});
  }
  out << json{{"a", sideJson(c.a)},
              {"b", sideJson(c.b)},
              {"same_network", c.same_network},
              {"nothing_to_compare", perf::nothingToCompare(c)},
              {"curves", curves},
              {"steps",
               {{"k", c.step_k},
                {"not_compared", perf::stepsNotCompared(c)},
                {"total", c.steps_total},
                {"largest", steps}}}}
             .dump(2, ' ', false, kReplaceInvalidUtf8)
      << '\n';
}

/// The two runs' identities, side by side.
void printIdentities(const perf::RunComparison& c, std::ostream& out) {
  TextTable id;
  id.column("");
  id.column("A");
  id.column("B");
  id.row({"file", c.a.path, c.b.path});
  id.row({"kind / status", c.a.kind + " / " + c.a.status, c.b.kind + " / " + c.b.status});
  id.row({"device", c.a.device, c.b.device});
  id.row({"network", c.a.network + " (" + c.a.structure_hash + ")",
          c.b.network + " (" + c.b.structure_hash + ")"});
  id.row({"budget / policy", formatBytes(c.a.budget) + " / " + c.a.policy,
          formatBytes(c.b.budget) + " / " + c.b.policy});
  // (k, passes): a minibatch in sub-batches ran its steps at k/S samples.
  id.row({"minibatches", perf::describeBatches(c.a), perf::describeBatches(c.b)});
  id.row({"PCIe h2d", gbps(c.a.h2d_bytes_per_s), gbps(c.b.h2d_bytes_per_s)});
  id.row({"PCIe d2h", gbps(c.a.d2h_bytes_per_s), gbps(c.b.d2h_bytes_per_s)});
  const auto duplex = [](const perf::RunSide& s) {
    return s.fitted && s.duplex_points > 0 ? formatFixed(s.duplex_factor, 2) + "x slower"
                                           : std::string("-");
  };
  id.row({"both directions", duplex(c.a), duplex(c.b)});
  id.print(out);
}

/// Each layer type's fitted curves at common work.
void printCurves(const perf::RunComparison& c, std::ostream& out) {
  out << "\nfitted curves at common work (ms; B/A)\n";
  if (c.curves.empty()) {
    out << "  none: a run without recorded iterations has no fits, or no layer type is shared\n";
  } else {
    TextTable t;
    t.column("layer type");
    t.column("dir");
    t.column("work", Align::Right);
    t.column("A ms", Align::Right);
    t.column("B ms", Align::Right);
    t.column("B/A", Align::Right);
    t.column("forms");
    for (const auto& w : c.curves) {
      t.row({w.target, w.direction,
             (w.bytes_axis ? formatBytes(static_cast<std::int64_t>(w.work))
                           : formatSi(w.work) + "FLOP") +
                 (w.extrapolated ? " *" : ""),
             formatMilliseconds(w.seconds_a), formatMilliseconds(w.seconds_b),
             perf::timeRatioText(w.seconds_a, w.seconds_b), w.form_a + " / " + w.form_b});
    }
    t.print(out);
    // The footnote where a row has the mark.
    if (std::any_of(c.curves.begin(), c.curves.end(),
                    [](const perf::CurveAtCommonWork& w) { return w.extrapolated; }))
      out << "  (* outside one run's profiled range: extrapolated)\n";
  }
}

/// The per-step median times, largest difference first.
void printSteps(const perf::RunComparison& c, std::ostream& out) {
  out << "\nper-step median times";
  if (const std::string why = perf::stepsNotCompared(c); !why.empty()) {
    out << ": not compared, " << why << "\n";
  } else {
    out << " at " << c.step_k << " samples per pass, largest difference first (" << c.steps.size()
        << " of " << c.steps_total << " steps)\n";
    TextTable t;
    t.column("step", Align::Right);
    t.column("dir");
    t.column("layer");
    t.column("A ms", Align::Right);
    t.column("B ms", Align::Right);
    t.column("B-A ms", Align::Right);
    t.column("B/A", Align::Right);
    for (const auto& d : c.steps) {
      t.row({std::to_string(d.step), d.direction, d.layer, formatMilliseconds(d.seconds_a),
             formatMilliseconds(d.seconds_b), formatMilliseconds(d.seconds_b - d.seconds_a),
             perf::timeRatioText(d.seconds_a, d.seconds_b)});
    }
    t.print(out);
  }
}

/// Each run of a plan's predictions against its measurement.
void printPlanChecks(const perf::RunComparison& c, std::ostream& out) {
  out << "\npredicted against measured (runs of a plan)\n";
  if (!c.a.check && !c.b.check) {
    out << "  neither run recorded a plan (profiles have none; `swapscope run --db` records one)\n";
  } else {
    TextTable t;
    t.column("run");
    t.column("k", Align::Right);
    t.column("t_iter pred", Align::Right);
    t.column("measured", Align::Right);
    t.column("error", Align::Right);
    t.column("peak error", Align::Right);
    t.column("stall pred", Align::Right);
    t.column("measured", Align::Right);
    for (const auto* s : {&c.a, &c.b}) {
      if (!s->check) continue;
      const auto& k = *s->check;
      t.row({s == &c.a ? "A" : "B", std::to_string(k.k),
             formatMilliseconds(k.t_iter_predicted) + " ms",
             formatMilliseconds(k.t_iter_measured) + " ms",
             formatRelativeError(k.t_iter_predicted, k.t_iter_measured),
             formatRelativeError(static_cast<double>(k.peak_predicted),
                                 static_cast<double>(k.peak_measured)),
             formatMilliseconds(k.stall_predicted) + " ms",
             formatMilliseconds(k.stall_measured) + " ms"});
    }
    t.print(out);
  }
}

}  // namespace

int cmdCompare(const std::vector<std::string>& argv, std::ostream& out, std::ostream& /*err*/) {
  ArgParser args("swapscope compare A.swapdb B.swapdb [--top N] [--json]",
                 "Puts two run databases side by side (read-only): device, network and budget;\n"
                 "each layer type's fitted curve evaluated at the same work; the PCIe fits;\n"
                 "per-step median times at the largest minibatch both recorded, largest\n"
                 "difference first (same network only); and, for runs made by `swapscope run`,\n"
                 "the plan's predictions against the measurement. A ratio B/A is '-' where either\n"
                 "time shows as 0.000 ms: below the printed resolution, a ratio is noise.");
  args.positionals({"A.swapdb", "B.swapdb"},
                   "the two run databases (SQLite files, so not standard input: - is refused, "
                   "./- names a file called '-')");
  args.option("--top", "N", "per-step differences to list (default 15)");
  args.flag("--json", "print a JSON document instead of text");
  if (!args.parse(argv)) {
    out << args.help();
    return kExitOk;
  }
  const std::string pathA = args.positionalValues()[0], pathB = args.positionalValues()[1];
  refuseStandardInput(pathA, "A.swapdb", "a run database", kRunDatabaseIsReadInPlace);
  refuseStandardInput(pathB, "B.swapdb", "a run database", kRunDatabaseIsReadInPlace);
  const store::RunData a = store::RunReader(pathA).load();
  const store::RunData b = store::RunReader(pathB).load();
  store::requireNetwork(pathA, a.network, "compare");
  store::requireNetwork(pathB, b.network, "compare");
  const auto top = static_cast<std::size_t>(args.positiveInt("--top").value_or(15));
  const perf::RunComparison c = perf::compareRuns(a, b, top);

  if (args.has("--json")) {
    printCompareJson(c, out);
    return kExitOk;
  }
  printIdentities(c, out);
  if (const std::string none = perf::nothingToCompare(c); !none.empty()) {
    out << "\n" << none << "\n";
    return kExitOk;
  }
  printCurves(c, out);
  printSteps(c, out);
  printPlanChecks(c, out);
  return kExitOk;
}

}  // namespace swapscope::cli
