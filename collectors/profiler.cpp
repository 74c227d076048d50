// SPDX-License-Identifier: MIT
#include "collectors/profiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <thread>

#include "analysis/network_analysis.h"
#include "analysis/swap_policy.h"
#include "collectors/timeline_rows.h"
#include "common/bytes.h"
#include "common/error.h"
#include "runtime/dataset.h"
#include "runtime/host_memory.h"
#include "store/sqlite.h"

namespace swapscope::collect {

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
  const MemoryCurve curve =
      planMemory(net, costs, makeSwapSet(SwapPolicy::SwapAll, net, costs)).curve;
  const std::int64_t kMax = curve.kMax(budget, std::int64_t{1} << 30);
  if (kMax < 1) {
    const std::int64_t need = curve.peak(1);
    throwBadInput("a budget of " + formatBytes(budget) + " (" + std::to_string(budget) +
                  " bytes) cannot hold " + net.name() + " at k = 1 even under swap-all: it needs " +
                  formatBytes(need) + " (" + std::to_string(need) + " bytes)");
  }
  return kMax;
}

std::string utcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {

std::string hostCpu() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(colon + 2);
      break;
    }
  }
  if (model.empty()) model = "unknown CPU";
  return model + ", " + std::to_string(std::thread::hardware_concurrency()) + " logical cores";
}

}  // namespace

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
}  // namespace

void checkProfileFits(const rt::Device& device, const Network& net, const ProfileConfig& cfg,
                      std::int64_t available) {
  const std::vector<std::int64_t> ks = batchesOf(cfg, swapAllKMax(net, cfg.budget));
  const auto costs = computeLayerCosts(net);
  const std::int64_t k = ks.back();
  rt::checkRunFits(device, net, costs, makeSwapSet(SwapPolicy::SwapAll, net, costs), k, cfg.budget,
                   executorOptions(net, cfg, k, available));
}

store::RunMeta runMeta(const rt::Device& device, const std::string& kind, std::int64_t budget,
                       const std::string& policy) {
  store::RunMeta m;
  m.kind = kind;
  m.backend = device.backendName();
  m.device = device.deviceName();
  m.device_memory = device.totalMemory();
  for (const auto& [name, version] : device.libraryVersions())
    m.versions[name] = version;
  m.versions["SQLite"] = store::sqliteVersion();
  m.started_utc = utcNow();
  m.budget = budget;
  m.policy = policy;
  m.host_cpu = hostCpu();
  m.extra["pool_alignment"] = std::to_string(device.poolAlignment());
  if (device.backendName() == "cuda") {
    const rt::DeviceOptions& o = device.options();
    m.extra["conv_algo"] = std::string(rt::convAlgoPolicyName(o.conv_algo));
    m.extra["deterministic"] = o.deterministic ? "true" : "false";
    m.extra["math"] = std::string(rt::mathModeName(o.math));
    m.extra["workspace_limit"] = std::to_string(o.workspace_limit);
  }
  return m;
}

ProfileResult runProfile(rt::Device& device, const Network& net, const ProfileConfig& cfg,
                         store::RunWriter& db, const ProfileProgressFn& progress,
                         const std::atomic<bool>* cancel) {
  if (cfg.iterations < 1) throwBadInput("profiling needs at least one recorded iteration per k");
  if (cfg.warmup < 0) throwBadInput("the number of warm-up iterations cannot be negative");
  const auto costs = computeLayerCosts(net);
  const SwapSet swapAll = makeSwapSet(SwapPolicy::SwapAll, net, costs);
  const MemoryPlan plan = planMemory(net, costs, swapAll);

  ProfileResult result;
  result.k_max = swapAllKMax(net, cfg.budget);
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
    for (std::size_t bi = 0; bi < result.batches.size() && !stopped(); ++bi) {
      const std::int64_t k = result.batches[bi];
      rt::SwapExecutor ex(device, net, k, swapAll, cfg.budget, executorOptions(net, cfg, k, -1));
      const rt::Dataset data = rt::syntheticDataset(net.sampleShape(), net.classes(), k,
                                                    cfg.seed + static_cast<std::uint64_t>(k));
      int recorded = 0;
      std::vector<std::vector<std::int64_t>> gaps;  // the compute stream's hand-offs
      for (int it = 0; it < perK && !stopped(); ++it) {
        const rt::IterationRecord rec = ex.trainIteration(data.images.data(), data.labels.data(),
                                                          static_cast<std::uint64_t>(it), cfg.sgd);
        if (it >= cfg.warmup) {
          RowContext ctx{
              &net,         &ex.gmap(), &costs, k, recorded, runStart, device.hostMemoryPinned(),
              recorded == 0};
          db.addIteration(iterationRows(rec, ctx));
          gaps.push_back(dispatchGaps(rec));
          ++recorded;
          ++result.recorded_iterations;
        }
        if (progress) {
          progress({static_cast<int>(bi), static_cast<int>(result.batches.size()), k, it + 1, perK,
                    static_cast<double>(rec.duration_ns) * 1e-9});
        }
      }
      if (recorded > 0) {
        db.addBatch({k, std::string(swapPolicyName(SwapPolicy::SwapAll)), cfg.warmup,
                     ex.predictedPeak(), ex.poolStats().high_water, ex.reuseDelay(),
                     ex.hoistedPrefetches(), medianDispatch(gaps)});
      }
    }
  } catch (const std::exception& e) {
    db.finish(store::RunStatus::Failed, e.what());
    throw;
  }
  result.cancelled = stopped();
  result.status = result.cancelled ? store::RunStatus::Incomplete : store::RunStatus::Complete;
  db.finish(result.status, result.cancelled
                               ? "interrupted after " + std::to_string(result.recorded_iterations) +
                                     " recorded iterations"
                               : "");
  return result;
}

}  // namespace swapscope::collect
