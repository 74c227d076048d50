// SPDX-License-Identifier: MIT
#include "views/summary_data.h"

#include <sstream>

#include "common/bytes.h"
#include "common/format.h"
#include "perfmodel/planner.h"

namespace swapscope {
namespace {

std::string ms(double seconds) {
  return formatMilliseconds(seconds) + " ms";
}

std::string duration(double seconds) {
  if (seconds < 120) return formatFixed(seconds, 1) + " s";
  if (seconds < 7200) return formatFixed(seconds / 60, 1) + " min";
  return formatFixed(seconds / 3600, 2) + " h";
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
    d.warnings.push_back("untrainable: " + r.reason);
  } else {
    const perf::Evaluation& e = r.best;
    d.k = e.k;
    d.t_iter_s = e.sim.t_iter;
    d.throughput = e.sim.throughput;
    d.stall_s = e.sim.stall;
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
      d.rows.push_back({"whole training", duration(r.t_whole) + " (" + epochs.str() +
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
  d.warnings.push_back("profiled on " + c.profile_device + " (" + c.backend + "), from " +
                       c.source_db);
  return d;
}

}  // namespace swapscope
