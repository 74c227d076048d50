// SPDX-License-Identifier: MIT
/// @brief The checked-call macro for the CUDA runtime: a failing call throws Error(Runtime) that
/// carries the call, the error name and text, the file and the line. Never exit(): the GUI hosts
/// the engine.
#pragma once

#include <string>

#include <cuda_runtime_api.h>

#include "common/error.h"

namespace swapscope::detail {

[[noreturn]] inline void throwCudaError(cudaError_t status, const char* call, const char* file,
                                        int line) {
  throw Error(ErrorKind::Runtime, std::string(call) + " failed: " + cudaGetErrorName(status) +
                                      " (" + cudaGetErrorString(status) + ") at " + file + ":" +
                                      std::to_string(line));
}

}  // namespace swapscope::detail

#define SWAPSCOPE_CUDA_CHECK(call)                                                       \
  do {                                                                                   \
    const cudaError_t swapscope_status_ = (call);                                        \
    if (swapscope_status_ != cudaSuccess) {                                              \
      ::swapscope::detail::throwCudaError(swapscope_status_, #call, __FILE__, __LINE__); \
    }                                                                                    \
  } while (0)
