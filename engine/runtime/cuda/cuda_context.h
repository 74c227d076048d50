// SPDX-License-Identifier: MIT
/// @brief What the CUDA kernels share: the device's options, its compute stream, and the cuDNN
/// and cuBLAS handles bound to that stream. Kernels only run on the compute stream.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "analysis/layer_cost.h"
#include "graph/network.h"
#include "runtime/device.h"
#include "runtime/kernel.h"

namespace swapscope::rt::cuda {

struct CudaContext {
  DeviceOptions options;
  cudaStream_t compute = nullptr;
  cudnnHandle_t cudnn = nullptr;
  cublasHandle_t cublas = nullptr;
};

/// The cuDNN and cuBLAS kernels of `layer` at `samples` samples (Device::createKernel).
std::unique_ptr<LayerKernel> createCudaKernel(CudaContext& ctx, const Network& net,
                                              const std::vector<LayerCost>& costs, int layer,
                                              std::int64_t samples);

}  // namespace swapscope::rt::cuda
