// SPDX-License-Identifier: MIT
/// @brief The performance model fitted to a run database: compute time per step from curves per
/// layer type and direction (and per layer, for the profiled network), and PCIe time per
/// direction with a factor for both directions at once. Memory is not fitted: the analyzer's
/// exact fixed + per-sample sizes are used (analysis/memory.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analysis/gmap.h"
#include "analysis/layer_cost.h"
#include "graph/network.h"
#include "perfmodel/fit.h"
#include "store/run_db.h"

namespace swapscope::perf {

enum class StepKind { Forward, Backward, Update };

/// A fitted group: one layer type (or one layer) in one direction.
struct GroupFit {
  store::FitScope scope = store::FitScope::Type;  ///< Type or Layer
  std::string target;                             ///< layer kind or layer name
  StepKind kind = StepKind::Forward;
  bool bytes_axis = false;  ///< x is the output FM's bytes (layers without FLOPs)
  FitChoice fit;
};

/// A predicted duration with its provenance.
struct Estimate {
  double seconds = 0;
  bool extrapolated = false;  ///< outside the profiled range of its curve
  bool transferred = false;   ///< from a layer-type curve fitted on another network
  bool missing = false;       ///< no curve for this layer type: 0 s assumed
};

class BoundModel;

/// The compute stream's hand-off: seconds between the moment a task could start (the previous
/// task's end or its t_ready, whichever is later) and its start, where no copy ran meanwhile.
/// Measured the same way on every backend (on CUDA it is the launch and event overhead), in two
/// kinds that the timeline tells apart:
/// - plain: the task was queued when the previous one ended;
/// - woken: the task waited for another stream (t_ready after the previous task's end), so the
///   stream's thread slept and that stream's completion wakes it.
/// (A gap in which a copy ran or started is the contention fits', ContentionFit.) Each is, per
/// step, the median of its gaps over the profile's iterations and minibatches, and the mean of
/// those over the steps. A gap that recurs at a step is that step's hand-off and counts; one long
/// gap at a step that is short in its other samples is the stream's thread preempted by other
/// work on the machine, and the median leaves it out (a few such gaps of milliseconds, where the
/// hand-off takes tens of microseconds, would otherwise multiply the predicted stall of every
/// plan; docs/perfmodel.md).
struct DispatchFit {
  bool present = false;           ///< false: no t_ready recorded (a schema-version-1 file)
  double seconds = 0;             ///< plain: the mean of the steps' median gaps
  double median = 0;              ///< the median of the plain gaps
  int points = 0;                 ///< plain gaps
  std::vector<double> residuals;  ///< gap - seconds, per plain gap
  double rmse = 0;
  double woken_seconds = 0;  ///< after a wait for another stream (`seconds` where none was seen)
  int woken_points = 0;      ///< woken gaps
};

/// How copies on the swap streams and compute on the compute stream slow each other (both 0
/// where they share nothing, as a GPU's copy engines should show). Fitted to the profile's
/// timeline by least squares through the origin; each keeps its residuals.
/// The largest compute slowdown fitted (a copy never stops compute entirely in the model).
inline constexpr double kMaxSlowdown = 0.95;

struct ContentionFit {
  bool present = false;  ///< false: not recorded (a schema-version-1 file)
  /// Compute slowed by copies: a step's time grows by `slowdown.slope` x the time a copy runs
  /// beside it (0: not at all, 1: compute stops while a copy runs; kept below 1). Residuals in
  /// seconds, per step sample with a copy beside it.
  ProportionalFit slowdown;
  /// A step that could start while a copy runs waits for `start_block.slope` x the copy's
  /// remaining time after its plain hand-off (0: starts at once, 1: waits for the copy to end).
  /// Residuals in seconds, per such step.
  ProportionalFit start_block;
  /// A copy that starts within a step's hand-off (an offload that waited for the step before,
  /// a prefetch that waited for its memory) and runs beyond it: the step waits
  /// `copy_start_block.intercept` + `copy_start_block.slope` x the time that copy runs beyond
  /// the plain hand-off (on the CPU backend the copy's thread takes the core the compute thread
  /// needs, and the step starts a wake-up after the copy ends). Fitted (fitBoundedLine) to every
  /// hand-off where a copy was due, also those whose copy started only during the step and did
  /// not block it, so the line is the mean wait: on a 2-core machine a copy due in a hand-off
  /// starts there about a quarter to a third of the time. Residuals in seconds, per such step.
  ProportionalFit copy_start_block;
};

/// Per (k, iteration): the samples each step of it ran on.
using PassSamples = std::map<std::pair<std::int64_t, int>, std::int64_t>;

/// The passes of each recorded iteration, (k, iteration) -> S, where S > 1: an iteration in S
/// sub-batches records every step once per pass, each on k/S samples (docs/run-database.md), so
/// S is the count of its step-1 samples. Error(BadInput) naming the file where that count does
/// not split k.
std::map<std::pair<std::int64_t, int>, std::int64_t> subBatchesOf(const store::RunData& run);
/// The samples each recorded iteration's steps ran on, (k, iteration) -> k, or k/S for an
/// iteration run in S sub-batches (subBatchesOf); same errors.
PassSamples samplesPerPass(const store::RunData& run);

class PerfModel {
 public:
  /// Fits every group of the run's samples (the median per layer, direction and k) and its
  /// transfers. Throws Error(BadInput) naming the file when it holds no recorded iterations.
  static PerfModel fit(const store::RunData& run);

  /// The time of step `layer` in `kind` at minibatch k. Per-layer curves are used when `net` is
  /// the profiled network (same structure hash), per-type curves otherwise (transferred).
  Estimate step(const Network& net, const std::vector<LayerCost>& costs, int layer, StepKind kind,
                std::int64_t k) const;
  /// The curves for every step of `net`, resolved once (see BoundModel). `net` and `costs` must
  /// outlive the result.
  BoundModel bind(const Network& net, const std::vector<LayerCost>& costs) const;
  /// One offload (to_host) or prefetch of `bytes`, alone on the link; `beside_compute`: while
  /// the compute stream runs (fitted apart: on the CPU backend the copies share its cores).
  double transfer(std::int64_t bytes, bool to_host, bool beside_compute = false) const;
  /// Factor (>= 1) by which a transfer slows while the other direction is busy.
  double duplexFactor() const { return m_duplex; }
  /// The copies the duplex factor was measured on (each ran beside one the other way); 0: none
  /// did, and the factor is 1, assumed.
  int duplexPoints() const { return m_duplexPoints; }
  const DispatchFit& dispatch() const { return m_dispatch; }
  const ContentionFit& contention() const { return m_contention; }

  const std::vector<GroupFit>& groups() const { return m_groups; }
  /// The copies that ran without compute beside them (fallback: all of that direction).
  const LinkFit& link(bool to_host) const { return to_host ? m_d2h : m_h2d; }
  /// The copies that ran beside compute (fallback: link()).
  const LinkFit& linkBesideCompute(bool to_host) const {
    return to_host ? m_d2hBeside : m_h2dBeside;
  }
  const std::string& networkHash() const { return m_hash; }
  const std::string& device() const { return m_device; }
  /// The byte alignment of the profiled device's pool (meta 'pool_alignment'; 1 where the run
  /// did not record it): the planner places buffers as that pool does.
  std::int64_t poolAlignment() const { return m_poolAlignment; }
  /// How the profiled device's pool pads buffers (meta 'pool_padding' and 'workspace_padding';
  /// where the run did not record them, the CUDA backend's padding for a CUDA run, else none),
  /// with the kernel workspaces it holds (workspaces()): the planner sizes its pool's GMAP as
  /// that pool does.
  PoolPadding poolPadding() const { return m_poolPadding; }
  /// The kernel workspaces the profiled pool held beside the GMAP's buffers, fitted to the meta
  /// 'kernel_choices_by_k' (a CUDA profile's convolutions under its --conv-algo): per layer of
  /// the profiled network and direction, a line in k (workspaceLine) through the bytes recorded
  /// at every profiled k (0 at a k where the layer held none). nullptr where the run recorded
  /// none (a CPU profile). The planner adds them to plans of the profiled network only.
  const KernelWorkspaces* workspaces() const { return m_workspaces.get(); }
  std::int64_t minK() const { return m_minK; }
  std::int64_t maxK() const { return m_maxK; }
  /// The fits as run-database rows (store::RunWriter::addFit).
  std::vector<store::FitRow> fitRows() const;
  /// A step sample's time as the compute curves were fitted to it: its measured time less what
  /// the copies beside it added (the fitted compute slowdown); the measured time where no
  /// contention was fitted. Each curve's points are the medians of these per layer, direction
  /// and k.
  double fittedSeconds(const store::SampleRow& s) const;

 private:
  /// fit()'s parts: the step curves per layer type and per layer (times with the copies' slowdown
  /// taken out), and the copy lines per direction with the duplex factor.
  void fitStepCurves(const store::RunData& run, const PassSamples& perPass);
  void fitCopyLines(const store::RunData& run);
  const GroupFit* find(store::FitScope scope, const std::string& target, StepKind kind) const;
  const GroupFit* resolve(const Network& net, bool same, int layer, StepKind kind, bool bytesAxis,
                          bool& transferred) const;

  std::vector<GroupFit> m_groups;
  std::map<std::string, std::size_t> m_index;  ///< scope/target/kind -> m_groups
  LinkFit m_h2d, m_d2h, m_h2dBeside, m_d2hBeside;
  double m_duplex = 1;
  int m_duplexPoints = 0;
  DispatchFit m_dispatch;
  ContentionFit m_contention;
  std::string m_hash, m_device;
  std::int64_t m_minK = 0, m_maxK = 0;
  std::int64_t m_poolAlignment = 1;
  PoolPadding m_poolPadding;  ///< its `workspaces` point into m_workspaces
  std::shared_ptr<const KernelWorkspaces> m_workspaces;
};

/// A PerfModel resolved for one network: per layer and step kind, the curve to use and its
/// provenance, found once instead of per call (the planner asks for thousands of steps per plan).
/// Cheap to query, immutable, safe to share between threads.
class BoundModel {
 public:
  /// Same answer as PerfModel::step for the bound network.
  Estimate step(int layer, StepKind kind, std::int64_t k) const;
  const PerfModel& model() const { return *m_model; }

 private:
  friend class PerfModel;
  struct Entry {
    const Curve* curve = nullptr;  ///< nullptr: missing
    bool transferred = false;
  };
  const PerfModel* m_model = nullptr;
  const std::vector<LayerCost>* m_costs = nullptr;
  std::vector<Entry> m_entries;  ///< layer * 3 + kind
};

/// The work a step's curve is indexed by: FLOPs, or the output FM's bytes for a layer without
/// FLOPs in that direction. Sets `bytesAxis`.
double stepWork(const LayerCost& c, StepKind kind, std::int64_t k, bool& bytesAxis);

std::string_view stepKindName(StepKind k);  ///< "fwd", "bwd", "update"

}  // namespace swapscope::perf
