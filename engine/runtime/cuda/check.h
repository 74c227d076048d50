// SPDX-License-Identifier: MIT
/// @brief The checked-call macro for the CUDA runtime: a failing call throws Error(Runtime) that
/// carries the call, the error name and text, the file and the line. Never exit(): the GUI hosts
/// the engine. The cuDNN, cuBLAS (dnn_check.h) and CUPTI (collectors/cupti_check.h) macros throw
/// through the same throwLibraryError.
#pragma once

#include <string>

#include <cuda_runtime_api.h>

#include "common/error.h"

namespace swapscope::detail {

/// "<call> failed: <library> <status> at <file>:<line>" as Error(Runtime).
[[noreturn]] inline void throwLibraryError(const char* library, const std::string& status,
                                           const char* call, const char* file, int line) {
  std::string message = call;
  message += " failed: ";
  message += library;
  message += " ";
  message += status;
  message += " at ";
  message += file;
  message += ":";
  message += std::to_string(line);
  throw Error(ErrorKind::Runtime, message);
}

[[noreturn]] inline void throwCudaError(cudaError_t status, const char* call, const char* file,
                                        int line) {
  std::string text = cudaGetErrorName(status);
  text += " (";
  text += cudaGetErrorString(status);
  text += ")";
  throwLibraryError("CUDA", text, call, file, line);
}

}  // namespace swapscope::detail

#define SWAPSCOPE_CUDA_CHECK(call)                                                       \
  do {                                                                                   \
    const cudaError_t swapscope_status_ = (call);                                        \
    if (swapscope_status_ != cudaSuccess) {                                              \
      ::swapscope::detail::throwCudaError(swapscope_status_, #call, __FILE__, __LINE__); \
    }                                                                                    \
  } while (0)
