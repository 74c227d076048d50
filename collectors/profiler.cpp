// SPDX-License-Identifier: MIT
/// @brief The profiling stage (AccUDNN §3.2): the profiling minibatches, the check that they fit,
/// and the run that records them and fits the model.
#include "collectors/profiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <thread>

#include "analysis/gmap.h"
#include "analysis/memory.h"
#include "analysis/network_analysis.h"
#include "analysis/swap_policy.h"
#include "collectors/commit_iteration.h"
#include "collectors/timeline_rows.h"
#include "common/batch_limit.h"
#include "common/bytes.h"
#include "common/error.h"
#include "common/format.h"
#include "common/stats.h"
#include "graph/network_json.h"
#include "perfmodel/model.h"
#include "runtime/dataset.h"
#include "runtime/host_memory.h"
#include "runtime/trainer.h"
#include "store/sqlite.h"

namespace swapscope::collect {

const char* runStageName(RunStage stage) {
  switch (stage) {
    case RunStage::Warmup:
      return "warm-up";
    case RunStage::Recorded:
      return "recorded";
    case RunStage::Collector:
      return "collector";
  }
  return "?";
}

std::vector<std::int64_t> profileBatches(std::int64_t top) {
  std::vector<std::int64_t> ks;
  if (top < 1) return ks;
  constexpr double kFractions[] = {1.0 / 8, 1.0 / 4, 1.0 / 2, 2.0 / 3, 1.0};
  for (const double f : kFractions) {
    const auto k = std::max<std::int64_t>(1, std::llround(f * static_cast<double>(top)));
    if (ks.empty() || k > ks.back()) ks.push_back(k);
  }
  return ks;
}

std::int64_t swapAllKMax(const Network& net, std::int64_t budget) {
  const auto costs = computeLayerCosts(net);
  const MemoryCurve curve = planMemory(net, costs, makeSwapSet(Policy::SwapAll, net, costs)).curve;
  // At most the limit of every verb (common/batch_limit.h).
  const std::int64_t kMax = std::min(curve.kMax(budget, kMaxBatch), kMaxBatch);
  if (kMax < 1) {
    const std::int64_t need = curve.peak(1);
    throwBadInput("a budget of " + formatBytes(budget) + " (" + std::to_string(budget) +
                  " bytes) cannot hold " + net.name() + " at k = 1 even under swap-all: it needs " +
                  formatBytes(need) + " (" + std::to_string(need) + " bytes)");
  }
  return kMax;
}

std::int64_t swapAllKMax(const Network& net, std::int64_t budget, const rt::Device& device) {
  const rt::PoolShape shape = rt::poolShape(device);
  if (shape.padding == PoolPadding{}) return swapAllKMax(net, budget);
  const auto costs = computeLayerCosts(net);
  const Gmap gmap = planMemory(net, costs, makeSwapSet(Policy::SwapAll, net, costs)).gmap;
  const std::int64_t kMax = rt::poolKMax(gmap, budget, shape, kMaxBatch);
  if (kMax < 1) {
    const std::int64_t need = computeMemoryCurve(padGmap(gmap, shape.padding)).peak(1);
    throwBadInput("a budget of " + formatBytes(budget) + " (" + std::to_string(budget) +
                  " bytes) cannot hold " + net.name() +
                  " at k = 1 even under swap-all as this device's pool places it: its peak, " +
                  "padded, is " + formatBytes(need) + " (" + std::to_string(need) + " bytes)" +
                  (need <= budget ? " and its buffers do not pack" : ""));
  }
  return kMax;
}

namespace {
/// The profiling minibatches of `cfg` below the swap-all k_max.
std::vector<std::int64_t> batchesOf(const ProfileConfig& cfg, std::int64_t kMax) {
  return profileBatches(cfg.max_batch > 0 ? std::min(kMax, cfg.max_batch) : kMax);
}

/// The executor's options for the profile at minibatch k: its synthetic data set of k samples.
rt::ExecutorOptions executorOptions(const Network& net, const ProfileConfig& cfg, std::int64_t k,
                                    std::int64_t available) {
  rt::ExecutorOptions options;
  options.seed = cfg.seed;
  options.host_available = available;
  options.host_extra.push_back({"the synthetic data set (" + std::to_string(k) + " samples)",
                                rt::datasetHostBytes(net.sampleShape(), k)});
  return options;
}

/// The executor of the profile at minibatch k, or null with the refusal in `refusal` where it
/// refuses the plan (PlanDoesNotFit). A refused executor has allocated nothing; an accepted one
/// holds the device's pool until it is destroyed.
std::unique_ptr<rt::SwapExecutor> openExecutor(rt::Device& device, const Network& net,
                                               const ProfileConfig& cfg, const SwapSet& swapAll,
                                               std::int64_t k,
                                               std::optional<rt::PlanDoesNotFit>* refusal) {
  try {
    return std::make_unique<rt::SwapExecutor>(device, net, k, swapAll, cfg.budget,
                                              executorOptions(net, cfg, k, -1));
  } catch (const rt::PlanDoesNotFit& e) {
    if (refusal) refusal->emplace(e);
    return nullptr;
  }
}
}  // namespace

nlohmann::ordered_json refusedBatchesJson(const std::vector<RefusedBatch>& refused) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const RefusedBatch& r : refused)
    j.push_back({{"k", r.k}, {"ran", r.ran}, {"reason", r.reason}});
  return j;
}

std::string describeRefusal(const RefusedBatch& r, std::int64_t budget) {
  std::string text = "k = " + std::to_string(r.k) + " does not fit the pool of " +
                     formatBytes(budget) + " as the executor counts it (" + r.reason + "); ";
  if (r.ran > 0) {
    return text + "profiled k = " + std::to_string(r.ran) +
           " instead, the largest k below it that the executor accepts";
  }
  return text + "no k between the last one profiled and it fits, so the profile ends there";
}

void checkProfileFits(const rt::Device& device, const Network& net, const ProfileConfig& cfg,
                      std::int64_t available) {
  const std::vector<std::int64_t> ks = batchesOf(cfg, swapAllKMax(net, cfg.budget, device));
  const auto costs = computeLayerCosts(net);
  const std::int64_t k = ks.back();
  rt::checkRunFits(device, net, costs, makeSwapSet(Policy::SwapAll, net, costs), k, cfg.budget,
                   executorOptions(net, cfg, k, available));
}

namespace {

/// Fits the performance model to what `db` holds (a reader of a file in WAL mode sees every
/// committed row) and stores its fits there, with the profile's stability (meta 'stability').
/// A model that cannot be fitted (too few points, say) leaves the file without fits and says why
/// in `result`; the measurements and their spread stand either way.
void storeFits(store::RunWriter& db, ProfileResult& result) {
  std::vector<store::FitRow> rows;
  std::optional<store::RunData> run;
  std::unique_ptr<perf::PerfModel> model;
  try {
    run = store::RunReader(db.path()).load();
    model = std::make_unique<perf::PerfModel>(perf::PerfModel::fit(*run));
    rows = model->fitRows();
  } catch (const Error& e) {
    result.fit_error = e.what();
    model.reset();
  }
  if (run) {
    result.stability = perf::measureStability(*run, model.get());
    db.setMeta("stability", perf::stabilityToMeta(*result.stability));
  }
  if (!model) return;
  db.addFits(rows);
  result.fits = static_cast<int>(rows.size());
}

}  // namespace

ProfileResult runProfile(rt::Device& device, const Network& net, const ProfileConfig& cfg,
                         store::RunWriter& db, const RunProgressFn& progress,
                         const std::atomic<bool>* cancel) {
  if (cfg.iterations < 1) throwBadInput("profiling needs at least one recorded iteration per k");
  if (cfg.warmup < 0) throwBadInput("the number of warm-up iterations cannot be negative");
  const auto costs = computeLayerCosts(net);
  const SwapSet swapAll = makeSwapSet(Policy::SwapAll, net, costs);
  const MemoryPlan plan = planMemory(net, costs, swapAll);

  ProfileResult result;
  result.k_max = swapAllKMax(net, cfg.budget, device);
  result.batches = batchesOf(cfg, result.k_max);
  checkProfileFits(device, net, cfg);

  db.setMeta("k_max", std::to_string(result.k_max));
  db.setMeta("max_batch", std::to_string(cfg.max_batch));
  db.setMeta("warmup_iterations", std::to_string(cfg.warmup));
  db.setMeta("recorded_iterations_per_k", std::to_string(cfg.iterations));
  db.setMeta("seed", std::to_string(cfg.seed));
  db.writeNetwork(net, costs, plan.gmap);

  const std::int64_t runStart = device.nowNs();
  const int perK = cfg.warmup + cfg.iterations;
  auto stopped = [&] { return cancel && cancel->load(); };
  try {
    std::int64_t lastRan = 0;  // the largest k profiled so far
    nlohmann::ordered_json kernelsByK = nlohmann::ordered_json::array();
    for (std::size_t bi = 0; bi < result.batches.size() && !stopped(); ++bi) {
      std::int64_t k = result.batches[bi];
      std::optional<rt::PlanDoesNotFit> refusal;
      std::unique_ptr<rt::SwapExecutor> executor =
          openExecutor(device, net, cfg, swapAll, k, &refusal);
      if (!executor) {
        // The largest k in (lastRan, k) the executor accepts, by bisection: `lo` is accepted (or
        // the last k that ran), `hi` refused. Each executor tried is destroyed before the next,
        // so that the device holds one pool at a time.
        std::int64_t lo = lastRan, hi = k;
        std::unique_ptr<rt::SwapExecutor> probe;  // the last one tried, where it was accepted
        while (hi - lo > 1) {
          const std::int64_t mid = lo + (hi - lo) / 2;
          probe.reset();
          probe = openExecutor(device, net, cfg, swapAll, mid, nullptr);
          if (probe) {
            lo = mid;
          } else {
            hi = mid;
          }
        }
        if (lo == 0) throw *refusal;  // not even k = 1 fits
        result.refused.push_back({k, lo > lastRan ? lo : 0, refusal->what()});
        db.setMeta("refused_batches", refusedBatchesJson(result.refused).dump());
        // The minibatches after k are larger: none of them is tried.
        result.batches.resize(bi);
        if (lo == lastRan) break;
        result.batches.push_back(lo);
        k = lo;
        // The last one tried, where it was lo; else lo again, which was accepted before.
        executor = probe ? std::move(probe)
                         : std::make_unique<rt::SwapExecutor>(device, net, k, swapAll, cfg.budget,
                                                              executorOptions(net, cfg, k, -1));
      }
      lastRan = k;
      rt::SwapExecutor& ex = *executor;
      // The kernels' choices at this k: each layer's algorithms and workspaces, where any chose
      // or holds one (the CUDA backend's convolutions), for whoever plans from the profile.
      if (nlohmann::ordered_json layers = kernelChoicesJson(net, ex); !layers.empty()) {
        kernelsByK.push_back({{"k", k}, {"layers", std::move(layers)}});
        db.setMeta("kernel_choices_by_k", kernelsByK.dump());
      }
      const rt::Dataset data = rt::syntheticDataset(net.sampleShape(), net.classes(), k,
                                                    cfg.seed + static_cast<std::uint64_t>(k));
      int recorded = 0;
      std::vector<std::vector<std::int64_t>> gaps;  // the compute stream's hand-offs
      double secondsAtK = 0;
      for (int it = 0; it < perK && !stopped(); ++it) {
        std::shared_ptr<const store::IterationRows> rows;
        const rt::IterationRecord rec =
            ex.trainIteration(data.images.data(), data.labels.data(),
                              static_cast<std::uint64_t>(it), cfg.sgd, cancel);
        if (rec.cancelled) break;  // stopped within the iteration: nothing of it is recorded
        if (it >= cfg.warmup) {
          RowContext ctx{.net = &net,
                         .gmap = &ex.gmap(),
                         .costs = &costs,
                         .k = k,
                         .iteration = recorded,
                         .run_start_ns = runStart,
                         .page_locked = device.hostMemoryPageLocked(),
                         .memory = recorded == 0};
          rows = commitIteration(db, rec, ctx, static_cast<bool>(progress));
          gaps.push_back(dispatchGaps(rec));
          ++recorded;
          ++result.recorded_iterations;
        }
        const double seconds = static_cast<double>(rec.duration_ns) * 1e-9;
        secondsAtK += seconds;
        if (progress) {
          // Later minibatches: their iterations at this k's mean, scaled by their k.
          const double mean = secondsAtK / (it + 1);
          double eta = mean * (perK - it - 1);
          for (std::size_t later = bi + 1; later < result.batches.size(); ++later) {
            eta +=
                mean * perK * static_cast<double>(result.batches[later]) / static_cast<double>(k);
          }
          progress({it < cfg.warmup ? RunStage::Warmup : RunStage::Recorded, static_cast<int>(bi),
                    static_cast<int>(result.batches.size()), k, it + 1, perK, seconds, eta,
                    std::move(rows)});
        }
      }
      if (recorded > 0) {
        db.addBatch({k, std::string(policyName(Policy::SwapAll)), cfg.warmup, ex.predictedPeak(),
                     ex.poolStats().high_water, ex.reuseDelay(), ex.prefetchesMoved(),
                     medianDispatch(gaps)});
      }
    }
  } catch (const std::exception& e) {
    db.finish(store::RunStatus::Failed, e.what());
    throw;
  }
  result.cancelled = stopped();
  result.status = result.cancelled ? store::RunStatus::Incomplete : store::RunStatus::Complete;
  if (!result.cancelled) storeFits(db, result);
  db.finish(result.status, result.cancelled
                               ? "interrupted after " + std::to_string(result.recorded_iterations) +
                                     " recorded iterations"
                               : "");
  return result;
}

}  // namespace swapscope::collect
