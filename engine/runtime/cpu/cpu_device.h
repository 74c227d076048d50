// SPDX-License-Identifier: MIT
/// @brief The CPU backend: the pool is one host allocation, the streams are worker threads with
/// FIFO queues, and the kernels run on oneDNN (convolution, batch norm, ReLU, pooling, inner
/// product) or on plain loops (add, concat, flatten, dropout, adaptive pooling, the loss).
#pragma once

#include <memory>

#include "runtime/device.h"

namespace swapscope::rt {

/// The CPU backend's one device, "cpu:0".
std::unique_ptr<Device> createCpuDevice(const DeviceOptions& options = {});
/// "Intel(R) Xeon(R) ... (2 threads)": the processor model and the threads oneDNN uses.
std::string cpuDescription();

}  // namespace swapscope::rt
