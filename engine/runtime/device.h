// SPDX-License-Identifier: MIT
/// @brief The device interface every backend implements: one budget-sized pool, host memory for
/// swapped feature maps, three streams with ordered tasks and cross-stream waits, and the layer
/// kernels. The swap executor and the trainer are written against this interface only.
///
/// A stream runs its tasks in submission order. submit() returns the task's sequence number on
/// its stream (1, 2, ...). A task waits for a Fence (per stream, a sequence number that must have
/// completed) before it starts. On the CPU backend a stream is a worker thread with a FIFO queue;
/// on the CUDA backend it is a CUDA stream, and a task's work enqueues kernels or copies on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/gmap.h"
#include "analysis/layer_cost.h"
#include "analysis/pool_allocator.h"
#include "graph/network.h"
#include "runtime/image_layout.h"
#include "runtime/kernel.h"

namespace swapscope::rt {

enum class StreamKind : int { Compute = 0, SwapOut = 1, SwapIn = 2 };
std::string_view streamName(StreamKind s);

/// What a task is, for the timeline. Recompute: a layer's forward kernel run again in a backward
/// step to re-make a recomputed FM (its `buffer`), beside the step's own Compute task.
enum class TaskKind { Compute, Offload, Prefetch, Update, Readback, Recompute };
std::string_view taskKindName(TaskKind k);

struct TaskTag {
  TaskKind kind = TaskKind::Compute;
  int step = 0;            ///< GMAP step (the SGD update uses 2N+1)
  int buffer = -1;         ///< GMAP buffer of a copy, -1 otherwise
  std::int64_t bytes = 0;  ///< bytes a copy moves
  int sub_batch = 0;       ///< the pass of a minibatch run in sub-batches (0 without)
};

/// When a task ran, in nanoseconds of the device's clock (see Device::nowNs).
struct TaskTiming {
  StreamKind stream = StreamKind::Compute;
  std::uint64_t seq = 0;
  TaskTag tag;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

struct SgdArgs {
  float* weights = nullptr;
  const float* grad = nullptr;
  float* momentum = nullptr;
  std::int64_t count = 0;
  float lr = 0, momentum_factor = 0, weight_decay = 0;
};

/// Called on the thread that submits a task, around the enqueueing of its work (CUDA backend) or
/// around the work itself (CPU backend): collectors use it to tag what the task launches.
class TaskObserver {
 public:
  virtual ~TaskObserver() = default;
  virtual void taskBegin(StreamKind stream, const TaskTag& tag) = 0;
  virtual void taskEnd(StreamKind stream, const TaskTag& tag) = 0;
};

/// How the CUDA backend picks a convolution algorithm per layer and pass (as in vDNN):
/// performance-optimal takes cuDNN's fastest by its heuristics whose workspace is at most
/// `workspace_limit`; memory-optimal takes the one with the least workspace.
enum class ConvAlgoPolicy { Performance, Memory };
std::string_view convAlgoPolicyName(ConvAlgoPolicy p);
/// fp32: plain single precision everywhere; tf32: tensor cores may round inputs to TF32 in
/// convolutions and matrix products (Ampere and newer).
enum class MathMode { Fp32, Tf32 };
std::string_view mathModeName(MathMode m);

struct DeviceOptions {
  ConvAlgoPolicy conv_algo = ConvAlgoPolicy::Performance;
  /// Only deterministic algorithms, chosen without timing, so that runs (and swap sets) give
  /// bit-identical results. The CPU backend is deterministic regardless.
  bool deterministic = false;
  MathMode math = MathMode::Fp32;
  std::int64_t workspace_limit = std::int64_t{256} << 20;  ///< bytes, per convolution pass
  /// Device memory left free beside the pool, for what allocates outside it (lazily loaded
  /// kernel modules, cuDNN's internals): a budget above free memory less this is refused.
  std::int64_t device_headroom = std::int64_t{1} << 30;
  /// The CPU backend's order of image FMs in the pool (docs/runtime.md, "The CPU backend"):
  /// NHWC, where oneDNN's fast kernels run, or NCHW, the plain order kept to compare against.
  ImageLayout cpu_layout = ImageLayout::Nhwc;
};

/// The device-memory check of a pool in device memory, before anything is allocated:
/// Error(BadInput) when `budget` exceeds `free` less `headroom`, naming the device, the budget,
/// the free and total memory and the headroom in bytes. `free` <= 0 means unknown: no check.
void checkDeviceBudget(const std::string& device, std::int64_t free, std::int64_t total,
                       std::int64_t headroom, std::int64_t budget);

/// The shape of a backend's pool: the alignment of its start and blocks, and how it pads its
/// buffers.
struct PoolShape {
  std::int64_t alignment = 1;
  PoolPadding padding;
};
/// The CUDA backend's pool: cudaMalloc's 256-byte alignment, buffers padded to 16 bytes and
/// kernel workspaces to 256.
inline constexpr PoolShape kCudaPoolShape{256, {16, 256}};

/// Memory the host can read and write; page-locked on the CUDA backend.
struct HostMemoryDeleter {
  std::function<void(std::byte*)> free;
  void operator()(std::byte* p) const {
    if (p) free(p);
  }
};
using HostMemory = std::unique_ptr<std::byte[], HostMemoryDeleter>;

class Device {
 public:
  virtual ~Device() = default;
  Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  virtual std::string backendName() const = 0;  ///< "cpu", "cuda"
  virtual std::string deviceName() const = 0;   ///< "cpu:0 (Intel Xeon ..., 2 threads)"
  /// Bytes of memory the device has (the budget cannot exceed it), or 0 when unknown.
  virtual std::int64_t totalMemory() const = 0;

  /// Reserves the pool once: `bytes` of device memory, aligned to `poolAlignment()`. Throws
  /// Error(Runtime) when the device cannot give that much.
  virtual std::byte* reservePool(std::int64_t bytes) = 0;
  /// Frees the pool; the device can then reserve a new one. Call only when the streams are idle.
  virtual void releasePool() = 0;
  virtual std::int64_t poolAlignment() const = 0;
  /// How the pool pads buffers (see PoolPadding): never below what the backend's kernels need.
  /// Buffers are never placed below the padding's alignment, even where poolAlignment() does not
  /// fit the budget. The CPU backend needs none; the CUDA backend pads to 16 and 256 bytes.
  virtual PoolPadding poolPadding() const { return {}; }
  virtual HostMemory allocateHost(std::int64_t bytes) = 0;
  /// Whether the pool is host memory (the CPU backend), so that it counts against the host's.
  virtual bool poolInHostMemory() const { return false; }
  /// The order of the values of image FMs (the minibatch included) in the pool; whoever writes
  /// or reads them on the host converts with convertImages.
  virtual ImageLayout imageLayout() const { return ImageLayout::Nchw; }
  /// Bytes of device memory a pool can take now (the CUDA backend: the free memory), or 0 when
  /// unknown. The CPU backend's pool is checked against the host's memory instead.
  virtual std::int64_t freeMemory() const { return totalMemory(); }
  /// Host memory the backend has promised its kernels but not allocated yet; reservePool()
  /// allocates it, so that a run is checked before anything large is allocated.
  virtual std::int64_t pendingHostBytes() const { return 0; }

  /// Runs `work` on stream `s` after `waitFor`, in order with the stream's other tasks. Returns
  /// the task's sequence number. Work that throws fails the stream: synchronize() rethrows.
  virtual std::uint64_t submit(StreamKind s, const Fence& waitFor, std::function<void()> work,
                               const TaskTag& tag) = 0;
  /// Copies `bytes` on stream `s` (device<->host or device<->device), after `waitFor`.
  virtual std::uint64_t copy(StreamKind s, void* dst, const void* src, std::int64_t bytes,
                             const Fence& waitFor, const TaskTag& tag) = 0;
  /// Blocks the calling host thread until `fence` has completed (on events, never polling).
  virtual void hostWait(const Fence& fence) = 0;
  /// Waits for every stream to drain; rethrows the first failure of any task.
  virtual void synchronize() = 0;
  /// The device clock (nowNs) when the last synchronize() saw every stream drained, before it
  /// collected the tasks' timings: the end of the work, without the bookkeeping after it. The
  /// default, for a backend with nothing to do after the streams drain, is nowNs().
  virtual std::int64_t drainedNs() const { return nowNs(); }
  /// The timings of the tasks completed since the last call, in completion order per stream.
  virtual std::vector<TaskTiming> takeTimings() = 0;
  /// The device clock in nanoseconds; TaskTiming uses the same clock.
  virtual std::int64_t nowNs() const = 0;

  /// Forward and backward kernels of `layer` at `samples` samples: the executor's pass samples
  /// (the minibatch k, or k/S in S sub-batches). `costs` are the network's layer costs
  /// (computeLayerCosts): which inputs need a gradient decides a kernel's workspace.
  virtual std::unique_ptr<LayerKernel> createKernel(const Network& net,
                                                    const std::vector<LayerCost>& costs, int layer,
                                                    std::int64_t samples) = 0;
  /// Sets `bytes` at `dst` (device memory) to zero. Call from within a compute-stream task.
  virtual void fillZero(void* dst, std::int64_t bytes) = 0;
  /// One SGD step with momentum and weight decay, PyTorch's form: g += wd*w; v = mu*v + g;
  /// w -= lr*v. Call from within a compute-stream task.
  virtual void sgdStep(const SgdArgs& a) = 0;
  /// The SGD step of several tensors with one learning rate, momentum and weight decay. The
  /// CUDA backend updates them all in one kernel launch (runtime/multi_tensor_sgd.h); the
  /// default runs sgdStep on each in order. Call from within a compute-stream task.
  virtual void sgdSteps(const std::vector<SgdArgs>& tensors) {
    for (const SgdArgs& a : tensors)
      sgdStep(a);
  }
  /// Bytes the backend holds outside the pool (library scratch, handles): the "others" beside the
  /// pool.
  virtual std::int64_t otherBytes() const = 0;
  /// The libraries the backend computes with and their versions, e.g. {"oneDNN", "2.6.3"}.
  virtual std::vector<std::pair<std::string, std::string>> libraryVersions() const = 0;
  /// Whether allocateHost() gives page-locked memory that the device copies from directly.
  virtual bool hostMemoryPageLocked() const = 0;
  /// The options the device was opened with.
  virtual const DeviceOptions& options() const = 0;
  /// Installs (or, with nullptr, removes) the observer of task submission. Not owned.
  virtual void setTaskObserver(TaskObserver* observer) = 0;
};

/// The shape of `device`'s pool: poolAlignment() and poolPadding().
inline PoolShape poolShape(const Device& device) {
  return {device.poolAlignment(), device.poolPadding()};
}

struct BackendInfo {
  std::string name;        ///< "cpu", "cuda"
  bool available = false;  ///< usable in this process
  std::string detail;      ///< devices, or why it is not available
};
/// Every backend this build knows, with whether it can be used here.
std::vector<BackendInfo> listBackends();
/// Opens "cpu", "cpu:0", "cuda", "cuda:N". An unknown backend, a backend this build lacks, or a
/// device that is not there is Error(BadInput) with the reason and what is available.
/// `options` apply to the CUDA backend (the CPU backend keeps them for the record only).
std::unique_ptr<Device> openDevice(std::string_view spec, const DeviceOptions& options = {});

}  // namespace swapscope::rt
