// SPDX-License-Identifier: MIT
#include "runtime/executor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>

#include "analysis/placement.h"
#include "analysis/prefetch_schedule.h"
#include "analysis/reuse_delay.h"
#include "analysis/sub_batch.h"
#include "common/bytes.h"
#include "runtime/iteration_timeline.h"
#include "runtime/params.h"
#include "runtime/rng.h"

namespace swapscope::rt {
namespace {

std::string describeStep(const Network& net, const Gmap& gmap, int step) {
  if (step == 0) return "step 0 (setup: parameters, gradients, momentum)";
  const int layer = gmap.step_layer.at(static_cast<std::size_t>(step));
  return "step " + std::to_string(step) + " (" +
         (gmap.isBackwardStep(step) ? "backward" : "forward") + " of layer '" +
         net.layer(layer).name + "')";
}

/// Steps 1..2N of `gmap` in execution order (the set-up, step 0, left out); with `move`, the
/// prefetches moved by `moveTo` open the step they moved to.
std::vector<GmapOp> iterationSchedule(const Gmap& gmap, const std::vector<int>& moveTo, bool move) {
  std::vector<GmapOp> out = executionOrder(gmap, move ? moveTo : std::vector<int>{});
  const auto setup = std::count_if(gmap.ops.begin(), gmap.ops.end(),
                                   [](const GmapOp& op) { return op.step == 0; });
  out.erase(out.begin(), out.begin() + setup);
  return out;
}

/// The executor's placement of an iteration's buffers in the pool.
struct PoolPlacement {
  std::vector<int> move_to;  ///< per buffer, the step its prefetch may move to (movePrefetches)
  int movable = 0;           ///< prefetches move_to moves
  int planned_delay = 0;     ///< analysis/reuse_delay.h's choice
  bool moved = false;        ///< the schedule that runs has the moves
  int delay = 0;
  std::int64_t alignment = 0;
  std::vector<std::int64_t> offsets;      ///< placed ahead: each buffer's offset; else empty
  std::optional<RunTimeFailure> failure;  ///< not placed: the dry run's failure without the moves
  /// Ahead of time, or at run time where a dry run fits.
  bool placed() const { return !failure; }
};

/// Where the buffers of `gmap` (padded as `poolGmap`, with its curve and peak at one pass of
/// `passSamples` samples) go in a pool of `budget` bytes: analysis/placement.h's placeAhead
/// decides (the planner makes the same decision and simulates its schedule): placed ahead, else
/// at run time (best fit) with delay 0, the prefetches moved and then not, where a dry run shows
/// that it fits. Prefetches are moved earlier
/// (with `movePrefetchesEarlier`) where the pool allows without raising the peak, in backward
/// order, never before the FM's device copy is released.
PoolPlacement placePool(const Gmap& gmap, const Gmap& poolGmap, const MemoryCurve& curve,
                        std::int64_t passSamples, std::int64_t budget, std::int64_t peak,
                        const PoolShape& shape, bool movePrefetchesEarlier) {
  PoolPlacement p;
  p.move_to.assign(gmap.buffers.size(), 0);
  if (movePrefetchesEarlier) {
    PrefetchMoves h = movePrefetches(poolGmap, curve, passSamples, peak);
    p.move_to = std::move(h.move_to);
    p.movable = h.moved;
  }
  const std::vector<int> moves = p.movable > 0 ? p.move_to : std::vector<int>{};
  p.planned_delay =
      chooseReuseDelay(poolGmap, executionOrder(gmap, moves), passSamples, budget, shape.alignment);
  const std::int64_t minAlign = std::max<std::int64_t>(kFloatBytes, shape.padding.buffer);
  AheadOfTime ahead = placeAhead(poolGmap, moves, passSamples, budget, p.planned_delay,
                                 {shape.alignment, minAlign}, shape.padding.workspace);
  if (ahead.placed) {
    p.moved = ahead.placed->moved;
    p.delay = ahead.placed->delay;
    p.alignment = ahead.placed->alignment;
    p.offsets = std::move(ahead.placed->offsets);
  } else if (ahead.run_time_moved) {
    p.moved = *ahead.run_time_moved;
    p.alignment = minAlign;
  } else {
    p.failure = ahead.failure;
  }
  return p;
}

/// Throws PlanDoesNotFit where the peak of `curve` at one pass of `passSamples` samples exceeds
/// `budget`.
void checkPeak(const Network& net, const Gmap& gmap, const MemoryCurve& curve,
               std::int64_t passSamples, std::int64_t budget) {
  const std::int64_t peak = curve.peak(passSamples);
  if (peak <= budget) return;
  const int step = curve.peakStep(passSamples);
  throw PlanDoesNotFit("the plan needs " + formatBytes(peak) + " (" + std::to_string(peak) +
                           " bytes) at " + describeStep(net, gmap, step) + " but the budget is " +
                           formatBytes(budget) + " (" + std::to_string(budget) +
                           " bytes): " + std::to_string(peak - budget) + " bytes short",
                       peak - budget, step);
}

/// The host memory of an executor on `device` and its caller, checked against what is
/// available. `passSamples`: one pass's samples (the GMAP's); `batch`: the minibatch staged;
/// `backend`: the backend's scratch still to allocate.
void checkHost(const Device& device, const Network& net, const Gmap& gmap, std::int64_t passSamples,
               std::int64_t batch, std::int64_t budget, std::int64_t backend,
               const ExecutorOptions& options) {
  HostMemoryOptions host;
  host.pool = device.poolInHostMemory() ? budget : 0;
  host.backend = backend;
  host.extra = options.host_extra;
  host.staged_batch = batch;
  const std::int64_t available =
      options.host_available >= 0 ? options.host_available : availableHostMemory();
  checkHostMemory(hostMemoryNeed(net, gmap, passSamples, host), available);
}

RecomputeSet recomputeSet(const Network& net, const ExecutorOptions& options) {
  if (!options.recompute.empty() && static_cast<int>(options.recompute.size()) != net.size()) {
    throwBadInput("the recompute set has " + std::to_string(options.recompute.size()) +
                  " entries, not one per layer (" + std::to_string(net.size()) + ")");
  }
  return options.recompute.empty() ? RecomputeSet(net.size(), false) : options.recompute;
}

/// The samples of one pass of minibatch k under options.sub_batches; Error(BadInput) where k < 1
/// or the count does not divide k.
std::int64_t passSamplesOf(std::int64_t k, const ExecutorOptions& options) {
  if (k < 1) throwBadInput("the minibatch must be at least 1, not " + std::to_string(k));
  return subBatchSize(k, options.sub_batches, std::to_string(options.sub_batches) + " sub-batches");
}

/// checkRunFits; returns the GMAP without workspaces.
Gmap checkFits(const Device& device, const Network& net, const std::vector<LayerCost>& costs,
               const SwapSet& swapped, std::int64_t batch, std::int64_t budget,
               const ExecutorOptions& options) {
  const std::int64_t passSamples = passSamplesOf(batch, options);
  if (budget < 0) throwBadInput("the budget cannot be negative: " + std::to_string(budget));
  Gmap gmap = buildGmap(net, costs, swapped, recomputeSet(net, options));
  // The pool holds the buffers padded as the backend needs them.
  checkPeak(net, gmap, computeMemoryCurve(padGmap(gmap, device.poolPadding())), passSamples,
            budget);
  if (!device.poolInHostMemory()) {
    checkDeviceBudget(device.deviceName(), device.freeMemory(), device.totalMemory(),
                      device.options().device_headroom, budget);
  }
  checkHost(device, net, gmap, passSamples, batch, budget, 0, options);
  return gmap;
}

}  // namespace

bool poolHolds(const Gmap& gmap, std::int64_t passSamples, std::int64_t budget,
               const PoolShape& shape) {
  const Gmap poolGmap = padGmap(gmap, shape.padding);
  const MemoryCurve curve = computeMemoryCurve(poolGmap);
  const std::int64_t peak = curve.peak(passSamples);
  return peak <= budget &&
         placePool(gmap, poolGmap, curve, passSamples, budget, peak, shape, true).placed();
}

std::int64_t poolKMax(const Gmap& gmap, std::int64_t budget, const PoolShape& shape,
                      std::int64_t limit) {
  const Gmap poolGmap = padGmap(gmap, shape.padding);
  const MemoryCurve curve = computeMemoryCurve(poolGmap);
  std::int64_t passSamples = curve.kMax(budget, limit);
  while (passSamples > 0 && !placePool(gmap, poolGmap, curve, passSamples, budget,
                                       curve.peak(passSamples), shape, true)
                                 .placed())
    --passSamples;
  return passSamples;
}

void checkRunFits(const Device& device, const Network& net, const std::vector<LayerCost>& costs,
                  const SwapSet& swapped, std::int64_t k, std::int64_t budget,
                  const ExecutorOptions& options) {
  checkFits(device, net, costs, swapped, k, budget, options);
}

namespace {

/// One iteration's fate under a cancel flag: running until the first compute task that sees the
/// flag abandons it (that task and every later one skip their work), or until its update
/// commits it (it then runs to its end). Shared by the host thread and the compute stream's tasks.
class IterationOutcome {
 public:
  explicit IterationOutcome(const std::atomic<bool>* cancel) : m_cancel(cancel) {}
  /// Abandons a running iteration if the flag is set; true if it is abandoned.
  bool abandoned() {
    if (m_cancel && m_cancel->load()) {
      int running = kRunning;
      m_state.compare_exchange_strong(running, kAbandoned);
    }
    return m_state.load() == kAbandoned;
  }
  /// Commits a running iteration to its update unless the flag is set; true if committed.
  bool committed() {
    int running = kRunning;
    m_state.compare_exchange_strong(running,
                                    m_cancel && m_cancel->load() ? kAbandoned : kCommitted);
    return m_state.load() == kCommitted;
  }
  bool isAbandoned() const { return m_state.load() == kAbandoned; }

 private:
  static constexpr int kRunning = 0, kAbandoned = 1, kCommitted = 2;
  const std::atomic<bool>* m_cancel;
  std::atomic<int> m_state{kRunning};
};

/// One iteration on the device as its passes' GMAP ops are submitted: the record it fills, and
/// what later ops and the timeline read.
struct IterationRun {
  IterationRecord& rec;
  std::shared_ptr<IterationOutcome> outcome;
  std::uint64_t iteration = 0;
  std::int64_t pass = 0;          // the pass being submitted
  float* lossHost = nullptr;      // one loss per pass, read back
  std::vector<bool> gradWritten;  // per layer, this pass: its FM gradient holds a value
  std::uint64_t lastCompute = 0;  // the last compute-stream task submitted
  IterationTimings timings;       // in_use and step_wait filled as steps are submitted
};

}  // namespace

struct SwapExecutor::Impl {
  Impl(Device& d, const Network& n, std::int64_t pass, std::int64_t budget, ExecutorOptions o)
      : device(d), net(n), passSamples(pass), options(o), alloc(budget, d.poolAlignment()) {}

  Device& device;
  Network net;
  std::int64_t passSamples;  // one pass's samples: those the GMAP and the pool are sized at
  ExecutorOptions options;   // options.sub_batches passes of passSamples make the minibatch
  std::vector<LayerCost> costs;
  std::vector<GmapOp> setup, schedule;  // steps 0 and 1..2N, prefetches moved
  PoolAllocator alloc;
  std::byte* pool = nullptr;

  // Per buffer.
  std::vector<std::optional<PoolBlock>> blocks;
  std::vector<Fence> lastUse;
  std::vector<Fence> pending;  // per buffer: what its memory's previous users must finish
  std::vector<std::uint64_t> offloadSeq;
  // The host copies of the swapped FMs: one (page-locked) arena at planned offsets, so that
  // page-locking is one call however many FMs are swapped.
  HostMemory hostArena;
  std::vector<std::byte*> hostStore;  // per buffer: its place in the arena, or null
  // Per layer: buffer indices (-1 where none).
  std::vector<int> fm, grad, saved, weights, weightGrad, momentum, runningStats;
  int labels = -1;
  std::vector<int> workspaceAt;  // per step: its workspace buffer, -1 where none
  std::vector<std::unique_ptr<LayerKernel>> kernels;
  HostMemory hostScalars;  // the loss value read back
  HostMemory hostLogits;
  HostMemory hostImages, hostLabels;  // the minibatch, staged in (page-locked) host memory

  float* ptr(int buffer) const {
    if (buffer < 0) return nullptr;
    const auto& b = blocks[static_cast<std::size_t>(buffer)];
    return b ? reinterpret_cast<float*>(pool + b->offset) : nullptr;
  }
  std::int64_t bytesOf(int buffer) const {
    return gmapRef->buffers[static_cast<std::size_t>(buffer)].size.at(passSamples);
  }
  /// The arguments of `layer`'s forward kernel in training, as the forward step passes them and
  /// a recompute passes them again: its inputs, output, parameters, running statistics, saved
  /// state, the labels and the minibatch size (for the loss), and the dropout seed of this
  /// iteration, sub-batch pass and layer (pass 0's is the seed without sub-batches).
  KernelArgs forwardArgs(int layer, std::uint64_t iteration, std::int64_t pass) const {
    KernelArgs a;
    for (int src : net.inputsOf(layer))
      a.in.push_back(ptr(fm[src]));
    a.out = ptr(fm[layer]);
    a.weights = ptr(weights[layer]);
    a.running_stats = ptr(runningStats[layer]);
    a.saved = ptr(saved[layer]);
    a.labels = net.layer(layer).kind == LayerKind::SoftmaxCrossEntropy
                   ? reinterpret_cast<const std::int32_t*>(ptr(labels))
                   : nullptr;
    a.training = true;
    a.loss_samples = passSamples * options.sub_batches;  // the minibatch
    a.seed = deriveSeed(options.seed, iteration, static_cast<std::uint64_t>(layer));
    if (pass > 0) a.seed = deriveSeed(a.seed, static_cast<std::uint64_t>(pass));
    return a;
  }
  const Gmap* gmapRef = nullptr;
  Gmap poolGmap;                 // the GMAP with the sizes padded as the pool holds them
  std::int64_t wsAlignment = 0;  // offsets of workspaces placed at run time

  std::vector<std::int64_t> offsets;  // planned placement per Allocate of setup + schedule
  std::size_t nextAlloc = 0;

  /// Allocates at the planned offset (`planned`), or by best fit.
  void allocate(int buffer, int step, bool planned = true) {
    const GmapBuffer& buf = poolGmap.buffers[static_cast<std::size_t>(buffer)];
    const std::int64_t bytes = buf.size.at(passSamples);
    const bool usePlan = planned && !offsets.empty();
    const std::int64_t offset = usePlan ? offsets.at(nextAlloc++) : -1;
    if (bytes == 0) return;
    if (blocks[static_cast<std::size_t>(buffer)]) {
      throw Error(ErrorKind::Runtime, "'" +
                                          gmapRef->buffers[static_cast<std::size_t>(buffer)].name +
                                          "' is allocated twice (a broken schedule)");
    }
    auto block = usePlan
                     ? alloc.allocateAt(offset, bytes)
                     : alloc.allocate(bytes, buf.kind == BufferKind::Workspace ? wsAlignment : 0);
    if (!block) {
      const PoolStats& s = alloc.stats();
      throw Error(ErrorKind::Runtime,
                  "pool allocation failed at " + describeStep(net, *gmapRef, step) + ": '" +
                      gmapRef->buffers[static_cast<std::size_t>(buffer)].name + "' needs " +
                      formatBytes(bytes) + ", " + formatBytes(s.capacity - s.reserved) +
                      " are free but the largest free block is " +
                      formatBytes(alloc.largestFree()));
    }
    // The memory's previous users must finish before its first new user starts; that user's
    // task waits for them on the device (the host never blocks).
    pending[static_cast<std::size_t>(buffer)] = block->fence;
    blocks[static_cast<std::size_t>(buffer)] = block;
    lastUse[static_cast<std::size_t>(buffer)] = Fence{};
  }
  void release(int buffer) {
    auto& b = blocks[static_cast<std::size_t>(buffer)];
    if (!b) return;
    alloc.release(*b, lastUse[static_cast<std::size_t>(buffer)]);
    b.reset();
  }
  void use(int buffer, StreamKind s, std::uint64_t seq) {
    if (buffer >= 0) lastUse[static_cast<std::size_t>(buffer)][static_cast<int>(s)] = seq;
  }

  /// Each GMAP op kind of an iteration's pass: submitted to the device, recorded in `run`.
  void offload(const GmapOp& op, IterationRun& run);
  void prefetch(const GmapOp& op, IterationRun& run);
  void recompute(const GmapOp& op, IterationRun& run);
  void compute(const GmapOp& op, IterationRun& run);
  /// The SGD update after the last pass; none for an abandoned iteration.
  void update(const SgdConfig& sgd, IterationRun& run);
  /// Each layer's buffers by kind, from the GMAP.
  void indexBuffers();
};

SwapExecutor::SwapExecutor(Device& device, const Network& net, std::int64_t batch,
                           const SwapSet& swapped, std::int64_t budget,
                           const ExecutorOptions& options)
    : m_impl(std::make_unique<Impl>(device, net, passSamplesOf(batch, options), budget, options)),
      m_device(device),
      m_k(batch) {
  Impl& im = *m_impl;
  im.costs = computeLayerCosts(net);
  // Nothing that grows with k or the network is allocated before the plan is checked against
  // the budget and the host memory.
  m_gmap = checkFits(device, net, im.costs, swapped, batch, budget, options);
  createKernels(swapped);
  im.gmapRef = &m_gmap;
  // The sizes the pool holds: every buffer padded as the device needs (no padding on the CPU).
  const PoolPadding padding = device.poolPadding();
  im.poolGmap = padGmap(m_gmap, padding);
  im.workspaceAt.assign(static_cast<std::size_t>(m_gmap.steps() + 2), -1);
  for (const GmapOp& op : m_gmap.ops) {
    if (op.kind == GmapOpKind::Allocate &&
        m_gmap.buffers[static_cast<std::size_t>(op.buffer)].kind == BufferKind::Workspace)
      im.workspaceAt[static_cast<std::size_t>(op.step)] = op.buffer;
  }
  m_curve = computeMemoryCurve(im.poolGmap);

  // Refuse a plan whose peak with the workspaces exceeds the budget, and a run whose host memory
  // with the kernels' scratch exceeds what is available (the GMAP and the pool are one pass's).
  checkPeak(net, im.poolGmap, m_curve, im.passSamples, budget);
  const std::int64_t peak = m_curve.peak(im.passSamples);
  checkHost(device, net, m_gmap, im.passSamples, batch, budget, device.pendingHostBytes(), options);

  placeBuffers(budget, peak);
  im.indexBuffers();
  reserveMemory(swapped, batch, budget);
  im.alloc.resetHighWater();
}

void SwapExecutor::Impl::indexBuffers() {
  // Buffers by layer.
  for (auto* v : {&fm, &grad, &saved, &weights, &weightGrad, &momentum, &runningStats})
    v->assign(net.size(), -1);
  for (std::size_t b = 0; b < gmapRef->buffers.size(); ++b) {
    const GmapBuffer& buf = gmapRef->buffers[b];
    const int i = static_cast<int>(b);
    switch (buf.kind) {
      case BufferKind::Weights:
        weights[buf.layer] = i;
        break;
      case BufferKind::WeightGrad:
        weightGrad[buf.layer] = i;
        break;
      case BufferKind::Momentum:
        momentum[buf.layer] = i;
        break;
      case BufferKind::RunningStats:
        runningStats[buf.layer] = i;
        break;
      case BufferKind::Labels:
        labels = i;
        break;
      case BufferKind::FeatureMap:
      case BufferKind::LossValue:
        fm[buf.layer] = i;
        break;
      case BufferKind::FmGrad:
        grad[buf.layer] = i;
        break;
      case BufferKind::Saved:
        saved[buf.layer] = i;
        break;
      case BufferKind::Workspace:
        break;
    }
  }
}

void SwapExecutor::createKernels(const SwapSet& swapped) {
  Impl& im = *m_impl;
  const Network& net = im.net;
  const ExecutorOptions& options = im.options;
  const int layers = net.size();
  // The kernels (they only ask for scratch): their workspaces enter the GMAP, so that they count
  // against the budget.
  im.kernels.resize(static_cast<std::size_t>(layers));
  for (int i = 0; i < layers; ++i)
    im.kernels[static_cast<std::size_t>(i)] =
        m_device.createKernel(net, im.costs, i, im.passSamples);
  if (options.sub_batches > 1) {
    for (auto& kernel : im.kernels) {
      if (kernel) kernel->prepareWeightGradAccumulation();
    }
  }
  {
    const int steps = m_gmap.steps();
    std::vector<LinearBytes> workspace(static_cast<std::size_t>(steps + 2));
    bool any = false;
    for (int s = 1; s <= steps; ++s) {
      const int layer = m_gmap.step_layer[static_cast<std::size_t>(s)];
      const bool backward = m_gmap.isBackwardStep(s);
      const LayerKernel* kernel = im.kernels[static_cast<std::size_t>(layer)].get();
      if (!kernel || (backward && !im.costs[static_cast<std::size_t>(layer)].backward_active))
        continue;
      workspace[static_cast<std::size_t>(s)].fixed = kernel->workspaceBytes(backward);
      any = any || workspace[static_cast<std::size_t>(s)].fixed > 0;
    }
    if (any) m_gmap = buildGmap(net, im.costs, swapped, recomputeSet(net, options), &workspace);
    for (int i = 0; i < layers; ++i) {
      const LayerKernel* kernel = im.kernels[static_cast<std::size_t>(i)].get();
      if (m_gmap.recomputed[static_cast<std::size_t>(i)] && kernel &&
          kernel->workspaceBytes(false) > 0) {
        throwBadInput("the feature map of '" + net.layer(i).name +
                      "' cannot be recomputed on this device: its forward kernel needs a " +
                      "workspace, which backward steps do not hold");
      }
    }
  }
}

void SwapExecutor::placeBuffers(std::int64_t budget, std::int64_t peak) {
  Impl& im = *m_impl;
  const Network& net = im.net;
  const Device& device = m_device;
  const PoolPadding padding = device.poolPadding();
  for (const GmapOp& op : m_gmap.ops) {
    if (op.step == 0) im.setup.push_back(op);
  }
  PoolPlacement p = placePool(m_gmap, im.poolGmap, m_curve, im.passSamples, budget, peak,
                              {device.poolAlignment(), padding}, im.options.move_prefetches);
  if (!p.placed()) {
    const std::int64_t minAlign = std::max<std::int64_t>(kFloatBytes, padding.buffer);
    const std::vector<int> moves = p.movable > 0 ? p.move_to : std::vector<int>{};
    // What placed ahead would need: every delay-0 placement in full (a budget of 0).
    const std::int64_t bestExtent =
        placeAhead(im.poolGmap, moves, im.passSamples, 0, 0, {device.poolAlignment(), minAlign},
                   padding.workspace)
            .best_extent;
    const RunTimeFailure& failure = *p.failure;
    throw PlanDoesNotFit(
        "the plan's peak of " + formatBytes(peak) + " fits the budget of " + formatBytes(budget) +
            ", but its buffers do not pack into the pool: placed ahead they need " +
            formatBytes(bestExtent) + " (" + std::to_string(bestExtent - budget) +
            " bytes short, alignment and fragmentation); placed at run time, at " +
            describeStep(net, m_gmap, failure.step) + " '" + m_gmap.buffers[failure.buffer].name +
            "' needs " + formatBytes(failure.bytes) + " and the largest free block is " +
            formatBytes(failure.largest_free),
        bestExtent - budget, failure.step);
  }
  im.schedule = iterationSchedule(m_gmap, p.move_to, p.moved);
  m_prefetchesMoved = p.moved ? p.movable : 0;
  m_plannedReuseDelay = p.planned_delay;
  m_reuseDelay = p.delay;
  im.offsets = std::move(p.offsets);
  im.alloc = PoolAllocator(budget, p.alignment);
  im.wsAlignment = padding.workspace;
}

void SwapExecutor::reserveMemory(const SwapSet& swapped, std::int64_t batch, std::int64_t budget) {
  Impl& im = *m_impl;
  const Network& net = im.net;
  const ExecutorOptions& options = im.options;
  const int layers = net.size();
  Device& device = m_device;
  im.blocks.assign(m_gmap.buffers.size(), std::nullopt);
  im.lastUse.assign(m_gmap.buffers.size(), Fence{});
  im.pending.assign(m_gmap.buffers.size(), Fence{});
  im.offloadSeq.assign(m_gmap.buffers.size(), 0);
  // The pool first (device memory is the scarcer), then host memory and the persistent buffers
  // with their initial values. A failure after the pool is reserved releases it again.
  im.pool = device.reservePool(budget);
  try {
    std::vector<std::int64_t> hostOffset(m_gmap.buffers.size(), -1);
    std::int64_t arenaBytes = 0;
    for (std::size_t b = 0; b < m_gmap.buffers.size(); ++b) {
      const GmapBuffer& buf = m_gmap.buffers[b];
      if (buf.kind == BufferKind::FeatureMap && buf.layer != net.inputLayer() &&
          swapped[static_cast<std::size_t>(buf.layer)]) {
        hostOffset[b] = arenaBytes;  // FM sizes are whole floats: every offset stays aligned
        arenaBytes += buf.size.at(im.passSamples);
      }
    }
    im.hostArena = device.allocateHost(arenaBytes);
    im.hostStore.assign(m_gmap.buffers.size(), nullptr);
    for (std::size_t b = 0; b < hostOffset.size(); ++b) {
      if (hostOffset[b] >= 0) im.hostStore[b] = im.hostArena.get() + hostOffset[b];
    }
    // The whole minibatch is staged, each pass reading its own samples; one loss per pass.
    im.hostScalars =
        device.allocateHost(std::max<std::int64_t>(64, options.sub_batches * kFloatBytes));
    im.hostLogits = device.allocateHost(batch * net.classes() * kFloatBytes);
    im.hostImages = device.allocateHost(batch * net.sampleShape().numel() * kFloatBytes);
    im.hostLabels = device.allocateHost(batch * kLabelBytes);

    for (const GmapOp& op : im.setup)
      im.allocate(op.buffer, 0);
    std::vector<std::vector<float>> w, r;
    for (int i = 0; i < layers; ++i) {
      if (im.weights[i] >= 0) w.push_back(initialWeights(net, i, options.seed));
      if (im.runningStats[i] >= 0) r.push_back(initialRunningStats(net, i));
    }
    writeWeights(w, r);
  } catch (...) {
    try {
      device.synchronize();
    } catch (...) {
      // The first failure is the one reported.
    }
    device.releasePool();
    throw;
  }
}

SwapExecutor::~SwapExecutor() {
  try {
    m_device.synchronize();
  } catch (...) {
    // The run already failed and reported it; the pool goes away regardless.
  }
  m_device.releasePool();
}

const Network& SwapExecutor::network() const {
  return m_impl->net;
}

const PoolStats& SwapExecutor::poolStats() const {
  return m_impl->alloc.stats();
}

std::vector<KernelChoice> SwapExecutor::kernelChoices() const {
  std::vector<KernelChoice> out;
  for (std::size_t i = 0; i < m_impl->kernels.size(); ++i) {
    const LayerKernel* kernel = m_impl->kernels[i].get();
    if (!kernel) continue;
    KernelChoice c{
        .layer = static_cast<int>(i),
        .algorithms = kernel->algorithms(),
        .forward_workspace = kernel->workspaceBytes(false),
        .backward_workspace = m_impl->costs[i].backward_active ? kernel->workspaceBytes(true) : 0};
    if (!c.algorithms.empty() || c.forward_workspace > 0 || c.backward_workspace > 0)
      out.push_back(std::move(c));
  }
  return out;
}

void SwapExecutor::writeWeights(const std::vector<std::vector<float>>& weights,
                                const std::vector<std::vector<float>>& running_stats) {
  Impl& im = *m_impl;
  // Check every tensor first, so that no copy is queued from data a failed call hands back.
  struct Put {
    int buffer;
    const std::vector<float>* values;
    int zero;  // momentum restarts from zero with new weights
  };
  std::vector<Put> puts;
  std::size_t wi = 0, ri = 0;
  for (int i = 0; i < im.net.size(); ++i) {
    if (im.weights[i] >= 0) {
      if (wi >= weights.size()) throwBadInput("too few weight tensors for the network");
      puts.push_back({im.weights[i], &weights[wi++], im.momentum[i]});
    }
    if (im.runningStats[i] >= 0) {
      if (ri >= running_stats.size()) throwBadInput("too few running-stat tensors for the network");
      puts.push_back({im.runningStats[i], &running_stats[ri++], -1});
    }
  }
  for (const Put& p : puts) {
    const std::int64_t bytes = im.bytesOf(p.buffer);
    if (static_cast<std::int64_t>(p.values->size()) * kFloatBytes != bytes) {
      throwBadInput("'" + m_gmap.buffers[p.buffer].name + "' holds " +
                    std::to_string(bytes / kFloatBytes) + " values, not " +
                    std::to_string(p.values->size()));
    }
  }
  for (const Put& p : puts) {
    const std::int64_t bytes = im.bytesOf(p.buffer);
    const auto seq = m_device.copy(StreamKind::Compute, im.ptr(p.buffer), p.values->data(), bytes,
                                   im.lastUse[p.buffer], {TaskKind::Readback, 0, p.buffer, bytes});
    im.use(p.buffer, StreamKind::Compute, seq);
    if (p.zero >= 0) {
      const auto zseq =
          m_device.submit(StreamKind::Compute, im.lastUse[p.zero],
                          [this, q = im.ptr(p.zero), bytes] { m_device.fillZero(q, bytes); },
                          {TaskKind::Update, 0, p.zero, 0});
      im.use(p.zero, StreamKind::Compute, zseq);
    }
  }
  m_device.synchronize();  // the caller's vectors may go away after the call
}

std::vector<std::vector<float>> SwapExecutor::readBuffers(const std::vector<int>& perLayer) {
  Impl& im = *m_impl;
  std::vector<std::vector<float>> out;
  for (const int b : perLayer) {
    if (b < 0) continue;
    out.emplace_back(static_cast<std::size_t>(im.bytesOf(b) / kFloatBytes));
  }
  std::size_t i = 0;  // copies are queued once `out` no longer moves
  for (const int b : perLayer) {
    if (b < 0) continue;
    m_device.copy(StreamKind::Compute, out[i++].data(), im.ptr(b), im.bytesOf(b), im.lastUse[b],
                  {TaskKind::Readback, 0, b, im.bytesOf(b)});
  }
  m_device.synchronize();
  return out;
}

std::vector<std::vector<float>> SwapExecutor::readWeights() {
  return readBuffers(m_impl->weights);
}

std::vector<std::vector<float>> SwapExecutor::readRunningStats() {
  return readBuffers(m_impl->runningStats);
}

void SwapExecutor::Impl::offload(const GmapOp& op, IterationRun& run) {
  const int b = op.buffer;
  const std::int64_t bytes = bytesOf(b);
  Fence wait = pending[b];
  wait[0] = std::max(wait[0], lastUse[b][0]);
  const auto seq = device.copy(StreamKind::SwapOut, hostStore[b], ptr(b), bytes, wait,
                               {TaskKind::Offload, op.step, b, bytes, static_cast<int>(run.pass)});
  use(b, StreamKind::SwapOut, seq);
  offloadSeq[b] = seq;
  run.rec.offload_bytes += bytes;
}

void SwapExecutor::Impl::prefetch(const GmapOp& op, IterationRun& run) {
  const int b = op.buffer;
  const int input = net.inputLayer();
  const std::int64_t bytes = bytesOf(b);
  const void* src = nullptr;
  Fence wait = pending[b];
  if (b == labels) {
    src = hostLabels.get() + run.pass * bytes;
    run.rec.load_bytes += bytes;
  } else if (b == fm[input]) {
    src = hostImages.get() + run.pass * bytes;
    if (op.step == 1) {
      run.rec.load_bytes += bytes;
    } else {
      run.rec.prefetch_bytes += bytes;
    }
  } else {
    src = hostStore[b];
    wait[1] = std::max(wait[1], offloadSeq[b]);
    run.rec.prefetch_bytes += bytes;
  }
  const auto seq = device.copy(StreamKind::SwapIn, ptr(b), src, bytes, wait,
                               {TaskKind::Prefetch, op.step, b, bytes, static_cast<int>(run.pass)});
  use(b, StreamKind::SwapIn, seq);
}

void SwapExecutor::Impl::recompute(const GmapOp& op, IterationRun& run) {
  const int b = op.buffer;
  // The layer's forward kernel again, on the inputs it had in forward (resident now):
  // batch norm leaves its running statistics alone, dropout draws the same mask.
  const int layer = gmapRef->buffers[static_cast<std::size_t>(b)].layer;
  KernelArgs a = forwardArgs(layer, run.iteration, run.pass);
  a.recompute = true;
  std::vector<int> touched{b, saved[layer]};
  for (int src : net.inputsOf(layer))
    touched.push_back(fm[src]);
  Fence wait{};
  for (int t : touched) {
    if (t < 0) continue;
    wait[2] = std::max(wait[2], lastUse[t][2]);
    wait = fenceMax(wait, pending[t]);
  }
  LayerKernel* kernel = kernels[layer].get();
  const auto seq = device.submit(StreamKind::Compute, wait,
                                 [kernel, a = std::move(a), outcome = run.outcome] {
                                   if (!outcome->abandoned()) kernel->forward(a);
                                 },
                                 {TaskKind::Recompute, op.step, b, 0, static_cast<int>(run.pass)});
  run.lastCompute = seq;
  for (int t : touched)
    use(t, StreamKind::Compute, seq);
  for (int p : {weights[layer], runningStats[layer]})
    use(p, StreamKind::Compute, seq);
}

void SwapExecutor::Impl::compute(const GmapOp& op, IterationRun& run) {
  const int s = op.step;
  const int layer = gmapRef->step_layer[s];
  const bool backward = gmapRef->isBackwardStep(s);
  const Layer& l = net.layer(layer);
  const LayerCost& cost = costs[layer];
  const auto& inputs = net.inputsOf(layer);
  KernelArgs a = forwardArgs(layer, run.iteration, run.pass);
  a.weight_grad = ptr(weightGrad[layer]);
  a.accumulate_weight_grad = run.pass > 0;  // the passes after the first add to the gradient
  if (backward) {
    a.out_grad = ptr(grad[layer]);
    for (int src : inputs) {
      const int g = grad[src];
      a.in_grad.push_back(cost.backward_active ? ptr(g) : nullptr);
      a.accumulate.push_back(g >= 0 && run.gradWritten[src]);
      if (g >= 0 && cost.backward_active) run.gradWritten[src] = true;
    }
  }
  Fence wait{};
  for (int t : gmapRef->step_touches[s]) {
    wait[2] = std::max(wait[2], lastUse[t][2]);
    wait = fenceMax(wait, pending[t]);
  }
  const int ws = workspaceAt[static_cast<std::size_t>(s)];
  if (ws >= 0) {
    a.workspace = ptr(ws);
    wait = fenceMax(wait, pending[ws]);
  }
  LayerKernel* kernel = kernels[layer].get();
  const bool active = !backward || cost.backward_active;
  // A cancelled iteration's queued steps skip their kernels: it ends within a step.
  const auto seq =
      device.submit(StreamKind::Compute, wait,
                    [kernel, a = std::move(a), backward, active, outcome = run.outcome] {
                      if (!active || outcome->abandoned()) return;
                      if (backward) {
                        kernel->backward(a);
                      } else {
                        kernel->forward(a);
                      }
                    },
                    {TaskKind::Compute, s, -1, 0, static_cast<int>(run.pass)});
  run.lastCompute = seq;
  run.timings.step_wait[run.rec.passStep(static_cast<int>(run.pass), s)] = wait;
  run.timings.in_use.emplace_back(seq, alloc.stats().in_use);
  for (int t : gmapRef->step_touches[s])
    use(t, StreamKind::Compute, seq);
  use(ws, StreamKind::Compute, seq);
  for (int p : {weights[layer], weightGrad[layer], runningStats[layer]})
    use(p, StreamKind::Compute, seq);
  if (!backward && l.kind == LayerKind::SoftmaxCrossEntropy) {
    const auto rseq =
        device.copy(StreamKind::Compute, run.lossHost + run.pass, ptr(fm[layer]), kFloatBytes, {},
                    {TaskKind::Readback, s, fm[layer], kFloatBytes, static_cast<int>(run.pass)});
    use(fm[layer], StreamKind::Compute, rseq);
    run.lastCompute = rseq;
  }
}

void SwapExecutor::Impl::update(const SgdConfig& sgd, IterationRun& run) {
  std::vector<SgdArgs> update;
  std::vector<int> updated;  // the layers with weights
  for (int i = 0; i < net.size() && !run.outcome->isAbandoned(); ++i) {
    if (weights[i] < 0) continue;
    update.push_back({.weights = ptr(weights[i]),
                      .grad = ptr(weightGrad[i]),
                      .momentum = ptr(momentum[i]),
                      .count = bytesOf(weights[i]) / kFloatBytes,
                      .lr = sgd.lr,
                      .momentum_factor = sgd.momentum,
                      .weight_decay = sgd.weight_decay});
    updated.push_back(i);
  }
  const int lastPass = static_cast<int>(options.sub_batches - 1);
  const int n = gmapRef->forward_steps;
  if (options.multi_tensor_update && !update.empty()) {
    const auto seq = device.submit(StreamKind::Compute, {},
                                   [&dev = device, update, outcome = run.outcome] {
                                     if (outcome->committed()) dev.sgdSteps(update);
                                   },
                                   {TaskKind::Update, 2 * n + 1, -1, 0, lastPass});
    for (const int i : updated) {
      for (int p : {weights[i], weightGrad[i], momentum[i]})
        use(p, StreamKind::Compute, seq);
    }
  } else {
    for (std::size_t u = 0; u < update.size(); ++u) {
      const int i = updated[u];
      const SgdArgs s = update[u];
      const auto seq = device.submit(StreamKind::Compute, {},
                                     [&dev = device, s, outcome = run.outcome] {
                                       if (outcome->committed()) dev.sgdStep(s);
                                     },
                                     {TaskKind::Update, 2 * n + 1, weights[i], 0, lastPass});
      for (int p : {weights[i], weightGrad[i], momentum[i]})
        use(p, StreamKind::Compute, seq);
    }
  }
}

IterationRecord SwapExecutor::trainIteration(const float* images, const std::int32_t* labels,
                                             std::uint64_t iteration, const SgdConfig& sgd,
                                             const std::atomic<bool>* cancel) {
  // Whether the iteration was abandoned (its queued kernels skip their work) or committed to
  // its update, decided once by the first task to see a cancel, or by the update.
  const auto outcome = std::make_shared<IterationOutcome>(cancel);
  Impl& im = *m_impl;
  const Network& net = im.net;
  const int n = m_gmap.forward_steps;
  m_device.takeTimings();  // drop what earlier calls left
  const std::int64_t passes = im.options.sub_batches;
  IterationRecord rec;
  rec.sub_batches = static_cast<int>(passes);
  rec.stall_ns.assign(static_cast<std::size_t>(2 * n + 1), 0);
  rec.pass_stall_ns.assign(static_cast<std::size_t>(passes * (2 * n + 1)), 0);
  rec.start_ns = m_device.nowNs();
  const int input = net.inputLayer();
  // The minibatch goes through (page-locked) staging memory, so that its copies run asynchronously
  // and never read the caller's memory after the call.
  const std::int64_t sampleBytes = net.sampleShape().numel() * std::int64_t{sizeof(float)};
  convertImages(m_device.imageLayout(), net.sampleShape(),
                im.bytesOf(im.fm[input]) / sampleBytes * passes, images,
                reinterpret_cast<float*>(im.hostImages.get()), true);
  std::memcpy(im.hostLabels.get(), labels,
              static_cast<std::size_t>(im.bytesOf(im.labels) * passes));

  IterationRun run{.rec = rec,
                   .outcome = outcome,
                   .iteration = iteration,
                   .pass = 0,
                   .lossHost = reinterpret_cast<float*>(im.hostScalars.get()),
                   .gradWritten = {},
                   .lastCompute = 0,
                   .timings = {}};
  run.gradWritten.assign(static_cast<std::size_t>(net.size()), false);
  run.timings.step_wait.assign(rec.pass_stall_ns.size(), Fence{});  // per pass and step: t_ready

  // Each pass runs the GMAP on its k/S samples (one pass without sub-batches) at the same
  // planned offsets; the weight gradients accumulate over the passes. Pass p is submitted once
  // pass p - 2 has computed: the compute stream always has the next pass queued, and a cancel
  // is seen between passes rather than after thousands of them were queued.
  std::vector<std::uint64_t> passEnd;  // per pass: its last compute-stream task
  for (std::int64_t pass = 0; pass < passes; ++pass) {
    if (pass >= 2) {
      Fence done{};
      done[static_cast<int>(StreamKind::Compute)] = passEnd[static_cast<std::size_t>(pass - 2)];
      m_device.hostWait(done);
    }
    if (outcome->abandoned()) break;
    im.nextAlloc = im.setup.size();
    run.gradWritten.assign(run.gradWritten.size(), false);
    run.pass = pass;
    for (const GmapOp& op : im.schedule) {
      switch (op.kind) {
        case GmapOpKind::Allocate:
          im.allocate(op.buffer, op.step);
          break;
        case GmapOpKind::Release:
          im.release(op.buffer);
          break;
        case GmapOpKind::Offload:
          im.offload(op, run);
          break;
        case GmapOpKind::Prefetch:
          im.prefetch(op, run);
          break;
        case GmapOpKind::Recompute:
          im.recompute(op, run);
          break;
        case GmapOpKind::Compute:
          im.compute(op, run);
          break;
      }
    }
    passEnd.push_back(run.lastCompute);
  }

  // The SGD update, on the compute stream after the last backward step: one task per layer with
  // weights, or one task for all of them. None for an iteration abandoned before it, whose
  // gradients are not the minibatch's. Once the update has begun, the iteration runs to its end:
  // the weights are a whole iteration's or untouched.
  im.update(sgd, run);
  m_device.synchronize();
  rec.cancelled = outcome->isAbandoned();
  // The end of the iteration's work, before the device collected its tasks' timings.
  const std::int64_t end = m_device.drainedNs();
  rec.duration_ns = end - rec.start_ns;
  // Each pass's loss is its share of the minibatch's mean (KernelArgs::loss_samples).
  rec.loss = run.lossHost[0];
  for (std::int64_t pass = 1; pass < passes; ++pass)
    rec.loss += run.lossHost[pass];
  if (im.alloc.stats().live_blocks != static_cast<std::int64_t>(im.setup.size())) {
    std::string live;
    for (std::size_t b = 0; b < im.blocks.size(); ++b) {
      if (im.blocks[b] && !isPersistent(m_gmap.buffers[b].kind))
        live += " '" + m_gmap.buffers[b].name + "'";
    }
    throw Error(ErrorKind::Runtime,
                "the iteration left buffers allocated (a broken schedule):" + live);
  }

  run.timings.tasks = m_device.takeTimings();
  run.timings.in_use_at_end = im.alloc.stats().in_use;
  fillTimeline(rec, n, std::move(run.timings));
  return rec;
}

std::int64_t SwapExecutor::subBatches() const {
  return m_impl->options.sub_batches;
}

std::int64_t SwapExecutor::passSamples() const {
  return m_impl->passSamples;
}

double overlapWithCompute(const IterationRecord& rec, TaskKind kind) {
  std::vector<std::pair<std::int64_t, std::int64_t>> busy;
  for (const TimelineOp& op : rec.ops) {
    if (op.stream == StreamKind::Compute) busy.emplace_back(op.start_ns, op.end_ns);
  }
  std::sort(busy.begin(), busy.end());
  std::int64_t total = 0, hidden = 0;
  for (const TimelineOp& op : rec.ops) {
    if (op.kind != kind || op.stream == StreamKind::Compute) continue;
    total += op.end_ns - op.start_ns;
    for (const auto& [lo, hi] : busy) {
      if (lo >= op.end_ns) break;
      hidden += std::max<std::int64_t>(0, std::min(hi, op.end_ns) - std::max(lo, op.start_ns));
    }
  }
  return total > 0 ? static_cast<double>(hidden) / static_cast<double>(total) : 0.0;
}

EvalBatch SwapExecutor::evaluate(const float* images, const std::int32_t* labels,
                                 std::int64_t count) {
  if (count < 1 || count > m_k) {
    throwBadInput("evaluate: " + std::to_string(count) + " samples for a minibatch of " +
                  std::to_string(m_k));
  }
  // One pass of k/S samples at a time (one pass without sub-batches); the last real sample may
  // end before the last pass, and later passes are padding.
  const std::int64_t pass = passSamples();
  const std::int64_t sampleElems = m_impl->net.sampleShape().numel();
  EvalBatch out;
  for (std::int64_t first = 0; first < count; first += pass) {
    const EvalBatch b =
        evaluatePass(images + first * sampleElems, labels + first, std::min(pass, count - first));
    out.correct += b.correct;
    out.loss_sum += b.loss_sum;
  }
  return out;
}

EvalBatch SwapExecutor::evaluatePass(const float* images, const std::int32_t* labels,
                                     std::int64_t count) {
  Impl& im = *m_impl;
  const Network& net = im.net;
  const int loss = net.lossLayer();
  const int logits = net.inputsOf(loss).at(0);
  const int n = m_gmap.forward_steps;
  // The last forward reader of every FM, the loss excluded.
  std::vector<int> lastReader(static_cast<std::size_t>(net.size()), 0);
  for (int s = 1; s <= n; ++s) {
    const int layer = m_gmap.step_layer[s];
    if (layer == loss) continue;
    for (int src : net.inputsOf(layer))
      lastReader[src] = s;
  }
  const int input = net.inputLayer();
  im.allocate(im.fm[input], 1, false);
  {
    const std::int64_t bytes = im.bytesOf(im.fm[input]);
    convertImages(m_device.imageLayout(), net.sampleShape(),
                  bytes / (net.sampleShape().numel() * std::int64_t{sizeof(float)}), images,
                  reinterpret_cast<float*>(im.hostImages.get()), true);
    const auto seq =
        m_device.copy(StreamKind::SwapIn, im.ptr(im.fm[input]), im.hostImages.get(), bytes,
                      im.pending[im.fm[input]], {TaskKind::Prefetch, 1, im.fm[input], bytes});
    im.use(im.fm[input], StreamKind::SwapIn, seq);
  }
  for (int s = 1; s <= n; ++s) {
    const int layer = m_gmap.step_layer[s];
    if (layer == loss) continue;
    im.allocate(im.fm[layer], s, false);
    KernelArgs a;
    Fence wait{};
    for (int src : net.inputsOf(layer)) {
      a.in.push_back(im.ptr(im.fm[src]));
      wait = fenceMax(wait, im.lastUse[im.fm[src]]);
    }
    wait = fenceMax(wait, im.pending[im.fm[layer]]);
    a.out = im.ptr(im.fm[layer]);
    a.weights = im.ptr(im.weights[layer]);
    a.running_stats = im.ptr(im.runningStats[layer]);
    a.training = false;
    const int ws = im.workspaceAt[static_cast<std::size_t>(s)];
    if (ws >= 0) {
      im.allocate(ws, s, false);
      a.workspace = im.ptr(ws);
      wait = fenceMax(wait, im.pending[ws]);
    }
    LayerKernel* kernel = im.kernels[layer].get();
    const auto seq = m_device.submit(StreamKind::Compute, wait,
                                     [kernel, a = std::move(a)] { kernel->forward(a); },
                                     {TaskKind::Compute, s, -1, 0});
    im.use(im.fm[layer], StreamKind::Compute, seq);
    if (ws >= 0) {
      im.use(ws, StreamKind::Compute, seq);
      im.release(ws);
    }
    for (int src : net.inputsOf(layer))
      im.use(im.fm[src], StreamKind::Compute, seq);
    if (layer == logits) {
      const std::int64_t bytes = im.bytesOf(im.fm[layer]);
      const auto rseq =
          m_device.copy(StreamKind::Compute, im.hostLogits.get(), im.ptr(im.fm[layer]), bytes, {},
                        {TaskKind::Readback, s, im.fm[layer], bytes});
      im.use(im.fm[layer], StreamKind::Compute, rseq);
      im.release(im.fm[layer]);
    }
    for (int src : net.inputsOf(layer)) {
      if (lastReader[src] == s && im.blocks[im.fm[src]]) im.release(im.fm[src]);
    }
  }
  m_device.synchronize();
  m_device.takeTimings();

  EvalBatch out;
  const std::int64_t classes = net.classes();
  const float* z = reinterpret_cast<const float*>(im.hostLogits.get());
  for (std::int64_t i = 0; i < count; ++i) {
    const float* row = z + i * classes;
    const std::int64_t best = std::max_element(row, row + classes) - row;
    const std::int32_t y = labels[i];
    if (y < 0 || y >= classes) {
      throwBadInput("label " + std::to_string(y) + " of test sample " + std::to_string(i) +
                    " is outside the " + std::to_string(classes) + " classes");
    }
    if (best == y) ++out.correct;
    const float m = row[best];
    double sum = 0;
    for (std::int64_t c = 0; c < classes; ++c)
      sum += std::exp(static_cast<double>(row[c] - m));
    out.loss_sum += std::log(sum) + m - row[y];
  }
  return out;
}

}  // namespace swapscope::rt
