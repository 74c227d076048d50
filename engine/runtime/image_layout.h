// SPDX-License-Identifier: MIT
/// @brief How a backend orders the values of a minibatch of images [k, C, H, W] in its pool:
/// NCHW, PyTorch's order, or NHWC (channels last), which the CPU backend uses because oneDNN's
/// fastest convolution, pooling and batch-norm kernels run on it. The bytes are the same; only
/// the order of the values differs, so the analyzer's sizes hold for both.
#pragma once

#include <cstdint>

#include "graph/shape.h"

namespace swapscope::rt {

enum class ImageLayout { Nchw, Nhwc };

/// Whether a minibatch of per-sample shape `s` is stored in another order than NCHW: images
/// [C,H,W] under NHWC whose channels and planes both exceed one value.
inline bool differsFromNchw(ImageLayout layout, const Shape& s) {
  return layout == ImageLayout::Nhwc && s.isImage() && s.channels() > 1 &&
         s.height() * s.width() > 1;
}

/// Copies `k` samples of shape `s` from NCHW order into `layout`'s order (`toLayout`), or back
/// (`!toLayout`). `src` and `dst` must not overlap.
template <typename T>
void convertImages(ImageLayout layout, const Shape& s, std::int64_t k, const T* src, T* dst,
                   bool toLayout) {
  const std::int64_t n = k * s.numel();
  if (!differsFromNchw(layout, s)) {
    for (std::int64_t i = 0; i < n; ++i)
      dst[i] = src[i];
    return;
  }
  const std::int64_t c = s.channels(), hw = s.height() * s.width();
  for (std::int64_t b = 0; b < k; ++b) {
    const std::int64_t base = b * c * hw;
    for (std::int64_t ch = 0; ch < c; ++ch) {
      for (std::int64_t p = 0; p < hw; ++p) {
        const std::int64_t nchw = base + ch * hw + p, nhwc = base + p * c + ch;
        if (toLayout) {
          dst[nhwc] = src[nchw];
        } else {
          dst[nchw] = src[nhwc];
        }
      }
    }
  }
}

}  // namespace swapscope::rt
