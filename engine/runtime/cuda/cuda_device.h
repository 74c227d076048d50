// SPDX-License-Identifier: MIT
/// @brief The CUDA backend: the pool is one cudaMalloc of the budget, host memory is page-locked
/// (cudaHostAlloc), the three streams are CUDA streams ordered by CUDA events, and the kernels
/// run on cuDNN 9 (convolution, batch norm, ReLU, pooling), cuBLAS (linear) and small CUDA
/// kernels (the rest). Built only where the CUDA toolkit and cuDNN are found
/// (SWAPSCOPE_WITH_CUDA_BACKEND).
#pragma once

#include <memory>

#include "runtime/device.h"

namespace swapscope::rt {

/// Opens CUDA device `index`. Error(BadInput) when it is not there; Error(Runtime) when the
/// driver, cuDNN or cuBLAS cannot start on it.
std::unique_ptr<Device> createCudaDevice(int index, const DeviceOptions& options);

}  // namespace swapscope::rt
