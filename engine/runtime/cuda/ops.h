// SPDX-License-Identifier: MIT
/// @brief The small CUDA kernels of the backend, for what cuDNN and cuBLAS do not cover: the SGD
/// update, elementwise sums and copies, concatenation, adaptive average pooling, dropout, the
/// softmax cross-entropy loss, the linear layer's bias, the elementwise activations and the
/// elementwise product. Every launcher enqueues on `stream`
/// and returns at once. None uses atomics: each output element is written by one thread in a
/// fixed order, so every result is deterministic.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "runtime/sgd_chunk.h"

namespace swapscope::rt::cuda::ops {

using i64 = std::int64_t;

/// PyTorch's SGD: g += wd*w; v = mu*v + g; w -= lr*v.
void sgd(cudaStream_t stream, float* w, const float* g, float* v, i64 n, float lr, float mu,
         float wd);
/// The same update for `count` chunks (runtime/multi_tensor_sgd.h) in one launch, one block per
/// chunk: `chunks` is the table in device memory.
void sgdChunks(cudaStream_t stream, const SgdChunk* chunks, i64 count, float lr, float mu,
               float wd);
/// dst = src, or dst += src when `accumulate`.
void copyOrAdd(cudaStream_t stream, float* dst, const float* src, i64 n, bool accumulate);
/// For each of `rows` rows: dst[r*dstPitch + j] (=|+=) src[r*srcPitch + j], j < width (floats).
void stridedCopy(cudaStream_t stream, float* dst, i64 dstPitch, const float* src, i64 srcPitch,
                 i64 width, i64 rows, bool accumulate);
/// y[r][c] += bias[c] for a row-major rows x cols matrix.
void addBiasRows(cudaStream_t stream, float* y, const float* bias, i64 rows, i64 cols);
/// out[c] = sum over r of x[r][c], summed in row order; added to out[c] when `accumulate`.
void columnSums(cudaStream_t stream, float* out, const float* x, i64 rows, i64 cols,
                bool accumulate = false);
/// PyTorch's adaptive average pooling over `planes` planes of h x w into oh x ow.
void adaptiveAvgPoolForward(cudaStream_t stream, float* out, const float* in, i64 planes, i64 h,
                            i64 w, i64 oh, i64 ow);
void adaptiveAvgPoolBackward(cudaStream_t stream, float* dx, const float* dy, i64 planes, i64 h,
                             i64 w, i64 oh, i64 ow, bool accumulate);
/// Inverted dropout with the CPU backend's counter-based mask (rt::uniform01(seed, index) >= p
/// keeps an element); inference copies and keeps every element.
void dropoutForward(cudaStream_t stream, float* out, std::uint8_t* mask, const float* in, i64 n,
                    double p, std::uint64_t seed, bool training);
void dropoutBackward(cudaStream_t stream, float* dx, const float* dy, const std::uint8_t* mask,
                     i64 n, double p, bool accumulate);
/// Softmax cross-entropy of `rows` rows of `classes` logits summed and divided by `samples` (the
/// minibatch, of which the rows may be one pass's samples), into loss[0]. A label outside
/// [0, classes) makes the loss NaN, never a silent number (the trainer checks labels first).
void softmaxXentForward(cudaStream_t stream, float* loss, const float* z,
                        const std::int32_t* labels, i64 rows, i64 classes, i64 samples);
/// dz = (softmax(z) - onehot(y)) / samples, or added to dz when `accumulate`.
void softmaxXentBackward(cudaStream_t stream, float* dz, const float* z, const std::int32_t* labels,
                         i64 rows, i64 classes, i64 samples, bool accumulate);

/// The elementwise activations, with PyTorch's gradients: clip(lo, hi) (the gradient passes
/// strictly inside the bounds, read from the output), sigmoid (from the output), hardsigmoid
/// max(0, min(1, a x + b)) and hardswish x hardsigmoid(x) with a = 1/6, b = 1/2 (from the input).
enum class Activation { Clip, Sigmoid, HardSigmoid, HardSwish };
void activationForward(cudaStream_t stream, Activation f, float* y, const float* x, i64 n, float a,
                       float b);
/// dx (=|+=) f'(x) dy; `x` is the input or, for clip and sigmoid, the output.
void activationBackward(cudaStream_t stream, Activation f, float* dx, const float* dy,
                        const float* x, i64 n, float a, float b, bool accumulate);
/// y = a * b elementwise over n outputs; an operand whose `plane` is > 1 is per channel: its
/// element i / plane multiplies output i (squeeze-and-excitation's [C,1,1] x [C,H,W]).
void mulForward(cudaStream_t stream, float* y, const float* a, i64 planeA, const float* b,
                i64 planeB, i64 n);
/// The gradient of one operand of mulForward: dy times the other operand, summed over each plane
/// (in order, one thread per channel) where the operand is per channel (`plane` > 1).
void mulBackward(cudaStream_t stream, float* dx, i64 plane, const float* dy, const float* other,
                 i64 otherPlane, i64 n, bool accumulate);

}  // namespace swapscope::rt::cuda::ops
