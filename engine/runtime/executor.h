// SPDX-License-Identifier: MIT
/// @brief The swap executor: runs training iterations of a network at minibatch k under a swap
/// set, inside one pool of exactly the budget, by executing the GMAP (docs/runtime.md).
///
/// - Offloads start on the swap-out stream as soon as their producer finishes; an offloaded FM's
///   memory is reused only after its offload and its last forward reader have finished.
/// - Prefetches run on the swap-in stream in backward order. They are moved earlier than the
///   GMAP places them where the pool allows without raising the plan's peak, so the measured
///   high-water mark equals the analyzer's prediction.
/// - Compute waits for prefetches and for reused memory on events, never by polling.
/// - A plan that cannot fit is refused in the constructor (PlanDoesNotFit) with the shortfall
///   and the step; the allocator is dry-run first, so fragmentation is caught there too.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/gmap.h"
#include "analysis/layer_cost.h"
#include "analysis/memory.h"
#include "common/error.h"
#include "graph/network.h"
#include "runtime/device.h"
#include "runtime/host_memory.h"

namespace swapscope::rt {

/// A plan that does not fit its budget. kind() is BadInput: the user's budget is too small.
class PlanDoesNotFit : public Error {
 public:
  PlanDoesNotFit(const std::string& message, std::int64_t shortfall, int step)
      : Error(ErrorKind::BadInput, message), m_shortfall(shortfall), m_step(step) {}
  std::int64_t shortfall() const { return m_shortfall; }  ///< bytes missing
  int step() const { return m_step; }                     ///< the GMAP step where they are missing

 private:
  std::int64_t m_shortfall;
  int m_step;
};

struct SgdConfig {
  float lr = 0.01f;
  float momentum = 0.9f;
  float weight_decay = 5e-4f;
};

/// One task of an iteration, times in ns from the iteration's start.
struct TimelineOp {
  StreamKind stream = StreamKind::Compute;
  TaskKind kind = TaskKind::Compute;
  int step = 0;
  int buffer = -1;
  std::int64_t bytes = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  int sub_batch = 0;  ///< the pass it belongs to, 0..S-1 (the update: S-1)
};

struct PoolSample {
  std::int64_t time_ns = 0;  ///< from the iteration's start
  std::int64_t in_use = 0;   ///< pool bytes in use from then on
};

struct IterationRecord {
  std::int64_t start_ns = 0;     ///< device clock at the iteration's start
  std::int64_t duration_ns = 0;  ///< until every stream drained
  float loss = 0;
  std::vector<TimelineOp> ops;
  std::vector<PoolSample> pool;
  int sub_batches = 1;  ///< S: the passes of k/S samples the iteration ran before its update
  /// Per step 1..2N (index 0 unused): compute idle before it, summed over the S passes.
  std::vector<std::int64_t> stall_ns;
  /// Per pass and step, at passStep(pass, step): the compute idle before the step in that pass
  /// (stall_ns sums them over the passes; without sub-batches they are stall_ns).
  std::vector<std::int64_t> pass_stall_ns;
  /// Per pass and step, at passStep(pass, step), t_ready: when the swap-stream tasks the step
  /// waited on in that pass (its prefetches, the offloads its reused memory needed finished) had
  /// ended, from the iteration's start; 0 where it waited on none of this iteration's.
  std::vector<std::int64_t> ready_ns;
  /// The index of step 1..2N of pass 0..S-1 in pass_stall_ns and ready_ns: pass (2N + 1) + step
  /// (without sub-batches, the step).
  std::size_t passStep(int pass, int step) const {
    return static_cast<std::size_t>(pass) * stall_ns.size() + static_cast<std::size_t>(step);
  }
  std::int64_t stall_total_ns = 0;
  std::int64_t offload_bytes = 0;
  std::int64_t prefetch_bytes = 0;  ///< swapped FMs brought back (the minibatch load excluded)
  std::int64_t load_bytes = 0;      ///< the minibatch and labels
  /// Stopped by the cancel flag before its end: its kernels, and the SGD update, skipped from
  /// then on, so the weights are not those of a whole iteration, and its timeline and loss are
  /// not an iteration's (not to be recorded).
  bool cancelled = false;
};

/// The share of the time tasks of `kind` ran while the compute stream was busy (0..1; 0 when
/// there are none): how much of the swapping the timeline hides behind compute.
double overlapWithCompute(const IterationRecord& rec, TaskKind kind);

struct EvalBatch {
  std::int64_t correct = 0;
  double loss_sum = 0;  ///< sum of the per-sample losses
};

/// What a layer's kernel chose (the CUDA backend's convolution algorithms) and the workspace each
/// of its steps holds in the pool.
struct KernelChoice {
  int layer = 0;
  std::string algorithms;
  std::int64_t forward_workspace = 0, backward_workspace = 0;
};

struct ExecutorOptions {
  bool move_prefetches = true;  ///< move prefetches earlier where the pool allows
  std::uint64_t seed = 1;       ///< initialisation and dropout
  /// What the caller will hold in host memory beside the executor (data sets, its own buffers):
  /// checked together with the executor's host memory before anything is allocated.
  std::vector<HostMemoryItem> host_extra;
  /// Bytes of host memory available to the run; -1: ask the machine (availableHostMemory()).
  std::int64_t host_available = -1;
  /// The FMs recomputed in backward (analysis/swap_policy.h); empty: none.
  RecomputeSet recompute;
  /// S (analysis/sub_batch.h): each iteration runs the GMAP S times on k/S samples, the weight
  /// gradients accumulating, then one SGD update with the minibatch's mean gradient. S must
  /// divide k (Error(BadInput) otherwise). The pool holds one pass: the GMAP, the curve and the
  /// peak are those at its k/S pass samples. Batch norm normalises each pass with that pass's
  /// statistics.
  std::int64_t sub_batches = 1;
  /// The SGD update as one task that updates every parameter tensor (Device::sgdSteps: one
  /// kernel launch on the CUDA backend, as PyTorch's foreach path), instead of one task per
  /// layer with weights. Its timeline has one update task, of no buffer, so a run database
  /// records no per-layer update rows of it: the profiler and `run` keep one task per layer.
  bool multi_tensor_update = false;
};

/// The checks a SwapExecutor makes before it allocates anything, for callers that must refuse a
/// run before they create files or data: the minibatch k >= 1 and options.sub_batches dividing
/// it; the plan's peak (at one pass's k / options.sub_batches samples) without kernel workspaces
/// within `budget` (PlanDoesNotFit with the shortfall and the step); a pool in device memory
/// within the device's memory; and the host memory of the run (hostMemoryNeed: the pool where it
/// is host memory, the swapped FMs' host copies, staging, weights, options.host_extra) within
/// options.host_available (Error(BadInput) naming the figures). The executor checks again, with
/// the kernels' workspaces and scratch, once it has made its kernels.
void checkRunFits(const Device& device, const Network& net, const std::vector<LayerCost>& costs,
                  const SwapSet& swapped, std::int64_t k, std::int64_t budget,
                  const ExecutorOptions& options = {});

/// Whether a pool of `budget` bytes shaped as `shape` holds the plan `gmap` (unpadded, with the
/// kernel workspaces it has, if any) at `passSamples` samples a pass (the minibatch without
/// sub-batches) as the SwapExecutor places it: the peak
/// of the GMAP padded as `shape` pads (padGmap) within the budget, and its buffers packed, ahead
/// of time or at run time (its placement: PlanDoesNotFit otherwise). What the executor adds
/// beyond (its kernels' workspaces) it checks once it has made its kernels.
bool poolHolds(const Gmap& gmap, std::int64_t passSamples, std::int64_t budget,
               const PoolShape& shape);
/// The largest samples a pass <= `limit` at which poolHolds (without sub-batches, the k_max of
/// the pool): the largest whose padded peak fits, lowered while its buffers do not pack. 0 where
/// not even 1 sample fits.
std::int64_t poolKMax(const Gmap& gmap, std::int64_t budget, const PoolShape& shape,
                      std::int64_t limit);

class SwapExecutor {
 public:
  /// Checks the plan against the budget and the host memory (checkRunFits) before allocating
  /// anything, makes the kernels, checks again with their workspaces and scratch, dry-runs the
  /// placement, then reserves the pool and initialises the parameters. Throws PlanDoesNotFit, or
  /// Error(BadInput) where the host memory or the device memory is too small.
  SwapExecutor(Device& device, const Network& net, std::int64_t k, const SwapSet& swapped,
               std::int64_t budget, const ExecutorOptions& options = {});
  ~SwapExecutor();
  SwapExecutor(const SwapExecutor&) = delete;
  SwapExecutor& operator=(const SwapExecutor&) = delete;

  std::int64_t batch() const { return m_k; }  ///< the minibatch k
  std::int64_t subBatches() const;
  /// The samples of one pass, k / subBatches(): the size the GMAP, the pool and the kernels are
  /// built for.
  std::int64_t passSamples() const;
  const Network& network() const;
  const Gmap& gmap() const { return m_gmap; }
  const MemoryCurve& curve() const { return m_curve; }
  std::int64_t predictedPeak() const { return m_curve.peak(passSamples()); }
  /// Steps each prefetch was moved to (GMAP step -> executed step), for docs and tests.
  int prefetchesMoved() const { return m_prefetchesMoved; }
  /// Steps an offloaded FM's memory is kept from reuse after its release (0 at a tight budget).
  int reuseDelay() const { return m_reuseDelay; }
  /// The delay analysis/reuse_delay.h chose for this plan, which the planner also simulates.
  /// reuseDelay() differs from it only where that delay's placement did not pack into the pool.
  int plannedReuseDelay() const { return m_plannedReuseDelay; }
  const PoolStats& poolStats() const;
  /// The layers whose kernels chose an algorithm or hold a workspace, in layer order.
  std::vector<KernelChoice> kernelChoices() const;
  Device& device() { return m_device; }

  /// One training iteration on k samples (`images`: k * sample elements, `labels`: k values),
  /// followed by the SGD update. `iteration` seeds dropout. With S sub-batches, the GMAP runs S
  /// times, on samples [s k/S, (s+1) k/S) in pass s, and the loss is the minibatch's mean.
  /// `cancel`, once set, stops the iteration: no pass starts after it, the steps and updates
  /// still queued skip their kernels, and the record says cancelled. Submission runs at most
  /// one pass ahead of the compute stream, so that a cancel is seen between passes.
  IterationRecord trainIteration(const float* images, const std::int32_t* labels,
                                 std::uint64_t iteration, const SgdConfig& sgd,
                                 const std::atomic<bool>* cancel = nullptr);
  /// Inference on `count` <= k samples (the rest of the minibatch is padding): correct top-1
  /// predictions and the summed loss. With sub-batches, in passes of k/S samples.
  EvalBatch evaluate(const float* images, const std::int32_t* labels, std::int64_t count);

  /// Learnable values and running statistics of every layer with parameters, in layer order.
  std::vector<std::vector<float>> readWeights();
  std::vector<std::vector<float>> readRunningStats();
  void writeWeights(const std::vector<std::vector<float>>& weights,
                    const std::vector<std::vector<float>>& running_stats);

 private:
  struct Impl;
  /// The set-up, in order. The kernels: their workspaces enter the GMAP, so that they count
  /// against the budget.
  void createKernels(const SwapSet& swapped);
  /// Splits the GMAP into set-up and the iteration, and places the buffers in the pool: ahead of
  /// time, else at run time where a dry run shows they fit; PlanDoesNotFit otherwise.
  void placeBuffers(std::int64_t budget, std::int64_t peak);
  /// Reserves the pool and host memory, and writes the persistent buffers' initial values.
  void reserveMemory(const SwapSet& swapped, std::int64_t batch, std::int64_t budget);
  /// evaluate() on one pass: `count` <= passSamples() samples, the rest of the pass padding.
  EvalBatch evaluatePass(const float* images, const std::int32_t* labels, std::int64_t count);
  /// The values of one buffer per layer (-1: none), in layer order.
  std::vector<std::vector<float>> readBuffers(const std::vector<int>& perLayer);

  std::unique_ptr<Impl> m_impl;
  Device& m_device;
  std::int64_t m_k;
  Gmap m_gmap;
  MemoryCurve m_curve;
  int m_prefetchesMoved = 0;
  int m_reuseDelay = 0;
  int m_plannedReuseDelay = 0;
};

}  // namespace swapscope::rt
