// SPDX-License-Identifier: MIT
/// @brief The CUDA devices this process can use, or the reason it can use none (no toolkit at
/// build time, no driver, no device). Asking never throws for a missing GPU: that is an answer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace swapscope {

struct GpuDevice {
  int index = 0;
  std::string name;
  std::int64_t total_memory = 0;  ///< bytes
  int compute_major = 0, compute_minor = 0;
  int multiprocessors = 0;
  std::string pci_bus_id;  ///< "0000:3b:00.0"
};

struct GpuInventory {
  bool built_with_cuda = false;
  int runtime_version = 0;  ///< CUDA runtime, e.g. 13000
  int driver_version = 0;   ///< 0 when there is no driver
  std::vector<GpuDevice> devices;
  std::string unavailable_reason;  ///< why `devices` is empty
};

GpuInventory queryGpuInventory();

/// "13.0" from 13000.
inline std::string formatCudaVersion(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

}  // namespace swapscope
