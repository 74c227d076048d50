// SPDX-License-Identifier: MIT
/// @brief The profiling stage (AccUDNN §3.2): runs the network under swap-all at the
/// five profiling minibatches k = 1/8, 1/4, 1/2, 2/3 and 1 x k_max and records every step's time
/// and FLOPs, every transfer, the pool bytes over one iteration per k, and the iteration times
/// into a run database. Also the run of a plan (`swapscope run`), under the same status rules.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/kernel_collector.h"
#include "graph/network.h"
#include "perfmodel/compare.h"
#include "perfmodel/stability.h"
#include "runtime/dataset.h"
#include "runtime/device.h"
#include "runtime/executor.h"
#include "store/plan_file.h"
#include "store/run_db.h"

namespace swapscope::collect {

/// The profiling minibatches for a largest minibatch `top`: 1/8, 1/4, 1/2, 2/3 and 1 of it,
/// rounded to the nearest integer, at least 1, increasing and without duplicates.
std::vector<std::int64_t> profileBatches(std::int64_t top);

/// The largest minibatch whose swap-all plan fits `budget`. Throws Error(BadInput) with the
/// bytes needed when not even k = 1 fits.
std::int64_t swapAllKMax(const Network& net, std::int64_t budget);
/// The same as `device`'s executor counts it: on a device whose pool pads its buffers (the CUDA
/// backend), the largest k whose swap-all plan, padded, fits `budget` and packs into its pool
/// (rt::poolKMax: `analyze --device cuda`'s count); on one that does not pad (the CPU backend),
/// swapAllKMax(net, budget). Error(BadInput) as there where not even k = 1 fits.
std::int64_t swapAllKMax(const Network& net, std::int64_t budget, const rt::Device& device);

struct ProfileConfig {
  std::int64_t budget = 0;
  std::int64_t max_batch = 0;  ///< caps k_max; 0: no cap
  int warmup = 1;              ///< iterations per k run before recording
  int iterations = 3;          ///< recorded iterations per k
  std::uint64_t seed = 1;      ///< initialisation and synthetic data
  rt::SgdConfig sgd;
};

/// What a run was doing in the iteration a progress report follows.
enum class RunStage {
  Warmup,     ///< an unrecorded iteration before the recorded ones
  Recorded,   ///< a recorded iteration, committed to the database (if any) before the report
  Collector,  ///< an iteration of `run`'s collector pass (profiled, not in the database)
};
const char* runStageName(RunStage stage);

/// The progress of a profile or a plan's run, reported after each iteration.
struct RunProgress {
  RunStage stage = RunStage::Recorded;
  int batch_index = 0;  ///< 0-based among the run's minibatches (a plan's run has one)
  int batches = 1;
  std::int64_t k = 0;
  int iteration = 0;             ///< completed at this k, every stage included
  int iterations = 0;            ///< at this k, every stage included
  double iteration_seconds = 0;  ///< of the latest iteration
  /// Time left for the whole run: the mean iteration time at this k times the iterations left
  /// at it, plus, for each later minibatch k', its iterations at that time scaled by k' / k.
  double eta_seconds = 0;
  /// A recorded iteration's rows as committed (samples, transfers), with the pool bytes over the
  /// iteration even where the database keeps them only for the first iteration at a k. Null for
  /// warm-up and collector iterations and where nothing is recorded. Immutable: it may be shared
  /// across threads.
  std::shared_ptr<const store::IterationRows> rows;
};
/// Called after each iteration. An exception it throws ends the run as an error of the run:
/// the database is marked failed with its message, and the exception propagates.
using RunProgressFn = std::function<void(const RunProgress&)>;

/// A profiling minibatch the executor refused (rt::PlanDoesNotFit: its kernels' workspaces, the
/// pool's padding or the packing of its buffers), and what the profile ran instead.
struct RefusedBatch {
  std::int64_t k = 0;    ///< the minibatch of the list that was refused
  std::int64_t ran = 0;  ///< the largest k the executor accepted in its place; 0: none
  std::string reason;    ///< why it was refused
};

struct ProfileResult {
  std::int64_t k_max = 0;  ///< under swap-all, before the cap
  /// The minibatches profiled: profileBatches' list, a refused k replaced by the one that ran.
  std::vector<std::int64_t> batches;
  /// The minibatches of the list the executor refused, in order (meta 'refused_batches').
  std::vector<RefusedBatch> refused;
  int recorded_iterations = 0;
  bool cancelled = false;
  store::RunStatus status = store::RunStatus::Running;
  /// The performance model's fits stored in the database (`fits` table) when the profile ran to
  /// its end; 0 with `fit_error` saying why when the model could not be fitted to it (the
  /// measurements are kept either way).
  int fits = 0;
  std::string fit_error;
  /// The spread of its iteration times and the preempted samples its fits left out (stored as
  /// meta 'stability'), measured when the profile ran to its end.
  std::optional<perf::ProfileStability> stability;
};

/// Refuses, before anything is allocated or recorded, a profile whose largest profiling
/// minibatch does not fit (the need grows with k): its plan against the budget, a device pool
/// against the device's memory, and the host memory with that minibatch's synthetic data against
/// `available` bytes (-1: what the machine has). See rt::checkRunFits.
void checkProfileFits(const rt::Device& device, const Network& net, const ProfileConfig& config,
                      std::int64_t available = -1);

/// The meta of a run on `device`: backend, device, versions (the backend's libraries and
/// SQLite), the start time, the host CPU. The caller adds the command line and its own version.
store::RunMeta runMeta(const rt::Device& device, const std::string& kind, std::int64_t budget,
                       const std::string& policy);

/// Runs the profiling stage and records it in `db`, whose meta the caller wrote. On return the
/// database is finished: complete, with the performance model fitted to what it recorded and
/// its fits stored (ProfileResult::fits), or incomplete when `cancel` stopped it (after the
/// current iteration), without fits. An error marks it failed with the message and is rethrown.
/// Throws Error(BadInput) before recording anything when the budget cannot hold k = 1 under
/// swap-all or the profile does not fit the machine (checkProfileFits).
///
/// Where the kernels chose an algorithm or hold a workspace at a profiled k (the CUDA backend's
/// convolutions under --conv-algo), the meta 'kernel_choices_by_k' records them: a JSON array of
/// {"k", "layers"}, "layers" as kernelChoicesJson gives them, one entry per k that ran; absent
/// where no kernel chose or holds any (the CPU backend).
///
/// A minibatch the executor refuses (rt::PlanDoesNotFit: what only the executor counts, the
/// kernels' workspaces and the packing of the padded buffers) is replaced by the largest k it
/// accepts between the last k that ran and the refused one, found by bisection; the minibatches
/// after it, larger still, are not tried. Each refusal is in ProfileResult::refused and the
/// meta 'refused_batches' (refusedBatchesJson). Where no k above the last one that ran is
/// accepted, the profile ends with what it recorded; where none at all is, the refusal is
/// rethrown.
ProfileResult runProfile(rt::Device& device, const Network& net, const ProfileConfig& config,
                         store::RunWriter& db, const RunProgressFn& progress = {},
                         const std::atomic<bool>* cancel = nullptr);

/// The meta 'refused_batches' of `refused`: a JSON array of {"k", "ran", "reason"}.
nlohmann::ordered_json refusedBatchesJson(const std::vector<RefusedBatch>& refused);
/// One line per refusal for the user: the refused k, why, and the k that ran instead.
std::string describeRefusal(const RefusedBatch& r, std::int64_t budget);

/// When `device` is not the device whose profile the plan's model was fitted on (another backend
/// or device name), what to tell the user: the plan's predictions are not comparable with the
/// run's measurement. Empty when it is the same device.
std::string planDeviceMismatch(const store::PlanFile& plan, const rt::Device& device);

/// Where a plan's run takes its minibatches from.
enum class PlanData {
  Synthetic,     ///< one minibatch of random data of the network's shape
  FashionMnist,  ///< consecutive minibatches of the Fashion-MNIST training set
};

/// The network a plan was made for, from the run database it names (`source_db`).
/// Error(BadInput) naming the plan and the field where it names none or that database cannot
/// give it; `otherwise` ends the message, saying how else to give the network. A relative
/// source_db is read from the plan file's folder (store::sourceDbPath), which the message names
/// as `relativeTo` says: "the current folder" for a plan read from standard input.
Network planNetwork(const store::PlanFile& plan, const std::string& planName,
                    const std::string& otherwise,
                    const std::string& relativeTo = "the plan file's folder");
/// The plan's swap set of `net`: Error(BadInput) naming the plan when `net` is not the network
/// it was made for (another structure hash; `otherwise`, where given, ends that message, saying
/// how to give the plan's network), an FM of its swap set is not one of `net`'s swappable FMs,
/// or its k overflows the memory curve.
SwapSet planSwapSet(const Network& net, const store::PlanFile& plan, const std::string& planName,
                    const std::string& otherwise = "");
/// The plan's recomputed FMs (its `recompute` entries) as a recompute set of `net`:
/// Error(BadInput) naming the plan and the entry when one is not a layer whose FM a backward
/// step reads. PlanRun runs them; empty entries give an all-false set.
RecomputeSet planRecomputeSet(const Network& net, const store::PlanFile& plan,
                              const std::string& planName);

/// The kernel collector a plan's run passes its measured iterations through once more.
enum class CollectorMode {
  Off,          ///< no collector pass
  Events,       ///< the device's task timings
  Cupti,        ///< CUPTI (CuptiApiRecords::Launches), else task timings with the reason
  CuptiAllApi,  ///< CUPTI recording every runtime and driver API call (CuptiApiRecords::All)
};
std::string_view collectorModeName(CollectorMode m);  ///< "off", "events", "cupti", "cupti-all-api"
std::optional<CollectorMode> collectorModeFromName(std::string_view name);

struct PlanRunConfig {
  int warmup = 1;      ///< unmeasured iterations first
  int iterations = 5;  ///< measured iterations (and as many again under a collector)
  std::uint64_t seed = 1;
  PlanData data = PlanData::Synthetic;
  std::string data_dir = rt::kFashionMnistDir;  ///< where Fashion-MNIST is
  /// With a collector, the measured iterations run once more under it.
  CollectorMode collector = CollectorMode::Off;
};

/// A plan made ready to run: the plan checked against the budget, the device and the host
/// memory (with its data set), its executor built, its swap steps checked against the GMAP and
/// its data loaded. Everything that can refuse the plan is done here, before any database is
/// created.
class PlanRun {
 public:
  /// `planName` names the plan in messages (its file). `swapped` is the plan's swap set of
  /// `net` (planSwapSet). `device` and `net` must outlive the PlanRun. Throws Error(BadInput) for a
  /// plan or data set that cannot run, PlanDoesNotFit where the kernels' workspaces do not fit.
  PlanRun(rt::Device& device, const Network& net, const store::PlanFile& plan,
          const std::string& planName, const SwapSet& swapped, const PlanRunConfig& config);
  ~PlanRun();
  PlanRun(const PlanRun&) = delete;
  PlanRun& operator=(const PlanRun&) = delete;

  const Network& network() const { return m_net; }
  const store::PlanFile& plan() const { return m_plan; }
  const PlanRunConfig& config() const { return m_config; }
  const std::vector<LayerCost>& costs() const { return m_costs; }
  rt::SwapExecutor& executor() { return *m_executor; }
  const rt::SwapExecutor& executor() const { return *m_executor; }
  const rt::Dataset& data() const { return m_data; }

 private:
  const Network& m_net;
  store::PlanFile m_plan;
  PlanRunConfig m_config;
  std::vector<LayerCost> m_costs;
  std::unique_ptr<rt::SwapExecutor> m_executor;
  rt::Dataset m_data;
};

struct PlanRunResult {
  std::vector<double> t_iter;  ///< seconds, per measured iteration
  std::vector<double> stall;   ///< seconds of compute-stream stall, per measured iteration
  /// Per measured iteration, per step: the stall before it and its start.
  std::vector<perf::MeasuredIteration> steps;
  std::int64_t dispatch_ns = -1;  ///< the compute stream's median hand-off (-1: none)
  std::int64_t peak = 0;          ///< the pool's high water
  /// The collector's pass: its source (empty: no pass ran), the iteration times under it and the
  /// profile of its last iteration.
  std::string collector_source;
  std::vector<double> collector_t_iter;
  KernelProfile profile;
  bool cancelled = false;
  store::RunStatus status = store::RunStatus::Running;
};

/// The layers whose kernels chose an algorithm or hold a workspace: layer, algorithms and the
/// forward and backward workspaces (the meta `kernel_choices` of a plan's run).
nlohmann::ordered_json kernelChoicesJson(const Network& net, const rt::SwapExecutor& ex);

/// Runs `run`'s plan: `warmup` iterations, then `iterations` measured ones, each committed to
/// `db` (when given) as it ends, then the collector's pass. With `db`, it also records the
/// network, the plan (a row of table 'plans'), the batch row and the collector's and kernels'
/// meta, and finishes it: complete; incomplete when `cancel` stopped the run (after the current
/// iteration); failed, with the message, when an error (of the engine, the database or
/// `progress`) ended it, which is then rethrown. The caller created `db` with the run's meta.
PlanRunResult runPlan(PlanRun& run, store::RunWriter* db, const RunProgressFn& progress = {},
                      const std::atomic<bool>* cancel = nullptr);

/// The current time as ISO 8601 UTC ("2026-11-21T10:00:00Z").
std::string utcNow();

}  // namespace swapscope::collect
