// SPDX-License-Identifier: MIT
/// @brief Checked-call macros for cuDNN and cuBLAS, in the manner of SWAPSCOPE_CUDA_CHECK: a
/// failing call throws Error(Runtime) carrying the call, the library's status name, the file and
/// the line.
#pragma once

#include <string>

#include <cublas_v2.h>
#include <cudnn.h>

#include "runtime/cuda/check.h"

namespace swapscope::detail {

inline std::string cublasStatusName(cublasStatus_t s) {
  return cublasGetStatusName(s) + std::string(" (") + cublasGetStatusString(s) + ")";
}

}  // namespace swapscope::detail

#define SWAPSCOPE_CUDNN_CHECK(call)                                                           \
  do {                                                                                        \
    const cudnnStatus_t swapscope_status_ = (call);                                           \
    if (swapscope_status_ != CUDNN_STATUS_SUCCESS) {                                          \
      ::swapscope::detail::throwLibraryError("cuDNN", cudnnGetErrorString(swapscope_status_), \
                                             #call, __FILE__, __LINE__);                      \
    }                                                                                         \
  } while (0)

#define SWAPSCOPE_CUBLAS_CHECK(call)                                                           \
  do {                                                                                         \
    const cublasStatus_t swapscope_status_ = (call);                                           \
    if (swapscope_status_ != CUBLAS_STATUS_SUCCESS) {                                          \
      ::swapscope::detail::throwLibraryError(                                                  \
          "cuBLAS", ::swapscope::detail::cublasStatusName(swapscope_status_), #call, __FILE__, \
          __LINE__);                                                                           \
    }                                                                                          \
  } while (0)
