// SPDX-License-Identifier: MIT
#include <cstdio>

#include "runtime/cuda/check.h"
#include "runtime/gpu_inventory.h"

namespace swapscope {

GpuInventory queryGpuInventory() {
  GpuInventory inv;
  inv.built_with_cuda = true;
  cudaRuntimeGetVersion(&inv.runtime_version);
  if (cudaDriverGetVersion(&inv.driver_version) != cudaSuccess || inv.driver_version == 0) {
    inv.driver_version = 0;
    inv.unavailable_reason = "no NVIDIA driver is loaded";
    return inv;
  }
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    inv.unavailable_reason =
        status == cudaSuccess
            ? std::string("the driver reports no CUDA device")
            : std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
    return inv;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    SWAPSCOPE_CUDA_CHECK(cudaGetDeviceProperties(&prop, i));
    GpuDevice d;
    d.index = i;
    d.name = prop.name;
    d.total_memory = static_cast<std::int64_t>(prop.totalGlobalMem);
    d.compute_major = prop.major;
    d.compute_minor = prop.minor;
    d.multiprocessors = prop.multiProcessorCount;
    char bus[32];
    std::snprintf(bus, sizeof bus, "%04x:%02x:%02x.0", prop.pciDomainID, prop.pciBusID,
                  prop.pciDeviceID);
    d.pci_bus_id = bus;
    inv.devices.push_back(std::move(d));
  }
  return inv;
}

}  // namespace swapscope
