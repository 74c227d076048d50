// SPDX-License-Identifier: MIT
#include "views/summary_data.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "common/bytes.h"
#include "common/format.h"
#include "perfmodel/planner.h"
#include "store/run_db.h"

namespace swapscope {
namespace {

std::string ms(double seconds) {
  return formatMilliseconds(seconds) + " ms";
}

}  // namespace

SummaryData makeSummaryData(const perf::PlanResult& r, const perf::PlanRequest& request,
                            const SummaryContext& c) {
  SummaryData d;
  d.trainable = r.trainable;
  d.budget = request.budget;
  d.rows.push_back({"network", c.network});
  d.rows.push_back({"policy", c.policy + ", " + c.mode});
  d.rows.push_back({"budget", formatBytes(request.budget)});
  d.rows.push_back({"untrainable below", formatBytes(r.min_budget) + " (swap-all at k = 1)"});
  if (!r.trainable) {
    // The planner's reason for a budget below k = 1 says "untrainable" itself.
    d.warnings.push_back(r.reason.rfind("untrainable", 0) == 0 ? r.reason
                                                               : "untrainable: " + r.reason);
  } else {
    const perf::Evaluation& e = r.best;
    d.k = e.k;
    d.t_iter_s = e.sim.t_iter;
    d.throughput = e.sim.throughput;
    d.stall_s = e.sim.idle();  // as `plan`, the plan file and a run measure it
    d.peak_bytes = e.peak;
    d.bytes_moved = e.bytesMoved();
    d.lr = r.lr;
    d.t_whole_s = r.t_whole;
    for (bool s : e.swapped)
      d.swapped += s ? 1 : 0;
    const double share =
        d.budget > 0 ? 100.0 * static_cast<double>(d.peak_bytes) / static_cast<double>(d.budget)
                     : 0;
    d.rows.push_back({"k", std::to_string(d.k) + " (k_max " + std::to_string(r.k_max) + ")"});
    d.rows.push_back({"t_iter", ms(d.t_iter_s)});
    d.rows.push_back({"throughput", formatFixed(d.throughput, 1) + " samples/s"});
    d.rows.push_back({"total stall", ms(d.stall_s)});
    d.rows.push_back({"peak", formatBytes(d.peak_bytes) + " of " + formatBytes(d.budget) + " (" +
                                  formatFixed(share, 1) + " %)"});
    d.rows.push_back({"swapped per iteration", formatBytes(d.bytes_moved) + " (" +
                                                   std::to_string(d.swapped) + " FMs; " +
                                                   formatBytes(e.offload_bytes) + " out, " +
                                                   formatBytes(e.prefetch_bytes) + " in)"});
    std::ostringstream lr;
    lr << r.lr;
    d.rows.push_back({"learning rate (eq. 9)", lr.str()});
    if (request.gpus > 1) d.rows.push_back({"all-reduce Δ", ms(r.delta)});
    if (r.t_whole > 0) {
      std::ostringstream epochs;
      epochs << request.epochs;
      d.rows.push_back({"whole training", formatDuration(r.t_whole) + " (" + epochs.str() +
                                              " epochs of " + formatGrouped(request.dataset_size) +
                                              " samples)"});
    }
    if (e.extrapolated)
      d.warnings.push_back(
          "extrapolated: some steps are predicted outside the profiled minibatches");
    if (e.transferred || c.network_transferred)
      d.warnings.push_back("transferred: " + c.network +
                           " is not the profiled network; its steps use per-type curves");
    if (e.missing > 0)
      d.warnings.push_back(std::to_string(e.missing) +
                           " steps have no fitted curve and are counted as 0 s");
  }
  if (std::string w = store::budgetAboveDeviceWarning(request.budget, c.device_memory); !w.empty())
    d.warnings.push_back(std::move(w));
  // As `swapscope plan` words it: "RUN.swapdb: it is a 'run' database, not a profile: ...".
  if (!c.not_profile_warning.empty())
    d.warnings.push_back(c.source_db + ": " + c.not_profile_warning);
  if (!c.unfinished_warning.empty())
    d.warnings.push_back("unfinished profile: " + c.unfinished_warning);
  if (!c.profile_warning.empty()) d.warnings.push_back("busy profile: " + c.profile_warning);
  d.warnings.push_back((c.not_profile_warning.empty() ? "profiled on " : "recorded on ") +
                       c.profile_device + " (" + c.backend + "), from " + c.source_db);
  return d;
}

namespace {

double errorPct(double predicted, double measured) {
  if (measured == 0) return std::numeric_limits<double>::quiet_NaN();
  return 100.0 * (predicted - measured) / measured;
}

}  // namespace

void addMeasuredSummary(SummaryData& d, const perf::RunSide::Check& c, const store::RunData& run) {
  SummaryMeasurement m;
  m.run = run.path;
  m.k = c.k;
  for (const store::IterationRow& it : run.iterations)
    m.iterations += it.k == c.k;
  m.t_iter_predicted = c.t_iter_predicted;
  m.t_iter_measured = c.t_iter_measured;
  m.stall_predicted = c.stall_predicted;
  m.stall_measured = c.stall_measured;
  m.peak_predicted = c.peak_predicted;
  m.peak_measured = c.peak_measured;
  m.t_iter_error_pct = errorPct(c.t_iter_predicted, c.t_iter_measured);
  m.stall_error_pct = errorPct(c.stall_predicted, c.stall_measured);
  m.peak_error_pct =
      errorPct(static_cast<double>(c.peak_predicted), static_cast<double>(c.peak_measured));
  d.rows.push_back({"measured in", run.path + " (" + std::to_string(m.iterations) +
                                       " iterations at k = " + std::to_string(c.k) + ", " +
                                       std::string(store::runStatusName(run.meta.status)) + ")"});
  d.rows.push_back(
      {"t_iter measured",
       ms(c.t_iter_measured) + " (median) against the " + ms(c.t_iter_predicted) +
           " its plan predicted: " + formatRelativeError(c.t_iter_predicted, c.t_iter_measured)});
  d.rows.push_back(
      {"total stall measured",
       ms(c.stall_measured) + " (median) against the " + ms(c.stall_predicted) +
           " its plan predicted: " + formatRelativeError(c.stall_predicted, c.stall_measured)});
  d.rows.push_back(
      {"peak measured", formatBytes(c.peak_measured) + " against the " +
                            formatBytes(c.peak_predicted) + " its plan predicted: " +
                            formatRelativeError(static_cast<double>(c.peak_predicted),
                                                static_cast<double>(c.peak_measured))});
  if (!c.device_mismatch.empty()) d.warnings.push_back("device: " + c.device_mismatch);
  d.measured = m;
}

}  // namespace swapscope
