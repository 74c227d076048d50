// SPDX-License-Identifier: MIT
#include "options/run_output.h"

#include "common/bytes.h"
#include "common/format.h"
#include "options/table.h"

namespace swapscope::cli {

nlohmann::ordered_json batchesJson(const std::vector<store::BatchSummary>& batches) {
  auto j = nlohmann::ordered_json::array();
  for (const auto& b : batches) {
    j.push_back({{"k", b.k},
                 {"iterations", b.iterations},
                 {"median_iter_s", static_cast<double>(b.median_iter_ns) * 1e-9},
                 {"images_per_s", b.images_per_s},
                 {"stall_share", b.stall_share},
                 {"offload_bytes", b.offload_bytes},
                 {"prefetch_bytes", b.prefetch_bytes},
                 {"predicted_peak", b.predicted_peak},
                 {"measured_peak", b.measured_peak}});
  }
  return j;
}

void printBatches(std::ostream& out, const std::vector<store::BatchSummary>& batches) {
  if (batches.empty()) {
    out << "no recorded iterations\n";
    return;
  }
  TextTable t;
  t.column("k", TextTable::Align::Right);
  t.column("iterations", TextTable::Align::Right);
  t.column("median t_iter", TextTable::Align::Right);
  t.column("images/s", TextTable::Align::Right);
  t.column("stall", TextTable::Align::Right);
  t.column("offloaded/iter", TextTable::Align::Right);
  t.column("prefetched/iter", TextTable::Align::Right);
  t.column("peak measured", TextTable::Align::Right);
  t.column("predicted", TextTable::Align::Right);
  for (const auto& b : batches) {
    // A minibatch interrupted before its end has no peak row ("-").
    t.row({std::to_string(b.k), std::to_string(b.iterations),
           formatFixed(static_cast<double>(b.median_iter_ns) * 1e-6, 1) + " ms",
           formatFixed(b.images_per_s, 1), formatFixed(100.0 * b.stall_share, 1) + " %",
           formatBytes(b.offload_bytes), formatBytes(b.prefetch_bytes),
           b.measured_peak ? formatBytes(b.measured_peak) : "-",
           b.predicted_peak ? formatBytes(b.predicted_peak) : "-"});
  }
  t.print(out);
}

std::string quotedCommandLine(const std::string& verb, const std::vector<std::string>& argv) {
  std::string line = "swapscope " + verb;
  for (const std::string& a : argv) {
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyz"
                                         "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789-_=./:,+@%") == std::string::npos;
    if (plain) {
      line += " " + a;
      continue;
    }
    std::string q = "'";
    for (const char c : a)
      q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += " " + q + "'";
  }
  return line;
}

nlohmann::ordered_json stabilityJson(const std::optional<perf::ProfileStability>& s) {
  if (!s) return nullptr;
  nlohmann::ordered_json perK = nlohmann::ordered_json::array();
  for (const perf::KStability& k : s->per_k) {
    perK.push_back({{"k", k.k},
                    {"iterations", k.iterations},
                    {"median_s", static_cast<double>(k.median_ns) * 1e-9},
                    {"spread", k.spread}});
  }
  const std::string warning = perf::stabilityWarning(*s);
  return {{"spread", s->spread},
          {"largest", s->largest},
          {"worst_k", s->worst_k},
          {"threshold", perf::kUnsteadySpread},
          {"preempted_compute",
           s->preempted_compute >= 0 ? nlohmann::ordered_json(s->preempted_compute) : nullptr},
          {"preempted_waits",
           s->preempted_waits >= 0 ? nlohmann::ordered_json(s->preempted_waits) : nullptr},
          {"per_k", perK},
          {"warning",
           warning.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(warning)}};
}

void printStability(std::ostream& out, const std::optional<perf::ProfileStability>& s) {
  out << "stability     "
      << (s ? perf::describeStability(*s)
            : std::string("not measured (a profile cut short, or made by an earlier Swapscope)"))
      << '\n';
  if (s && s->unsteady()) out << "warning       " << perf::stabilityWarning(*s) << '\n';
}

}  // namespace swapscope::cli
