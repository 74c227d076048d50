// SPDX-License-Identifier: MIT
/// @brief `swapscope info`: what a run database holds: meta, status, network, minibatches, row
/// counts, fits and plans. Opens the file read-only.
#include <charconv>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli/commands.h"
#include "common/bytes.h"
#include "common/format.h"
#include "options/args.h"
#include "options/file_options.h"
#include "options/run_output.h"
#include "options/table.h"
#include "perfmodel/stability.h"
#include "store/run_db.h"
#include "store/run_summary.h"

namespace swapscope::cli {
namespace {

using json = nlohmann::ordered_json;

}  // namespace

int cmdInfo(const std::vector<std::string>& argv, std::ostream& out, std::ostream& /*err*/) {
  ArgParser args("swapscope info --db FILE [--json]",
                 "Summarises a run database (read-only): the run's meta and status (complete,\n"
                 "incomplete or failed), the network, the minibatches it ran with their median\n"
                 "iteration time and peak, the row counts, and the fits and plans it holds.");
  args.option("--db", "FILE",
              "the run database (required; an SQLite file, so not standard input: - is "
              "refused, ./- names a file called '-')");
  args.flag("--json", "print a JSON document instead of text");
  if (!args.parse(argv)) {
    out << args.help();
    return kExitOk;
  }
  const std::string path = args.required("--db");
  refuseStandardInput(path, "--db", "a run database", kRunDatabaseIsReadInPlace);
  store::RunReader reader(path);
  const store::RunData run = reader.load();
  const store::RowCounts c = run.counts();  // of the same snapshot (a run may be writing it)
  const auto batches = store::summarizeBatches(run);
  const store::RunMeta& m = run.meta;
  const int steps = static_cast<int>(run.steps.size());
  const std::optional<perf::ProfileStability> stability = perf::readStability(run);

  if (args.has("--json")) {
    json j{{"db", path},
           {"schema_version", reader.schemaVersion()},
           {"status", store::runStatusName(m.status)},
           {"status_message", m.status_message},
           {"kind", m.kind},
           {"started_utc", m.started_utc},
           {"command_line", m.command_line},
           {"backend", m.backend},
           {"device", m.device},
           {"device_memory", m.device_memory},
           {"host_cpu", m.host_cpu},
           {"versions", m.versions},
           {"budget", m.budget},
           {"policy", m.policy},
           {"extra", m.extra},
           {"network",
            {{"name", run.network.name},
             {"structure_hash", run.network.structure_hash},
             {"layers", run.layers.size()},
             {"steps", steps}}},
           {"batches", batchesJson(batches)},
           {"stability", stabilityJson(stability)},
           {"rows",
            {{"layers", c.layers},
             {"steps", c.steps},
             {"tensors", c.tensors},
             {"batches", c.batches},
             {"iterations", c.iterations},
             {"samples", c.samples},
             {"transfers", c.transfers},
             {"memory", c.memory},
             {"fits", c.fits},
             {"plans", c.plans}}},
           {"fits", json::array()},
           {"plans", json::array()}};
    for (const auto& f : run.fits) {
      j["fits"].push_back({{"id", f.id},
                           {"scope", store::fitScopeName(f.scope)},
                           {"target", f.target},
                           {"direction", store::fitDirectionName(f.direction)},
                           {"form", store::fitRowFormName(f.form)},
                           {"points", f.points},
                           {"rmse", f.rmse},
                           {"max_rel_error", f.max_rel_error},
                           {"chosen", f.chosen}});
    }
    for (const auto& p : run.plans) {
      j["plans"].push_back({{"id", p.id},
                            {"created_utc", p.created_utc},
                            {"policy", p.policy},
                            {"mode", p.mode},
                            {"budget", p.budget},
                            {"k", p.k},
                            {"predicted_iter_s", static_cast<double>(p.predicted_iter_ns) * 1e-9}});
    }
    out << j.dump(2, ' ', false, kReplaceInvalidUtf8) << '\n';
    return kExitOk;
  }

  auto line = [&](const char* label, const std::string& value) {
    std::string l = label;
    l.resize(14, ' ');
    out << l << value << '\n';
  };
  line("run database", path + " (schema " + std::to_string(reader.schemaVersion()) + ")");
  line("status", std::string(store::runStatusName(m.status)) +
                     (m.status_message.empty() ? "" : ": " + m.status_message));
  line("kind", m.kind);
  line("started", m.started_utc);
  line("command", m.command_line);
  line("device", m.device + " (backend " + m.backend + ", " + formatBytes(m.device_memory) + ")");
  line("host CPU", m.host_cpu);
  std::string versions;
  for (const auto& [name, v] : m.versions)
    versions += (versions.empty() ? "" : ", ") + name + " " + v;
  line("versions", versions);
  line("budget",
       formatBytes(m.budget) + " (" + std::to_string(m.budget) + " bytes), policy " + m.policy);
  if (run.network.name.empty()) {
    line("network", "not recorded");
  } else {
    line("network", run.network.name + " (structure " + run.network.structure_hash + "), " +
                        std::to_string(run.layers.size()) + " layers, " + std::to_string(steps) +
                        " steps, " + std::to_string(run.tensors.size()) + " tensors");
  }
  if (auto it = m.extra.find("k_max"); it != m.extra.end()) {
    std::string kmax = it->second;
    // The profile stops at the smaller of k_max and the cap (0: none); a cap above k_max
    // stopped nothing.
    if (auto cap = m.extra.find("max_batch"); cap != m.extra.end()) {
      const auto number = [](const std::string& v) {  // 0 where it is not a number
        std::int64_t n = 0;
        std::from_chars(v.data(), v.data() + v.size(), n);
        return n;
      };
      const std::int64_t capK = number(cap->second);
      if (capK > 0 && capK < number(it->second)) {
        kmax += " (profiled up to the cap, k = " + cap->second + ")";
      }
    }
    line("k_max", kmax + " under swap-all");
  }
  if (m.kind == "profile") printStability(out, stability);
  out << '\n';
  printBatches(out, batches);
  // "1 plan", "2 plans": each count with its noun.
  const auto count = [](std::int64_t n, const std::string& noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
  };
  out << "\nrows: " << count(c.layers, "layer") << ", " << count(c.steps, "step") << ", "
      << count(c.tensors, "tensor") << ", " << count(c.iterations, "iteration") << ", "
      << count(c.samples, "step sample") << ", " << count(c.transfers, "transfer") << ", "
      << count(c.memory, "pool sample") << ", " << count(c.fits, "fit") << ", "
      << count(c.plans, "plan") << "\n";
  if (!run.fits.empty()) {
    out << "\nfits:\n";
    TextTable t;
    for (const char* h :
         {"scope", "target", "direction", "form", "points", "rmse", "max rel err", "chosen"})
      t.column(h);
    for (const auto& f : run.fits) {
      t.row({std::string(store::fitScopeName(f.scope)), f.target,
             std::string(store::fitDirectionName(f.direction)),
             std::string(store::fitRowFormName(f.form)), std::to_string(f.points),
             formatFixed(f.rmse, 6), formatFixed(100.0 * f.max_rel_error, 1) + " %",
             f.chosen ? "yes" : ""});
    }
    t.print(out);
  }
  if (!run.plans.empty()) {
    out << "\nplans:\n";
    TextTable t;
    for (const char* h : {"id", "created", "policy", "mode", "budget", "k", "predicted t_iter"})
      t.column(h);
    for (const auto& p : run.plans) {
      t.row({std::to_string(p.id), p.created_utc, p.policy, p.mode, formatBytes(p.budget),
             std::to_string(p.k),
             formatFixed(static_cast<double>(p.predicted_iter_ns) * 1e-6, 1) + " ms"});
    }
    t.print(out);
  }
  return kExitOk;
}

}  // namespace swapscope::cli
