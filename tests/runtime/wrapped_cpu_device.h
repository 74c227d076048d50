// SPDX-License-Identifier: MIT
/// @brief A test device: the CPU backend behind the Device interface, with a pool padded and
/// aligned as another backend's, and a hook on every layer's kernel.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/cpu/cpu_device.h"
#include "runtime/device.h"
#include "runtime/kernel.h"

namespace swapscope::rt {

/// The CPU device behind the Device interface, with hooks: tests override wrap() to change what
/// a layer's kernel does, and can give the pool a padding and an alignment as the CUDA
/// backend's (an alignment of 0: the CPU device's).
class WrappedCpuDevice : public Device {
 public:
  explicit WrappedCpuDevice(PoolPadding padding = {}, std::int64_t alignment = 0)
      : m_cpu(createCpuDevice()), m_padding(padding), m_alignment(alignment) {}
  std::string backendName() const override { return m_cpu->backendName(); }
  std::string deviceName() const override { return m_cpu->deviceName(); }
  std::int64_t totalMemory() const override { return m_cpu->totalMemory(); }
  std::byte* reservePool(std::int64_t bytes) override {
    std::byte* p = m_cpu->reservePool(bytes);
    m_pool = p;
    m_poolBytes = bytes;
    return p;
  }
  void releasePool() override { m_cpu->releasePool(); }
  std::int64_t poolAlignment() const override {
    return m_alignment > 0 ? m_alignment : m_cpu->poolAlignment();
  }
  ImageLayout imageLayout() const override { return m_cpu->imageLayout(); }
  PoolPadding poolPadding() const override { return m_padding; }
  HostMemory allocateHost(std::int64_t bytes) override { return m_cpu->allocateHost(bytes); }
  bool poolInHostMemory() const override { return m_cpu->poolInHostMemory(); }
  std::int64_t freeMemory() const override { return m_cpu->freeMemory(); }
  std::int64_t pendingHostBytes() const override { return m_cpu->pendingHostBytes(); }
  std::uint64_t submit(StreamKind s, const Fence& w, std::function<void()> work,
                       const TaskTag& t) override {
    return m_cpu->submit(s, w, std::move(work), t);
  }
  std::uint64_t copy(StreamKind s, void* d, const void* src, std::int64_t n, const Fence& w,
                     const TaskTag& t) override {
    return m_cpu->copy(s, d, src, n, w, t);
  }
  void hostWait(const Fence& f) override { m_cpu->hostWait(f); }
  void synchronize() override { m_cpu->synchronize(); }
  std::vector<TaskTiming> takeTimings() override { return m_cpu->takeTimings(); }
  std::int64_t nowNs() const override { return m_cpu->nowNs(); }
  std::unique_ptr<LayerKernel> createKernel(const Network& net, const std::vector<LayerCost>& costs,
                                            int layer, std::int64_t samples) override {
    return wrap(m_cpu->createKernel(net, costs, layer, samples), net, costs, layer);
  }
  void fillZero(void* dst, std::int64_t bytes) override { m_cpu->fillZero(dst, bytes); }
  void sgdStep(const SgdArgs& a) override { m_cpu->sgdStep(a); }
  std::int64_t otherBytes() const override { return m_cpu->otherBytes(); }
  std::vector<std::pair<std::string, std::string>> libraryVersions() const override {
    return m_cpu->libraryVersions();
  }
  bool hostMemoryPageLocked() const override { return m_cpu->hostMemoryPageLocked(); }
  const DeviceOptions& options() const override { return m_cpu->options(); }
  void setTaskObserver(TaskObserver* o) override { m_cpu->setTaskObserver(o); }

 protected:
  virtual std::unique_ptr<LayerKernel> wrap(std::unique_ptr<LayerKernel> kernel, const Network&,
                                            const std::vector<LayerCost>&, int) {
    return kernel;
  }
  const std::byte* m_pool = nullptr;
  std::int64_t m_poolBytes = 0;

 private:
  std::unique_ptr<Device> m_cpu;
  PoolPadding m_padding;
  std::int64_t m_alignment;
};

/// A kernel whose forward and backward steps claim workspaces of the given bytes, as a cuDNN
/// convolution's do (growing with k); the kernel inside, a CPU one, ignores them.
class WorkspaceKernel final : public LayerKernel {
 public:
  WorkspaceKernel(std::unique_ptr<LayerKernel> inner, std::int64_t forwardBytes,
                  std::int64_t backwardBytes)
      : m_inner(std::move(inner)), m_forward(forwardBytes), m_backward(backwardBytes) {}
  void forward(const KernelArgs& a) override { m_inner->forward(a); }
  void backward(const KernelArgs& a) override { m_inner->backward(a); }
  std::int64_t workspaceBytes(bool backward) const override {
    return backward ? m_backward : m_forward;
  }
  void prepareWeightGradAccumulation() override { m_inner->prepareWeightGradAccumulation(); }

 private:
  std::unique_ptr<LayerKernel> m_inner;
  std::int64_t m_forward, m_backward;
};

}  // namespace swapscope::rt
