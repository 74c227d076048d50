// SPDX-License-Identifier: MIT
#include "runtime/cuda/ops.h"

#include <algorithm>

#include "runtime/cuda/check.h"
#include "runtime/rng.h"

namespace swapscope::rt::cuda::ops {
namespace {

constexpr int kThreads = 256;

/// Blocks for n elements with a grid-stride loop: enough to fill the GPU, never more than
/// CUDA's grid limit.
unsigned blocksFor(i64 n) {
  const i64 blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<i64>(blocks, 1, 65535));
}

#define SWAPSCOPE_GRID_LOOP(i, n)                                                \
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<i64>(blockDim.x) * gridDim.x)

__global__ void sgdKernel(float* w, const float* g, float* v, i64 n, float lr, float mu, float wd) {
  SWAPSCOPE_GRID_LOOP(i, n) {
    const float grad = g[i] + wd * w[i];
    const float m = mu * v[i] + grad;
    v[i] = m;
    w[i] -= lr * m;
  }
}

/// Block b updates chunk b (and b + gridDim.x, ... where there are more chunks than blocks);
/// each element as sgdKernel does.
__global__ void sgdChunksKernel(const SgdChunk* chunks, i64 count, float lr, float mu, float wd) {
  for (i64 c = blockIdx.x; c < count; c += gridDim.x) {
    const SgdChunk chunk = chunks[c];
    for (i64 i = threadIdx.x; i < chunk.count; i += blockDim.x) {
      const float grad = chunk.grad[i] + wd * chunk.weights[i];
      const float m = mu * chunk.momentum[i] + grad;
      chunk.momentum[i] = m;
      chunk.weights[i] -= lr * m;
    }
  }
}

__global__ void copyOrAddKernel(float* dst, const float* src, i64 n, bool accumulate) {
  SWAPSCOPE_GRID_LOOP(i, n) {
    dst[i] = accumulate ? dst[i] + src[i] : src[i];
  }
}

__global__ void stridedCopyKernel(float* dst, i64 dstPitch, const float* src, i64 srcPitch,
                                  i64 width, i64 rows, bool accumulate) {
  SWAPSCOPE_GRID_LOOP(i, width * rows) {
    const i64 r = i / width, j = i % width;
    float& d = dst[r * dstPitch + j];
    const float s = src[r * srcPitch + j];
    d = accumulate ? d + s : s;
  }
}

__global__ void addBiasRowsKernel(float* y, const float* bias, i64 rows, i64 cols) {
  SWAPSCOPE_GRID_LOOP(i, rows * cols) {
    y[i] += bias[i % cols];
  }
}

__global__ void columnSumsKernel(float* out, const float* x, i64 rows, i64 cols, bool accumulate) {
  SWAPSCOPE_GRID_LOOP(c, cols) {
    float sum = 0;
    for (i64 r = 0; r < rows; ++r)
      sum += x[r * cols + c];
    out[c] = accumulate ? out[c] + sum : sum;
  }
}

__device__ i64 adaptiveStart(i64 i, i64 in, i64 out) {
  return (i * in) / out;
}
__device__ i64 adaptiveEnd(i64 i, i64 in, i64 out) {
  return ((i + 1) * in + out - 1) / out;
}

__global__ void adaptiveAvgPoolForwardKernel(float* out, const float* in, i64 planes, i64 h, i64 w,
                                             i64 oh, i64 ow) {
  SWAPSCOPE_GRID_LOOP(o, planes * oh * ow) {
    const i64 p = o / (oh * ow), y = (o / ow) % oh, x = o % ow;
    const i64 y0 = adaptiveStart(y, h, oh), y1 = adaptiveEnd(y, h, oh);
    const i64 x0 = adaptiveStart(x, w, ow), x1 = adaptiveEnd(x, w, ow);
    const float* plane = in + p * h * w;
    float sum = 0;
    for (i64 yy = y0; yy < y1; ++yy)
      for (i64 xx = x0; xx < x1; ++xx)
        sum += plane[yy * w + xx];
    out[o] = sum / static_cast<float>((y1 - y0) * (x1 - x0));
  }
}

/// One thread per input element gathers from every output window that covers it.
__global__ void adaptiveAvgPoolBackwardKernel(float* dx, const float* dy, i64 planes, i64 h, i64 w,
                                              i64 oh, i64 ow, bool accumulate) {
  SWAPSCOPE_GRID_LOOP(i, planes * h * w) {
    const i64 p = i / (h * w), y = (i / w) % h, x = i % w;
    float sum = 0;
    for (i64 oy = 0; oy < oh; ++oy) {
      const i64 y0 = adaptiveStart(oy, h, oh), y1 = adaptiveEnd(oy, h, oh);
      if (y < y0 || y >= y1) continue;
      for (i64 ox = 0; ox < ow; ++ox) {
        const i64 x0 = adaptiveStart(ox, w, ow), x1 = adaptiveEnd(ox, w, ow);
        if (x < x0 || x >= x1) continue;
        sum += dy[(p * oh + oy) * ow + ox] / static_cast<float>((y1 - y0) * (x1 - x0));
      }
    }
    dx[i] = accumulate ? dx[i] + sum : sum;
  }
}

__global__ void dropoutForwardKernel(float* out, std::uint8_t* mask, const float* in, i64 n,
                                     double p, float scale, std::uint64_t seed, bool training) {
  SWAPSCOPE_GRID_LOOP(i, n) {
    const bool keep = !training || uniform01(seed, static_cast<std::uint64_t>(i)) >= p;
    if (mask) mask[i] = keep ? 1 : 0;
    out[i] = !training ? in[i] : (keep ? in[i] * scale : 0.0f);
  }
}

__global__ void dropoutBackwardKernel(float* dx, const float* dy, const std::uint8_t* mask, i64 n,
                                      float scale, bool accumulate) {
  SWAPSCOPE_GRID_LOOP(i, n) {
    const float g = mask[i] ? dy[i] * scale : 0.0f;
    dx[i] = accumulate ? dx[i] + g : g;
  }
}

/// One block: each thread sums its rows' losses in double, then a fixed-shape tree reduction.
__global__ void softmaxXentForwardKernel(float* loss, const float* z, const std::int32_t* labels,
                                         i64 rows, i64 classes, i64 samples) {
  __shared__ double partial[kThreads];
  double total = 0;
  for (i64 n = threadIdx.x; n < rows; n += blockDim.x) {
    const float* row = z + n * classes;
    const std::int32_t y = labels[n];
    if (y < 0 || y >= classes) {
      total = nan("");
      continue;
    }
    float m = row[0];
    for (i64 c = 1; c < classes; ++c)
      m = fmaxf(m, row[c]);
    double sum = 0;
    for (i64 c = 0; c < classes; ++c)
      sum += exp(static_cast<double>(row[c] - m));
    total += log(sum) + m - row[y];
  }
  partial[threadIdx.x] = total;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) loss[0] = static_cast<float>(partial[0] / static_cast<double>(samples));
}

__global__ void softmaxXentBackwardKernel(float* dz, const float* z, const std::int32_t* labels,
                                          i64 rows, i64 classes, i64 samples, bool accumulate) {
  SWAPSCOPE_GRID_LOOP(n, rows) {
    const float* row = z + n * classes;
    float* g = dz + n * classes;
    const std::int32_t y = labels[n];
    const float invK = 1.0f / static_cast<float>(samples);
    float m = row[0];
    for (i64 c = 1; c < classes; ++c)
      m = fmaxf(m, row[c]);
    float sum = 0;
    for (i64 c = 0; c < classes; ++c)
      sum += expf(row[c] - m);
    for (i64 c = 0; c < classes; ++c) {
      const float v = (expf(row[c] - m) / sum - (c == y ? 1.0f : 0.0f)) * invK;
      g[c] = accumulate ? g[c] + v : v;
    }
  }
}

__device__ float activation(Activation f, float x, float a, float b) {
  switch (f) {
    case Activation::Clip:
      return fminf(fmaxf(x, a), b);
    case Activation::Sigmoid:
      return 1.0f / (1.0f + expf(-x));
    case Activation::HardSigmoid:
      return fminf(fmaxf(a * x + b, 0.0f), 1.0f);
    case Activation::HardSwish:
      return x * fminf(fmaxf(x / 6.0f + 0.5f, 0.0f), 1.0f);
  }
  return 0.0f;
}

/// f'(v) where v is the input, or the output for clip and sigmoid.
__device__ float activationSlope(Activation f, float v, float a, float b) {
  switch (f) {
    case Activation::Clip:
      return v > a && v < b ? 1.0f : 0.0f;
    case Activation::Sigmoid:
      return v * (1.0f - v);
    case Activation::HardSigmoid: {
      const float t = a * v + b;
      return t > 0.0f && t < 1.0f ? a : 0.0f;
    }
    case Activation::HardSwish:
      return v < -3.0f ? 0.0f : v <= 3.0f ? v / 3.0f + 0.5f : 1.0f;
  }
  return 0.0f;
}

__global__ void activationForwardKernel(Activation f, float* y, const float* x, i64 n, float a,
                                        float b) {
  SWAPSCOPE_GRID_LOOP(i, n) {
    y[i] = activation(f, x[i], a, b);
  }
}

__global__ void activationBackwardKernel(Activation f, float* dx, const float* dy, const float* x,
                                         i64 n, float a, float b, bool accumulate) {
  SWAPSCOPE_GRID_LOOP(i, n) {
    const float g = activationSlope(f, x[i], a, b) * dy[i];
    dx[i] = accumulate ? dx[i] + g : g;
  }
}

__global__ void mulForwardKernel(float* y, const float* a, i64 planeA, const float* b, i64 planeB,
                                 i64 n) {
  SWAPSCOPE_GRID_LOOP(i, n) {
    y[i] = a[i / planeA] * b[i / planeB];
  }
}

__global__ void mulBackwardKernel(float* dx, i64 plane, const float* dy, const float* other,
                                  i64 otherPlane, i64 n, bool accumulate) {
  SWAPSCOPE_GRID_LOOP(c, n / plane) {
    float sum = 0;
    for (i64 i = c * plane; i < (c + 1) * plane; ++i)
      sum += dy[i] * other[i / otherPlane];
    dx[c] = accumulate ? dx[c] + sum : sum;
  }
}

void checkLaunch() {
  SWAPSCOPE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void sgd(cudaStream_t stream, float* w, const float* g, float* v, i64 n, float lr, float mu,
         float wd) {
  if (n <= 0) return;
  sgdKernel<<<blocksFor(n), kThreads, 0, stream>>>(w, g, v, n, lr, mu, wd);
  checkLaunch();
}

void sgdChunks(cudaStream_t stream, const SgdChunk* chunks, i64 count, float lr, float mu,
               float wd) {
  if (count <= 0) return;
  const auto blocks = static_cast<unsigned>(std::min<i64>(count, 65535));
  sgdChunksKernel<<<blocks, kThreads, 0, stream>>>(chunks, count, lr, mu, wd);
  checkLaunch();
}

void copyOrAdd(cudaStream_t stream, float* dst, const float* src, i64 n, bool accumulate) {
  if (n <= 0) return;
  if (!accumulate) {
    SWAPSCOPE_CUDA_CHECK(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(n) * sizeof(float),
                                         cudaMemcpyDeviceToDevice, stream));
    return;
  }
  copyOrAddKernel<<<blocksFor(n), kThreads, 0, stream>>>(dst, src, n, accumulate);
  checkLaunch();
}

void stridedCopy(cudaStream_t stream, float* dst, i64 dstPitch, const float* src, i64 srcPitch,
                 i64 width, i64 rows, bool accumulate) {
  if (width <= 0 || rows <= 0) return;
  if (!accumulate) {
    SWAPSCOPE_CUDA_CHECK(cudaMemcpy2DAsync(dst, static_cast<std::size_t>(dstPitch) * sizeof(float),
                                           src, static_cast<std::size_t>(srcPitch) * sizeof(float),
                                           static_cast<std::size_t>(width) * sizeof(float),
                                           static_cast<std::size_t>(rows), cudaMemcpyDeviceToDevice,
                                           stream));
    return;
  }
  stridedCopyKernel<<<blocksFor(width * rows), kThreads, 0, stream>>>(dst, dstPitch, src, srcPitch,
                                                                      width, rows, accumulate);
  checkLaunch();
}

void addBiasRows(cudaStream_t stream, float* y, const float* bias, i64 rows, i64 cols) {
  if (rows * cols <= 0) return;
  addBiasRowsKernel<<<blocksFor(rows * cols), kThreads, 0, stream>>>(y, bias, rows, cols);
  checkLaunch();
}

void columnSums(cudaStream_t stream, float* out, const float* x, i64 rows, i64 cols,
                bool accumulate) {
  if (cols <= 0) return;
  columnSumsKernel<<<blocksFor(cols), kThreads, 0, stream>>>(out, x, rows, cols, accumulate);
  checkLaunch();
}

void adaptiveAvgPoolForward(cudaStream_t stream, float* out, const float* in, i64 planes, i64 h,
                            i64 w, i64 oh, i64 ow) {
  const i64 n = planes * oh * ow;
  if (n <= 0) return;
  adaptiveAvgPoolForwardKernel<<<blocksFor(n), kThreads, 0, stream>>>(out, in, planes, h, w, oh,
                                                                      ow);
  checkLaunch();
}

void adaptiveAvgPoolBackward(cudaStream_t stream, float* dx, const float* dy, i64 planes, i64 h,
                             i64 w, i64 oh, i64 ow, bool accumulate) {
  const i64 n = planes * h * w;
  if (n <= 0) return;
  adaptiveAvgPoolBackwardKernel<<<blocksFor(n), kThreads, 0, stream>>>(dx, dy, planes, h, w, oh, ow,
                                                                       accumulate);
  checkLaunch();
}

void dropoutForward(cudaStream_t stream, float* out, std::uint8_t* mask, const float* in, i64 n,
                    double p, std::uint64_t seed, bool training) {
  if (n <= 0) return;
  const float scale = p < 1.0 ? static_cast<float>(1.0 / (1.0 - p)) : 0.0f;
  dropoutForwardKernel<<<blocksFor(n), kThreads, 0, stream>>>(out, mask, in, n, p, scale, seed,
                                                              training && p != 0.0);
  checkLaunch();
}

void dropoutBackward(cudaStream_t stream, float* dx, const float* dy, const std::uint8_t* mask,
                     i64 n, double p, bool accumulate) {
  if (n <= 0) return;
  const float scale = p < 1.0 ? static_cast<float>(1.0 / (1.0 - p)) : 0.0f;
  dropoutBackwardKernel<<<blocksFor(n), kThreads, 0, stream>>>(dx, dy, mask, n, scale, accumulate);
  checkLaunch();
}

void softmaxXentForward(cudaStream_t stream, float* loss, const float* z,
                        const std::int32_t* labels, i64 rows, i64 classes, i64 samples) {
  softmaxXentForwardKernel<<<1, kThreads, 0, stream>>>(loss, z, labels, rows, classes, samples);
  checkLaunch();
}

void softmaxXentBackward(cudaStream_t stream, float* dz, const float* z, const std::int32_t* labels,
                         i64 rows, i64 classes, i64 samples, bool accumulate) {
  softmaxXentBackwardKernel<<<blocksFor(rows), kThreads, 0, stream>>>(dz, z, labels, rows, classes,
                                                                      samples, accumulate);
  checkLaunch();
}

void activationForward(cudaStream_t stream, Activation f, float* y, const float* x, i64 n, float a,
                       float b) {
  if (n <= 0) return;
  activationForwardKernel<<<blocksFor(n), kThreads, 0, stream>>>(f, y, x, n, a, b);
  checkLaunch();
}

void activationBackward(cudaStream_t stream, Activation f, float* dx, const float* dy,
                        const float* x, i64 n, float a, float b, bool accumulate) {
  if (n <= 0) return;
  activationBackwardKernel<<<blocksFor(n), kThreads, 0, stream>>>(f, dx, dy, x, n, a, b,
                                                                  accumulate);
  checkLaunch();
}

void mulForward(cudaStream_t stream, float* y, const float* a, i64 planeA, const float* b,
                i64 planeB, i64 n) {
  if (n <= 0) return;
  mulForwardKernel<<<blocksFor(n), kThreads, 0, stream>>>(y, a, planeA, b, planeB, n);
  checkLaunch();
}

void mulBackward(cudaStream_t stream, float* dx, i64 plane, const float* dy, const float* other,
                 i64 otherPlane, i64 n, bool accumulate) {
  if (n <= 0) return;
  mulBackwardKernel<<<blocksFor(n / plane), kThreads, 0, stream>>>(dx, plane, dy, other, otherPlane,
                                                                   n, accumulate);
  checkLaunch();
}

}  // namespace swapscope::rt::cuda::ops
