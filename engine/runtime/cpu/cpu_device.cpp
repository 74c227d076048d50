// SPDX-License-Identifier: MIT
#include "runtime/cpu/cpu_device.h"

#include <omp.h>

#include <unistd.h>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <fstream>
#include <mutex>
#include <new>
#include <thread>
#include <utility>

#include "common/error.h"
#include "runtime/cpu/cpu_context.h"

namespace swapscope::rt {

std::string cpuDescription() {
  std::string model = "unknown processor";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(colon + 2);
      break;
    }
  }
  return model + " (" + std::to_string(omp_get_max_threads()) + " threads)";
}

namespace cpu {

void CpuContext::reserve(int slot, std::size_t bytes) {
  const auto s = static_cast<std::size_t>(slot);
  if (bytes <= m_sizes[s]) return;
  m_total += static_cast<std::int64_t>(bytes - m_sizes[s]);
  m_sizes[s] = bytes;
}

void CpuContext::allocate() {
  for (int s = 0; s <= kSlots; ++s) {
    const std::size_t want = m_sizes[s];
    if (m_allocated[s] >= want) continue;
    m_slots[s].reset();
    m_allocated[s] = 0;
    try {
      m_slots[s] = std::make_unique<std::byte[]>(want);
    } catch (const std::bad_alloc&) {
      throw Error(ErrorKind::Runtime, "cannot allocate " + std::to_string(want) +
                                          " bytes of host memory for the kernels' scratch");
    }
    m_allocated[s] = want;
  }
}

std::int64_t CpuContext::pendingBytes() const {
  std::int64_t pending = 0;
  for (int s = 0; s <= kSlots; ++s) {
    if (m_allocated[s] < m_sizes[s]) pending += static_cast<std::int64_t>(m_sizes[s]);
  }
  return pending;
}

namespace {

/// Three worker threads, one per stream. One mutex and one condition variable guard every queue
/// and counter: tasks are coarse (a layer, a copy), so contention is negligible, and a task that
/// waits for another stream sleeps on the condition variable until that stream completes.
class CpuStreams {
 public:
  CpuStreams() : m_epoch(std::chrono::steady_clock::now()) {
    for (int s = 0; s < kStreamCount; ++s)
      m_workers[s] = std::thread([this, s] { run(s); });
  }
  ~CpuStreams() {
    {
      std::lock_guard lock(m_mutex);
      m_stop = true;
    }
    m_changed.notify_all();
    for (auto& w : m_workers)
      w.join();
  }

  void setObserver(TaskObserver* o) {
    std::lock_guard lock(m_mutex);
    m_observer = o;
  }

  std::uint64_t submit(StreamKind s, const Fence& waitFor, std::function<void()> work,
                       const TaskTag& tag) {
    const int i = static_cast<int>(s);
    std::uint64_t seq = 0;
    {
      std::lock_guard lock(m_mutex);
      seq = ++m_submitted[i];
      m_queues[i].push_back(
          Task{.seq = seq, .waitFor = waitFor, .work = std::move(work), .tag = tag});
    }
    m_changed.notify_all();
    return seq;
  }

  void hostWait(const Fence& fence) {
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [&] { return reached(fence); });
  }

  void synchronize() {
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [&] { return reached(m_submitted); });
    if (m_failure) {
      auto failure = m_failure;
      m_failure = nullptr;
      std::rethrow_exception(failure);
    }
  }

  std::vector<TaskTiming> takeTimings() {
    std::lock_guard lock(m_mutex);
    return std::exchange(m_timings, {});
  }

  std::int64_t nowNs() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                m_epoch)
        .count();
  }

 private:
  struct Task {
    std::uint64_t seq;
    Fence waitFor;
    std::function<void()> work;
    TaskTag tag;
  };

  bool reached(const Fence& f) const {
    for (int s = 0; s < kStreamCount; ++s) {
      if (m_completed[s] < f[s]) return false;
    }
    return true;
  }

  void run(int i) {
    std::unique_lock lock(m_mutex);
    for (;;) {
      m_changed.wait(lock, [&] {
        return m_stop || (!m_queues[i].empty() && reached(m_queues[i].front().waitFor));
      });
      if (m_stop) return;
      Task task = std::move(m_queues[i].front());
      m_queues[i].pop_front();
      const bool skip = m_failure != nullptr;  // after a failure, tasks complete without work
      TaskObserver* observer = m_observer;
      lock.unlock();
      const std::int64_t start = nowNs();
      std::exception_ptr failure;
      if (!skip) {
        if (observer) observer->taskBegin(static_cast<StreamKind>(i), task.tag);
        try {
          task.work();
        } catch (...) {
          failure = std::current_exception();
        }
        if (observer) observer->taskEnd(static_cast<StreamKind>(i), task.tag);
      }
      const std::int64_t end = nowNs();
      lock.lock();
      if (failure && !m_failure) m_failure = failure;
      m_completed[i] = task.seq;
      m_timings.push_back({.stream = static_cast<StreamKind>(i),
                           .seq = task.seq,
                           .tag = task.tag,
                           .start_ns = start,
                           .end_ns = end});
      m_changed.notify_all();
    }
  }

  const std::chrono::steady_clock::time_point m_epoch;
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::deque<Task> m_queues[kStreamCount];
  Fence m_submitted{};
  Fence m_completed{};
  std::vector<TaskTiming> m_timings;
  std::exception_ptr m_failure;
  TaskObserver* m_observer = nullptr;
  bool m_stop = false;
  std::thread m_workers[kStreamCount];
};

class CpuDevice final : public Device {
 public:
  explicit CpuDevice(const DeviceOptions& options)
      : m_options(options), m_context(options.cpu_layout) {}
  std::string backendName() const override { return "cpu"; }
  std::string deviceName() const override { return "cpu:0 " + cpuDescription(); }
  std::vector<std::pair<std::string, std::string>> libraryVersions() const override {
    const dnnl_version_t* v = dnnl_version();
    return {{"oneDNN", std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                           std::to_string(v->patch)}};
  }
  /// Host memory is ordinary memory: there is no separate device to page-lock it for.
  bool hostMemoryPageLocked() const override { return false; }
  std::int64_t totalMemory() const override {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? static_cast<std::int64_t>(pages) * size : 0;
  }

  bool poolInHostMemory() const override { return true; }
  ImageLayout imageLayout() const override { return m_options.cpu_layout; }
  std::int64_t pendingHostBytes() const override { return m_context.pendingBytes(); }

  /// Reserves the pool, then the kernels' scratch outside it.
  std::byte* reservePool(std::int64_t bytes) override {
    if (m_pool) throw Error(ErrorKind::Runtime, "the pool of this device is already reserved");
    const std::int64_t total = totalMemory();
    if (total > 0 && bytes > total) {
      throw Error(ErrorKind::BadInput, "a budget of " + std::to_string(bytes) +
                                           " bytes exceeds this machine's memory of " +
                                           std::to_string(total) + " bytes");
    }
    const auto rounded =
        static_cast<std::size_t>((bytes + kPoolAlignment - 1) / kPoolAlignment * kPoolAlignment);
    void* p = std::aligned_alloc(kPoolAlignment, rounded > 0 ? rounded : kPoolAlignment);
    if (!p) {
      throw Error(ErrorKind::Runtime,
                  "cannot reserve a pool of " + std::to_string(bytes) + " bytes of host memory");
    }
    m_pool.reset(static_cast<std::byte*>(p));
    try {
      m_context.allocate();
    } catch (...) {
      m_pool.reset();
      throw;
    }
    return m_pool.get();
  }
  void releasePool() override { m_pool.reset(); }
  std::int64_t poolAlignment() const override { return kPoolAlignment; }

  HostMemory allocateHost(std::int64_t bytes) override {
    void* p = std::aligned_alloc(
        kPoolAlignment,
        static_cast<std::size_t>((bytes + kPoolAlignment - 1) / kPoolAlignment * kPoolAlignment));
    if (!p && bytes > 0) {
      throw Error(ErrorKind::Runtime,
                  "cannot allocate " + std::to_string(bytes) + " bytes of host memory");
    }
    return HostMemory(static_cast<std::byte*>(p),
                      HostMemoryDeleter{[](std::byte* q) { std::free(q); }});
  }

  std::uint64_t submit(StreamKind s, const Fence& waitFor, std::function<void()> work,
                       const TaskTag& tag) override {
    return m_streams.submit(s, waitFor, std::move(work), tag);
  }
  std::uint64_t copy(StreamKind s, void* dst, const void* src, std::int64_t bytes,
                     const Fence& waitFor, const TaskTag& tag) override {
    return m_streams.submit(
        s, waitFor, [dst, src, bytes] { std::memcpy(dst, src, static_cast<std::size_t>(bytes)); },
        tag);
  }
  void hostWait(const Fence& fence) override { m_streams.hostWait(fence); }
  void synchronize() override { m_streams.synchronize(); }
  std::vector<TaskTiming> takeTimings() override { return m_streams.takeTimings(); }
  std::int64_t nowNs() const override { return m_streams.nowNs(); }

  std::unique_ptr<LayerKernel> createKernel(const Network& net, const std::vector<LayerCost>&,
                                            int layer, std::int64_t samples) override {
    return cpu::createCpuKernel(m_context, net, layer, samples);
  }
  std::int64_t otherBytes() const override { return m_context.bytes(); }
  const DeviceOptions& options() const override { return m_options; }
  void setTaskObserver(TaskObserver* observer) override { m_streams.setObserver(observer); }
  void fillZero(void* dst, std::int64_t bytes) override {
    std::memset(dst, 0, static_cast<std::size_t>(bytes));
  }
  /// Each value's update depends on that value alone, so the threads that share the tensor
  /// change no result.
  void sgdStep(const SgdArgs& a) override {
#pragma omp parallel for simd schedule(static)
    for (std::int64_t i = 0; i < a.count; ++i) {
      const float g = a.grad[i] + a.weight_decay * a.weights[i];
      a.momentum[i] = a.momentum_factor * a.momentum[i] + g;
      a.weights[i] -= a.lr * a.momentum[i];
    }
  }

 private:
  static constexpr std::int64_t kPoolAlignment = 64;  // one cache line; AVX-512 loads
  DeviceOptions m_options;
  struct FreeDeleter {
    void operator()(std::byte* p) const { std::free(p); }
  };
  cpu::CpuContext m_context;
  std::unique_ptr<std::byte, FreeDeleter> m_pool;
  CpuStreams m_streams;  // last: its workers stop before the memory they use goes away
};

}  // namespace
}  // namespace cpu

std::unique_ptr<Device> createCpuDevice(const DeviceOptions& options) {
  return std::make_unique<cpu::CpuDevice>(options);
}

}  // namespace swapscope::rt
