// SPDX-License-Identifier: MIT
/// @brief RAII owners for every CUDA, cuDNN and cuBLAS object the backend creates: streams,
/// events, device and page-locked host buffers, library handles and descriptors. Each owner is
/// move-only and destroys its object exactly once; creation goes through the checked-call macros.
#pragma once

#include <utility>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "runtime/cuda/check.h"
#include "runtime/cuda/dnn_check.h"

namespace swapscope::rt::cuda {

/// Owns one handle `T` and releases it with `Destroy` (whose status is ignored: a destructor
/// cannot report, and a failing destroy leaves nothing to recover).
template <typename T, auto Destroy>
class Unique {
 public:
  Unique() = default;
  explicit Unique(T handle) : m_handle(handle) {}
  ~Unique() { reset(); }
  Unique(Unique&& o) noexcept : m_handle(std::exchange(o.m_handle, T{})) {}
  Unique& operator=(Unique&& o) noexcept {
    if (this != &o) {
      reset();
      m_handle = std::exchange(o.m_handle, T{});
    }
    return *this;
  }
  Unique(const Unique&) = delete;
  Unique& operator=(const Unique&) = delete;

  T get() const { return m_handle; }
  explicit operator bool() const { return m_handle != T{}; }
  void reset() {
    if (m_handle != T{}) (void)Destroy(m_handle);
    m_handle = T{};
  }

 private:
  T m_handle{};
};

using Stream = Unique<cudaStream_t, &cudaStreamDestroy>;
using Event = Unique<cudaEvent_t, &cudaEventDestroy>;
using DeviceBuffer = Unique<void*, &cudaFree>;
using PageLockedBuffer = Unique<void*, &cudaFreeHost>;
using CudnnHandle = Unique<cudnnHandle_t, &cudnnDestroy>;
using CublasHandle = Unique<cublasHandle_t, &cublasDestroy>;
using TensorDesc = Unique<cudnnTensorDescriptor_t, &cudnnDestroyTensorDescriptor>;
using FilterDesc = Unique<cudnnFilterDescriptor_t, &cudnnDestroyFilterDescriptor>;
using ConvDesc = Unique<cudnnConvolutionDescriptor_t, &cudnnDestroyConvolutionDescriptor>;
using PoolDesc = Unique<cudnnPoolingDescriptor_t, &cudnnDestroyPoolingDescriptor>;
using ActivationDesc = Unique<cudnnActivationDescriptor_t, &cudnnDestroyActivationDescriptor>;

/// A non-blocking stream: it never synchronises with the legacy default stream.
inline Stream makeStream() {
  cudaStream_t s = nullptr;
  SWAPSCOPE_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return Stream(s);
}
/// An event with timing (the backend's fallback timer) unless `timing` is false.
inline Event makeEvent(bool timing = true) {
  cudaEvent_t e = nullptr;
  SWAPSCOPE_CUDA_CHECK(
      cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
  return Event(e);
}
inline TensorDesc makeTensorDesc() {
  cudnnTensorDescriptor_t d = nullptr;
  SWAPSCOPE_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d));
  return TensorDesc(d);
}
inline FilterDesc makeFilterDesc() {
  cudnnFilterDescriptor_t d = nullptr;
  SWAPSCOPE_CUDNN_CHECK(cudnnCreateFilterDescriptor(&d));
  return FilterDesc(d);
}
inline ConvDesc makeConvDesc() {
  cudnnConvolutionDescriptor_t d = nullptr;
  SWAPSCOPE_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&d));
  return ConvDesc(d);
}
inline PoolDesc makePoolDesc() {
  cudnnPoolingDescriptor_t d = nullptr;
  SWAPSCOPE_CUDNN_CHECK(cudnnCreatePoolingDescriptor(&d));
  return PoolDesc(d);
}
inline ActivationDesc makeActivationDesc() {
  cudnnActivationDescriptor_t d = nullptr;
  SWAPSCOPE_CUDNN_CHECK(cudnnCreateActivationDescriptor(&d));
  return ActivationDesc(d);
}

}  // namespace swapscope::rt::cuda
