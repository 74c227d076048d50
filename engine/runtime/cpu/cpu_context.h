// SPDX-License-Identifier: MIT
/// @brief State the CPU kernels share: the oneDNN engine and stream, and scratch memory outside
/// the pool (oneDNN's scratchpad, and temporaries for gradients that add into existing ones).
/// Kernels only run on the compute stream, one at a time, so one set of scratch serves all.
#pragma once

#include <dnnl.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "graph/network.h"
#include "runtime/image_layout.h"
#include "runtime/kernel.h"

namespace swapscope::rt::cpu {

class CpuContext {
 public:
  explicit CpuContext(ImageLayout imageLayout)
      : engine(dnnl::engine::kind::cpu, 0), stream(engine), layout(imageLayout) {}

  dnnl::engine engine;
  dnnl::stream stream;
  const ImageLayout layout;  ///< of every image FM in the pool

  /// kWeightGradTemp: a weight gradient that is then added (sub-batches after the first).
  /// kBlockedWeights, kBlockedWeightGrad: a convolution's weights and weight gradient in the
  /// blocked order its primitives chose; their size depends on the layer, never on k.
  enum Slot {
    kGradTemp = 0,
    kPoolDst = 1,
    kPoolWorkspace = 2,
    kWeightGradTemp = 3,
    kBlockedWeights = 4,
    kBlockedWeightGrad = 5,
    kSlots = 6
  };
  /// Asks for scratch slot `slot` of at least `bytes`. Nothing is allocated here (kernels are
  /// made before the run is checked against the host's memory); allocate() does it.
  void reserve(int slot, std::size_t bytes);
  /// Allocates every slot that is smaller than asked for. Call only while no kernel runs; the
  /// slots are then stable for the run. Throws Error(Runtime) where the host cannot give them.
  void allocate();
  /// A slot's memory; allocated here where allocate() was not called (kernels run one at a time
  /// on the compute stream, so this never races).
  std::byte* slot(int s) {
    if (m_allocated[static_cast<std::size_t>(s)] < m_sizes[static_cast<std::size_t>(s)]) allocate();
    return m_slots[static_cast<std::size_t>(s)].get();
  }
  void reserveScratchpad(std::size_t bytes) { reserve(kScratchpadSlot, bytes); }
  std::byte* scratchpad() { return slot(kScratchpadSlot); }
  /// Bytes asked for in one slot, allocated or not.
  std::size_t reserved(int s) const { return m_sizes[static_cast<std::size_t>(s)]; }
  std::size_t scratchpadBytes() const { return reserved(kScratchpadSlot); }
  /// Bytes of scratch asked for, allocated or not.
  std::int64_t bytes() const { return m_total; }
  /// Bytes asked for beyond what is allocated.
  std::int64_t pendingBytes() const;

 private:
  static constexpr int kScratchpadSlot = kSlots;
  std::unique_ptr<std::byte[]> m_slots[kSlots + 1];
  std::size_t m_sizes[kSlots + 1] = {};
  std::size_t m_allocated[kSlots + 1] = {};
  std::int64_t m_total = 0;
};

/// The oneDNN kernels of `layer` at `samples` samples (Device::createKernel).
std::unique_ptr<LayerKernel> createCpuKernel(CpuContext& ctx, const Network& net, int layer,
                                             std::int64_t samples);

}  // namespace swapscope::rt::cpu
