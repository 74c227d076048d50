// SPDX-License-Identifier: MIT
/// @brief A plan's run (`swapscope run`): the plan checked against its schedule, run on the engine
/// and recorded, under the profile's status rules.
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
#include <utility>

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
#include "common/name_table.h"
#include "common/stats.h"
#include "graph/network_json.h"
#include "perfmodel/model.h"
#include "runtime/dataset.h"
#include "runtime/host_memory.h"
#include "runtime/trainer.h"
#include "store/sqlite.h"

namespace swapscope::collect {

namespace {

/// The collector modes' names (`run --collector`): the one table both directions read.
constexpr NamedValue<CollectorMode> kCollectorModes[] = {
    {CollectorMode::Off, "off"},
    {CollectorMode::Events, "events"},
    {CollectorMode::Cupti, "cupti"},
    {CollectorMode::CuptiAllApi, "cupti-all-api"}};

}  // namespace

std::string_view collectorModeName(CollectorMode m) {
  return nameIn(kCollectorModes, m);
}

std::optional<CollectorMode> collectorModeFromName(std::string_view name) {
  return valueIn(kCollectorModes, name);
}

namespace {

/// The predictions a run compares against must be the schedule's: the peak is the GMAP's (one
/// pass, before the device's workspaces and padding), and the predicted starts are one per step.
/// A plan edited by hand would otherwise be compared with figures no schedule made.
void checkPlanPredictions(const Network& net, const std::vector<LayerCost>& costs,
                          const SwapSet& swapped, const RecomputeSet& recompute,
                          const store::PlanFile& plan, const std::string& planName) {
  const Gmap g = buildGmap(net, costs, swapped, recompute);
  const std::int64_t passSamples = plan.k / plan.sub_batches;
  const std::int64_t peak = computeMemoryCurve(g).peak(passSamples);
  if (plan.predictions.peak_bytes != peak) {
    throwBadInput("plan '" + planName + "': field 'predictions.peak_bytes' is " +
                  std::to_string(plan.predictions.peak_bytes) + ", but its swap set's GMAP at " +
                  (plan.sub_batches > 1
                       ? std::to_string(passSamples) +
                             " samples (one pass of k = " + std::to_string(plan.k) + ")"
                       : "k = " + std::to_string(plan.k)) +
                  " peaks at " + std::to_string(peak) +
                  " bytes: the plan was edited or made for another schedule (plan it again)");
  }
  const std::size_t starts = plan.predictions.start_s.size();
  const auto steps = static_cast<std::size_t>(g.steps());
  if (starts != 0 && starts != steps) {
    throwBadInput("plan '" + planName + "': field 'predictions.start_s' holds " +
                  std::to_string(starts) + " starts, but the GMAP has " + std::to_string(steps) +
                  " steps, one start each: the plan was edited or made for another network");
  }
  // A stalled step is one of the GMAP's steps (1..2N); one outside would be compared with no
  // step of the run.
  for (std::size_t i = 0; i < plan.predictions.stalls.size(); ++i) {
    const int step = plan.predictions.stalls[i].step;
    if (step < 1 || static_cast<std::size_t>(step) > steps) {
      throwBadInput("plan '" + planName + "': field 'predictions.stalls[" + std::to_string(i) +
                    "].step' is " + std::to_string(step) + ", but the GMAP's steps are 1 to " +
                    std::to_string(steps) + ": the plan was edited or made for another network");
    }
  }
}

/// The plan's offload and prefetch steps must be the GMAP's: a plan edited by hand, or made by
/// another version with another step order, would otherwise run a schedule it did not predict.
void checkSwapSteps(const store::PlanFile& plan, const std::string& planName, const Gmap& g) {
  const std::vector<SwapSteps> steps = swapSteps(g);
  for (std::size_t i = 0; i < plan.swap_set.size(); ++i) {
    const store::PlanSwap& w = plan.swap_set[i];
    SwapSteps have;
    for (std::size_t b = 0; b < g.buffers.size(); ++b) {
      if (g.buffers[b].name == w.fm && g.buffers[b].kind == BufferKind::FeatureMap) have = steps[b];
    }
    if (have.release != w.release_step || have.prefetch != w.prefetch_step) {
      throwBadInput("plan '" + planName + "': field 'swap_set[" + std::to_string(i) + "]' puts " +
                    w.fm + " at steps " + std::to_string(w.release_step) + " -> " +
                    std::to_string(w.prefetch_step) + ", but this network's GMAP has " +
                    std::to_string(have.release) + " -> " + std::to_string(have.prefetch));
    }
  }
  // A recomputed FM: its forward release and its first re-make.
  const std::vector<RecomputeSteps> remakes = recomputeSteps(g);
  for (std::size_t i = 0; i < plan.recompute.size(); ++i) {
    const store::PlanRecompute& r = plan.recompute[i];
    RecomputeSteps have;
    for (std::size_t b = 0; b < g.buffers.size(); ++b) {
      if (g.buffers[b].name == r.fm && g.buffers[b].kind == BufferKind::FeatureMap)
        have = remakes[b];
    }
    if (have.release != r.release_step || have.recompute != r.recompute_step) {
      throwBadInput("plan '" + planName + "': field 'recompute[" + std::to_string(i) + "]' puts " +
                    r.fm + " at steps " + std::to_string(r.release_step) + " -> " +
                    std::to_string(r.recompute_step) + ", but this network's GMAP has " +
                    std::to_string(have.release) + " -> " + std::to_string(have.recompute));
    }
  }
}

/// The per-step stall and start of one iteration (steps 1..2N, index 0 unused).
perf::MeasuredIteration measuredIteration(const rt::IterationRecord& rec) {
  perf::MeasuredIteration m;
  m.t_iter = static_cast<double>(rec.duration_ns) * 1e-9;
  m.stall.assign(rec.stall_ns.size(), 0.0);
  m.start.assign(rec.stall_ns.size(), 0.0);
  for (std::size_t j = 1; j < rec.stall_ns.size(); ++j)
    m.stall[j] = static_cast<double>(rec.stall_ns[j]) * 1e-9;
  for (const rt::TimelineOp& op : rec.ops) {
    // The plan predicts the first pass's starts (sub-batches repeat the steps).
    if (op.kind == rt::TaskKind::Compute && op.sub_batch == 0 && op.step >= 1 &&
        static_cast<std::size_t>(op.step) < m.start.size())
      m.start[static_cast<std::size_t>(op.step)] = static_cast<double>(op.start_ns) * 1e-9;
  }
  return m;
}

}  // namespace

nlohmann::ordered_json kernelChoicesJson(const Network& net, const rt::SwapExecutor& ex) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const rt::KernelChoice& c : ex.kernelChoices()) {
    a.push_back({{"layer", net.layer(c.layer).name},
                 {"algorithms", c.algorithms},
                 {"forward_workspace", c.forward_workspace},
                 {"backward_workspace", c.backward_workspace}});
  }
  return a;
}

PlanRun::PlanRun(rt::Device& device, const Network& net, const store::PlanFile& plan,
                 const std::string& planName, const SwapSet& swapped, const PlanRunConfig& config)
    : m_net(net), m_plan(plan), m_config(config), m_costs(computeLayerCosts(net)) {
  if (config.iterations < 1) throwBadInput("a plan's run needs at least one measured iteration");
  if (config.warmup < 0) throwBadInput("the number of warm-up iterations cannot be negative");
  const std::int64_t k = plan.k;
  rt::ExecutorOptions options;
  options.seed = config.seed;
  options.sub_batches = plan.sub_batches;
  options.recompute = planRecomputeSet(net, plan, planName);
  // The data's size first: the engine checks the run's host memory with it before it or the
  // data allocates anything.
  if (config.data == PlanData::FashionMnist) {
    const rt::FashionMnistSize size = rt::fashionMnistSize(config.data_dir);
    options.host_extra.push_back(
        {"Fashion-MNIST (" + std::to_string(size.train.samples + size.test.samples) + " samples)",
         rt::idxLoadHostBytes(size.train.sample, size.train.samples + size.test.samples)});
  } else {
    options.host_extra.push_back({"the synthetic data set (" + std::to_string(k) + " samples)",
                                  rt::datasetHostBytes(net.sampleShape(), k)});
  }
  // The executor refuses first a plan that cannot fit (the shortfall says more than a peak that
  // is not the schedule's).
  m_executor = std::make_unique<rt::SwapExecutor>(device, net, k, swapped, plan.budget, options);
  checkPlanPredictions(net, m_costs, swapped, options.recompute, plan, planName);
  checkSwapSteps(plan, planName, m_executor->gmap());
  if (config.data == PlanData::FashionMnist) {
    m_data = rt::loadFashionMnist(config.data_dir).train;
    rt::checkData(net, m_data, k);
  } else {
    m_data = rt::syntheticDataset(net.sampleShape(), net.classes(), k, config.seed);
  }
}

PlanRun::~PlanRun() = default;

PlanRunResult runPlan(PlanRun& run, store::RunWriter* db, const RunProgressFn& progress,
                      const std::atomic<bool>* cancel) {
  rt::SwapExecutor& ex = run.executor();
  rt::Device& device = ex.device();
  const Network& net = run.network();
  const store::PlanFile& plan = run.plan();
  const PlanRunConfig& cfg = run.config();
  const rt::Dataset& data = run.data();
  const std::int64_t k = plan.k;
  const std::int64_t batches = data.size() / k;  // whole minibatches, used in turn
  const std::int64_t sampleValues = net.sampleShape().numel();
  const int measuredEnd = cfg.warmup + cfg.iterations;
  const int total = measuredEnd + (cfg.collector == CollectorMode::Off ? 0 : cfg.iterations);
  auto stopped = [&] { return cancel && cancel->load(); };

  PlanRunResult result;
  std::vector<std::vector<std::int64_t>> gaps;  // the compute stream's hand-offs
  double seconds = 0;                           // every iteration's so far
  // The plan's learning rate (eq. 9 at its k), with the engine's momentum and weight decay.
  rt::SgdConfig sgd;
  sgd.lr = static_cast<float>(plan.learning_rate);
  // Iteration `it` (0-based over the whole run) on its minibatch of the data set.
  const auto iterate = [&](int it) {
    const std::int64_t first = (it % batches) * k;
    return ex.trainIteration(data.images.data() + first * sampleValues, data.labels.data() + first,
                             static_cast<std::uint64_t>(it), sgd, cancel);
  };
  // A loss that is no number: the plan's learning rate diverged the training (eq. 9 from
  // `plan`'s --lr-base, --k-base and --lr-c). Said, as `train` says it, before the iteration is
  // recorded: a database records finite losses only.
  const auto requireFiniteLoss = [&](const rt::IterationRecord& rec, int it) {
    if (std::isfinite(rec.loss)) return;
    throw Error(ErrorKind::Runtime,
                "the loss became " + numberText(rec.loss) + " at iteration " +
                    std::to_string(it + 1) + ": the plan's learning rate " +
                    numberText(plan.learning_rate) + " (eq. 9 at k = " + std::to_string(k) +
                    ") diverged the training (plan it with a smaller --lr-base)");
  };
  const auto report = [&](RunStage stage, int it, const rt::IterationRecord& rec,
                          std::shared_ptr<const store::IterationRows> rows) {
    const double s = static_cast<double>(rec.duration_ns) * 1e-9;
    seconds += s;
    if (progress) {
      progress({stage, 0, 1, k, it + 1, total, s, seconds / (it + 1) * (total - it - 1),
                std::move(rows)});
    }
  };
  try {
    if (db) {
      db->writeNetwork(net, run.costs(), ex.gmap());
      db->addPlan({0, utcNow(), plan.policy, plan.mode, plan.budget, k,
                   static_cast<std::int64_t>(plan.predictions.t_iter_s * 1e9),
                   store::planToJson(plan).dump()});
    }
    const std::int64_t runStart = device.nowNs();
    int it = 0;
    for (; it < measuredEnd && !stopped(); ++it) {
      const rt::IterationRecord rec = iterate(it);
      if (rec.cancelled) break;  // stopped within the iteration: nothing of it is measured
      requireFiniteLoss(rec, it);
      std::shared_ptr<const store::IterationRows> rows;
      if (it >= cfg.warmup) {
        result.t_iter.push_back(static_cast<double>(rec.duration_ns) * 1e-9);
        result.stall.push_back(static_cast<double>(rec.stall_total_ns) * 1e-9);
        result.steps.push_back(measuredIteration(rec));
        gaps.push_back(dispatchGaps(rec));
        if (db) {
          const int recorded = static_cast<int>(result.t_iter.size()) - 1;
          RowContext ctx{.net = &net,
                         .gmap = &ex.gmap(),
                         .costs = &run.costs(),
                         .k = k,
                         .iteration = recorded,
                         .run_start_ns = runStart,
                         .page_locked = device.hostMemoryPageLocked(),
                         .memory = recorded == 0};
          rows = commitIteration(*db, rec, ctx, static_cast<bool>(progress));
        }
      }
      report(it < cfg.warmup ? RunStage::Warmup : RunStage::Recorded, it, rec, std::move(rows));
    }
    // The collector's pass: the measured iterations again, profiled.
    if (cfg.collector != CollectorMode::Off && !stopped()) {
      std::unique_ptr<KernelCollector> collector = KernelCollector::create(
          device, cfg.collector != CollectorMode::Events,
          cfg.collector == CollectorMode::CuptiAllApi ? CuptiApiRecords::All
                                                      : CuptiApiRecords::Launches);
      collector->attach();
      try {
        for (; it < total && !stopped(); ++it) {
          const rt::IterationRecord rec = iterate(it);
          if (rec.cancelled) break;
          requireFiniteLoss(rec, it);
          result.collector_t_iter.push_back(static_cast<double>(rec.duration_ns) * 1e-9);
          result.profile = collector->take(rec);  // the last profiled iteration's
          report(RunStage::Collector, it, rec, nullptr);
        }
      } catch (...) {
        collector->detach();
        throw;
      }
      collector->detach();
      if (!result.collector_t_iter.empty()) result.collector_source = collector->source();
    }
    result.peak = ex.poolStats().high_water;
    result.dispatch_ns = medianDispatch(gaps);
    // Stopped early: a cancel that comes after the last iteration has nothing left to stop.
    result.cancelled = it < total;
    result.status = result.cancelled ? store::RunStatus::Incomplete : store::RunStatus::Complete;
    if (db) {
      // The collector's overhead only from a whole pass.
      if (!result.collector_source.empty() &&
          static_cast<int>(result.collector_t_iter.size()) == cfg.iterations) {
        db->setMeta("collector", result.collector_source);
        db->setMeta("collector_overhead",
                    formatFixed(median(result.collector_t_iter) / median(result.t_iter) - 1.0, 4));
      }
      db->setMeta("kernel_choices", kernelChoicesJson(net, ex).dump());
      if (!result.t_iter.empty()) {
        db->addBatch({k, plan.policy, cfg.warmup, ex.predictedPeak(), result.peak, ex.reuseDelay(),
                      ex.prefetchesMoved(), result.dispatch_ns});
      }
      db->finish(result.status, result.cancelled
                                    ? "interrupted after " + std::to_string(result.t_iter.size()) +
                                          " measured iterations"
                                    : "");
    }
  } catch (const std::exception& e) {
    if (db) db->finish(store::RunStatus::Failed, e.what());
    throw;
  }
  return result;
}

}  // namespace swapscope::collect
