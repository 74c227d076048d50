// SPDX-License-Identifier: MIT
#include "runtime/cuda/cuda_device.h"

#include <chrono>
#include <cstring>
#include <deque>
#include <exception>
#include <utility>

#include "common/bytes.h"
#include "common/error.h"
#include "runtime/cuda/check.h"
#include "runtime/cuda/cuda_context.h"
#include "runtime/cuda/handles.h"
#include "runtime/cuda/ops.h"
#include "runtime/multi_tensor_sgd.h"

namespace swapscope::rt {
namespace cuda {
namespace {

std::string versionString(int v, int majorDiv, int minorDiv, int patchMod) {
  return std::to_string(v / majorDiv) + "." + std::to_string((v % majorDiv) / minorDiv) + "." +
         std::to_string(v % patchMod);
}

/// One task of a stream: its events bracket the work it enqueued. The end event is what other
/// streams wait for; both give the task's timing once it completed.
struct Task {
  std::uint64_t seq = 0;
  TaskTag tag;
  Event start, end;
};

class CudaDevice final : public Device {
 public:
  CudaDevice(int index, const DeviceOptions& options) : m_index(index), m_epoch(Clock::now()) {
    m_ctx.options = options;
    SWAPSCOPE_CUDA_CHECK(cudaSetDevice(index));
    SWAPSCOPE_CUDA_CHECK(cudaGetDeviceProperties(&m_prop, index));
    SWAPSCOPE_CUDA_CHECK(cudaFree(nullptr));  // create the context now, not inside a step
    std::size_t freeBefore = 0, total = 0;
    SWAPSCOPE_CUDA_CHECK(cudaMemGetInfo(&freeBefore, &total));
    for (Stream& s : m_streams)
      s = makeStream();
    m_ctx.compute = m_streams[0].get();
    cudnnHandle_t dnn = nullptr;
    SWAPSCOPE_CUDNN_CHECK(cudnnCreate(&dnn));
    m_cudnn = CudnnHandle(dnn);
    SWAPSCOPE_CUDNN_CHECK(cudnnSetStream(dnn, m_ctx.compute));
    cublasHandle_t blas = nullptr;
    SWAPSCOPE_CUBLAS_CHECK(cublasCreate(&blas));
    m_cublas = CublasHandle(blas);
    SWAPSCOPE_CUBLAS_CHECK(cublasSetStream(blas, m_ctx.compute));
    // cuBLAS's workspace, of a fixed size allocated here and counted with the handles, so that
    // cuBLAS never allocates device memory behind the pool. After cublasSetStream, which resets
    // the workspace to cuBLAS's own.
    void* ws = nullptr;
    SWAPSCOPE_CUDA_CHECK(cudaMalloc(&ws, static_cast<std::size_t>(kCublasWorkspaceBytes)));
    m_cublasWorkspace = DeviceBuffer(ws);
    SWAPSCOPE_CUBLAS_CHECK(
        cublasSetWorkspace(blas, ws, static_cast<std::size_t>(kCublasWorkspaceBytes)));
    SWAPSCOPE_CUBLAS_CHECK(cublasSetMathMode(
        blas, options.math == MathMode::Tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
    m_ctx.cudnn = dnn;
    m_ctx.cublas = blas;
    std::size_t freeAfter = 0;
    SWAPSCOPE_CUDA_CHECK(cudaMemGetInfo(&freeAfter, &total));
    m_usedAtOpen = static_cast<std::int64_t>(total - freeBefore);
    m_handleBytes = static_cast<std::int64_t>(freeBefore) - static_cast<std::int64_t>(freeAfter);
    m_ref = makeEvent();
    calibrate();
  }

  ~CudaDevice() override {
    // Let enqueued work finish before the owners below free what it uses.
    for (Stream& s : m_streams)
      (void)cudaStreamSynchronize(s.get());
  }

  std::string backendName() const override { return "cuda"; }
  std::string deviceName() const override {
    return "cuda:" + std::to_string(m_index) + " (" + m_prop.name + ", sm_" +
           std::to_string(m_prop.major) + std::to_string(m_prop.minor) + ", " +
           std::to_string(m_prop.multiProcessorCount) + " SMs, " +
           formatBytes(static_cast<std::int64_t>(m_prop.totalGlobalMem)) + ")";
  }
  std::int64_t totalMemory() const override {
    return static_cast<std::int64_t>(m_prop.totalGlobalMem);
  }
  std::int64_t freeMemory() const override {
    select();
    std::size_t freeBytes = 0, total = 0;
    if (cudaMemGetInfo(&freeBytes, &total) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return static_cast<std::int64_t>(freeBytes);
  }
  std::vector<std::pair<std::string, std::string>> libraryVersions() const override {
    int runtime = 0, driver = 0, blasMajor = 0, blasMinor = 0, blasPatch = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    cublasGetProperty(MAJOR_VERSION, &blasMajor);
    cublasGetProperty(MINOR_VERSION, &blasMinor);
    cublasGetProperty(PATCH_LEVEL, &blasPatch);
    const auto dnn = static_cast<int>(cudnnGetVersion());
    return {{"CUDA runtime", versionString(runtime, 1000, 10, 10)},
            {"CUDA driver", versionString(driver, 1000, 10, 10)},
            {"cuDNN", versionString(dnn, 10000, 100, 100)},
            {"cuBLAS", std::to_string(blasMajor) + "." + std::to_string(blasMinor) + "." +
                           std::to_string(blasPatch)}};
  }
  bool hostMemoryPageLocked() const override { return true; }
  const DeviceOptions& options() const override { return m_ctx.options; }
  void setTaskObserver(TaskObserver* observer) override { m_observer = observer; }

  std::byte* reservePool(std::int64_t bytes) override {
    if (m_pool) throw Error(ErrorKind::Runtime, "the pool of this device is already reserved");
    select();
    std::size_t freeBytes = 0, total = 0;
    SWAPSCOPE_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &total));
    checkDeviceBudget(deviceName(), static_cast<std::int64_t>(freeBytes),
                      static_cast<std::int64_t>(total), m_ctx.options.device_headroom, bytes);
    void* p = nullptr;
    const cudaError_t status =
        cudaMalloc(&p, static_cast<std::size_t>(std::max<std::int64_t>(bytes, kAlignment)));
    if (status != cudaSuccess) {
      (void)cudaGetLastError();  // an allocation failure is not sticky
      throw Error(ErrorKind::Runtime, "cudaMalloc of a pool of " + formatBytes(bytes) +
                                          " failed: " + cudaGetErrorString(status));
    }
    m_pool = DeviceBuffer(p);
    m_poolBytes = bytes;
    return static_cast<std::byte*>(p);
  }
  void releasePool() override {
    select();
    m_pool.reset();
    m_poolBytes = 0;
  }
  std::int64_t poolAlignment() const override { return kAlignment; }
  /// cuDNN's and cuBLAS's kernel choice and correctness can depend on alignment: never below 16
  /// bytes (a float4), 256 for workspaces (cuBLAS's requirement for its workspace).
  PoolPadding poolPadding() const override { return kCudaPoolShape.padding; }

  HostMemory allocateHost(std::int64_t bytes) override {
    select();
    void* p = nullptr;
    if (bytes > 0) {
      const cudaError_t status =
          cudaHostAlloc(&p, static_cast<std::size_t>(bytes), cudaHostAllocDefault);
      if (status != cudaSuccess) {
        (void)cudaGetLastError();
        throw Error(ErrorKind::Runtime,
                    "cannot page-lock " + formatBytes(bytes) +
                        " of host memory (cudaHostAlloc: " + cudaGetErrorString(status) + ")");
      }
    }
    return HostMemory(static_cast<std::byte*>(p),
                      HostMemoryDeleter{[](std::byte* q) { (void)cudaFreeHost(q); }});
  }

  std::uint64_t submit(StreamKind s, const Fence& waitFor, std::function<void()> work,
                       const TaskTag& tag) override {
    Task& task = begin(s, waitFor, tag);
    if (!m_failure) {
      if (m_observer) m_observer->taskBegin(s, tag);
      try {
        work();
      } catch (...) {
        m_failure = std::current_exception();
      }
      if (m_observer) m_observer->taskEnd(s, tag);
    }
    return finish(s, task);
  }

  std::uint64_t copy(StreamKind s, void* dst, const void* src, std::int64_t bytes,
                     const Fence& waitFor, const TaskTag& tag) override {
    Task& task = begin(s, waitFor, tag);
    if (!m_failure && bytes > 0) {
      if (m_observer) m_observer->taskBegin(s, tag);
      const cudaError_t status =
          cudaMemcpyAsync(dst, src, static_cast<std::size_t>(bytes), cudaMemcpyDefault, stream(s));
      if (m_observer) m_observer->taskEnd(s, tag);
      if (status != cudaSuccess) {
        try {
          detail::throwCudaError(status, "cudaMemcpyAsync", __FILE__, __LINE__);
        } catch (...) {
          m_failure = std::current_exception();
        }
      }
    }
    return finish(s, task);
  }

  void hostWait(const Fence& fence) override {
    select();
    for (int t = 0; t < kStreamCount; ++t) {
      if (fence[t] <= m_completed[t]) continue;
      SWAPSCOPE_CUDA_CHECK(cudaEventSynchronize(eventOf(t, fence[t])));
    }
    harvest();
  }

  void synchronize() override {
    select();
    for (Stream& s : m_streams)
      SWAPSCOPE_CUDA_CHECK(cudaStreamSynchronize(s.get()));
    m_drainedNs = nowNs();
    harvest();
    calibrate();
    if (m_failure) std::rethrow_exception(std::exchange(m_failure, nullptr));
  }

  std::vector<TaskTiming> takeTimings() override {
    harvest();
    return std::exchange(m_timings, {});
  }

  std::int64_t nowNs() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - m_epoch).count();
  }

  std::unique_ptr<LayerKernel> createKernel(const Network& net, const std::vector<LayerCost>& costs,
                                            int layer, std::int64_t samples) override {
    select();
    return createCudaKernel(m_ctx, net, costs, layer, samples);
  }

  void fillZero(void* dst, std::int64_t bytes) override {
    SWAPSCOPE_CUDA_CHECK(cudaMemsetAsync(dst, 0, static_cast<std::size_t>(bytes), m_ctx.compute));
  }

  void sgdStep(const SgdArgs& a) override {
    ops::sgd(m_ctx.compute, a.weights, a.grad, a.momentum, a.count, a.lr, a.momentum_factor,
             a.weight_decay);
  }

  /// One launch for every tensor. The chunk table goes to device memory only when it changed
  /// (an executor's parameters keep their places, so once), after the compute stream has
  /// finished with the table before it.
  void sgdSteps(const std::vector<SgdArgs>& tensors) override {
    if (tensors.empty()) return;
    std::vector<SgdChunk> chunks = packSgdChunks(tensors);
    const std::size_t bytes = chunks.size() * sizeof(SgdChunk);
    if (chunks.size() != m_sgdTable.size() ||
        std::memcmp(chunks.data(), m_sgdTable.data(), bytes) != 0) {
      SWAPSCOPE_CUDA_CHECK(cudaStreamSynchronize(m_ctx.compute));
      if (chunks.size() > m_sgdTableCapacity) {
        m_sgdTableDevice.reset();
        void* p = nullptr;
        SWAPSCOPE_CUDA_CHECK(cudaMalloc(&p, bytes));
        m_sgdTableDevice = DeviceBuffer(p);
        m_sgdTableCapacity = chunks.size();
      }
      SWAPSCOPE_CUDA_CHECK(
          cudaMemcpy(m_sgdTableDevice.get(), chunks.data(), bytes, cudaMemcpyHostToDevice));
      m_sgdTable = std::move(chunks);
    }
    const SgdArgs& a = tensors.front();
    ops::sgdChunks(m_ctx.compute, static_cast<const SgdChunk*>(m_sgdTableDevice.get()),
                   static_cast<ops::i64>(m_sgdTable.size()), a.lr, a.momentum_factor,
                   a.weight_decay);
  }

  std::int64_t drainedNs() const override { return m_drainedNs; }

  /// Device memory this process took since the device was opened, beyond the pool: the library
  /// handles, cuBLAS's and cuDNN's lazily allocated scratch, loaded kernel modules. The CUDA
  /// context itself was created before and is not counted.
  std::int64_t otherBytes() const override {
    std::size_t freeBytes = 0, total = 0;
    if (cudaMemGetInfo(&freeBytes, &total) != cudaSuccess) return m_handleBytes;
    const std::int64_t used = static_cast<std::int64_t>(total - freeBytes);
    return std::max<std::int64_t>(m_handleBytes, used - m_usedAtOpen - m_poolBytes);
  }

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr std::int64_t kAlignment = kCudaPoolShape.alignment;  // cudaMalloc's own
  /// cuBLAS's recommended workspace on Hopper (4 MiB suffices before it).
  static constexpr std::int64_t kCublasWorkspaceBytes = std::int64_t{32} << 20;

  void select() const { SWAPSCOPE_CUDA_CHECK(cudaSetDevice(m_index)); }
  cudaStream_t stream(StreamKind s) const { return m_streams[static_cast<int>(s)].get(); }

  Event takeEvent() {
    if (m_freeEvents.empty()) return makeEvent();
    Event e = std::move(m_freeEvents.back());
    m_freeEvents.pop_back();
    return e;
  }

  /// The end event of task `seq` on stream `t`, which has not been harvested yet.
  cudaEvent_t eventOf(int t, std::uint64_t seq) const {
    const std::deque<Task>& q = m_pending[t];
    if (q.empty() || seq < q.front().seq || seq > q.back().seq) {
      throw Error(ErrorKind::Runtime, "a fence names task " + std::to_string(seq) + " of the " +
                                          std::string(streamName(static_cast<StreamKind>(t))) +
                                          " stream, which was never submitted");
    }
    return q[static_cast<std::size_t>(seq - q.front().seq)].end.get();
  }

  Task& begin(StreamKind s, const Fence& waitFor, const TaskTag& tag) {
    select();
    const int i = static_cast<int>(s);
    for (int t = 0; t < kStreamCount; ++t) {
      // A stream runs its own tasks in order; completed tasks need no wait.
      if (t == i || waitFor[t] <= m_completed[t]) continue;
      SWAPSCOPE_CUDA_CHECK(cudaStreamWaitEvent(stream(s), eventOf(t, waitFor[t]), 0));
    }
    Task task;
    task.seq = ++m_submitted[i];
    task.tag = tag;
    task.start = takeEvent();
    task.end = takeEvent();
    SWAPSCOPE_CUDA_CHECK(cudaEventRecord(task.start.get(), stream(s)));
    m_pending[i].push_back(std::move(task));
    return m_pending[i].back();
  }

  std::uint64_t finish(StreamKind s, Task& task) {
    SWAPSCOPE_CUDA_CHECK(cudaEventRecord(task.end.get(), stream(s)));
    return task.seq;
  }

  /// Moves completed tasks (in order, per stream) into m_timings and recycles their events.
  void harvest() {
    for (int t = 0; t < kStreamCount; ++t) {
      std::deque<Task>& q = m_pending[t];
      while (!q.empty()) {
        Task& task = q.front();
        const cudaError_t status = cudaEventQuery(task.end.get());
        if (status == cudaErrorNotReady) break;
        SWAPSCOPE_CUDA_CHECK(status);
        m_timings.push_back({static_cast<StreamKind>(t), task.seq, task.tag,
                             toDeviceClock(task.start.get()), toDeviceClock(task.end.get())});
        m_completed[t] = task.seq;
        m_freeEvents.push_back(std::move(task.start));
        m_freeEvents.push_back(std::move(task.end));
        q.pop_front();
      }
    }
  }

  /// Event times on the device clock (nowNs): the reference event was recorded on an idle
  /// device at host time m_refNs.
  std::int64_t toDeviceClock(cudaEvent_t e) const {
    float ms = 0;
    SWAPSCOPE_CUDA_CHECK(cudaEventElapsedTime(&ms, m_ref.get(), e));
    return m_refNs + static_cast<std::int64_t>(static_cast<double>(ms) * 1e6);
  }

  /// Ties the event clock to the host clock again; call only with every stream idle.
  void calibrate() {
    SWAPSCOPE_CUDA_CHECK(cudaEventRecord(m_ref.get(), m_ctx.compute));
    SWAPSCOPE_CUDA_CHECK(cudaEventSynchronize(m_ref.get()));
    m_refNs = nowNs();
  }

  int m_index;
  cudaDeviceProp m_prop{};
  const Clock::time_point m_epoch;
  Stream m_streams[kStreamCount];
  CudnnHandle m_cudnn;
  DeviceBuffer m_cublasWorkspace;  // declared before m_cublas: freed after the handle
  CublasHandle m_cublas;
  CudaContext m_ctx;
  DeviceBuffer m_pool;
  std::int64_t m_poolBytes = 0;
  std::int64_t m_usedAtOpen = 0, m_handleBytes = 0;
  std::deque<Task> m_pending[kStreamCount];
  Fence m_submitted{}, m_completed{};
  std::vector<Event> m_freeEvents;
  std::vector<TaskTiming> m_timings;
  Event m_ref;
  std::int64_t m_refNs = 0;
  std::exception_ptr m_failure;
  TaskObserver* m_observer = nullptr;
  std::int64_t m_drainedNs = 0;
  std::vector<SgdChunk> m_sgdTable;  // what m_sgdTableDevice holds
  DeviceBuffer m_sgdTableDevice;
  std::size_t m_sgdTableCapacity = 0;  // chunks
};

}  // namespace
}  // namespace cuda

std::unique_ptr<Device> createCudaDevice(int index, const DeviceOptions& options) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    throw Error(ErrorKind::BadInput, std::string("no CUDA device can be used: ") +
                                         cudaGetErrorName(status) + " (" +
                                         cudaGetErrorString(status) + ")");
  }
  if (index < 0 || index >= count) {
    throw Error(ErrorKind::BadInput, "device 'cuda:" + std::to_string(index) +
                                         "' is not there: this machine has " +
                                         std::to_string(count) + " CUDA device(s)");
  }
  return std::make_unique<cuda::CudaDevice>(index, options);
}

}  // namespace swapscope::rt
