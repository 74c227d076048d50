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
#include "runtime/kernel.h"

namespace swapscope::rt::cpu {

class CpuContext {
 public:
  CpuContext() : engine(dnnl::engine::kind::cpu, 0), stream(engine) {}

  dnnl::engine engine;
  dnnl::stream stream;

  enum Slot { kGradTemp = 0, kPoolDst = 1, kPoolWorkspace = 2, kSlots = 3 };
  /// Grows scratch slot `slot` to at least `bytes`. Call only while no kernel runs (at kernel
  /// creation); the slots are then stable for the run.
  void reserve(int slot, std::size_t bytes);
  std::byte* slot(int s) { return m_slots[static_cast<std::size_t>(s)].get(); }
  void reserveScratchpad(std::size_t bytes) { reserve(kScratchpadSlot, bytes); }
  std::byte* scratchpad() { return slot(kScratchpadSlot); }
  std::int64_t bytes() const { return m_total; }

 private:
  static constexpr int kScratchpadSlot = kSlots;
  std::unique_ptr<std::byte[]> m_slots[kSlots + 1];
  std::size_t m_sizes[kSlots + 1] = {};
  std::int64_t m_total = 0;
};

std::unique_ptr<LayerKernel> createCpuKernel(CpuContext& ctx, const Network& net, int layer,
                                             std::int64_t k);

}  // namespace swapscope::rt::cpu
