// SPDX-License-Identifier: MIT
#include "graph/shape_inference.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "graph/json_guard.h"

namespace swapscope {
namespace {

/// "[n" + rest + "]", appended (GCC 12 at -O3 misreads a literal + a temporary string as an
/// overlapping copy).
std::string shapeText(std::int64_t n, std::string_view rest = "") {
  std::string s = "[";
  s += std::to_string(n);
  s += rest;
  s += ']';
  return s;
}

/// A number as written in JSON, shortest form (1e-07, not 0.000000).
std::string number(double v) {
  return echoJson(nlohmann::json(v));
}

[[noreturn]] void mismatch(const Layer& l, const std::string& expected, const InputShape& got) {
  throwBadInput(describeLayer(l) + ": expected input shape " + expected + ", got " +
                got.shape->toString() + " from '" + echoText(*got.producer) + "'");
}

void requireAtMostLimit(const Layer& l, const char* field, std::int64_t v) {
  if (v > kMaxLayerInteger) {
    throwBadInput(describeLayer(l) + ": field '" + field + "' must be at most " +
                  std::to_string(kMaxLayerInteger) + ", got " + std::to_string(v));
  }
}

void requirePositive(const Layer& l, const char* field, std::int64_t v) {
  if (v <= 0) {
    throwBadInput(describeLayer(l) + ": field '" + field + "' must be positive, got " +
                  std::to_string(v));
  }
  requireAtMostLimit(l, field, v);
}

void requireNonNegative(const Layer& l, const char* field, std::int64_t v) {
  if (v < 0) {
    throwBadInput(describeLayer(l) + ": field '" + field + "' must not be negative, got " +
                  std::to_string(v));
  }
  requireAtMostLimit(l, field, v);
}

/// Kernel and stride positive, padding not negative (convolution and pooling windows), all
/// within the 32-bit limit.
void requireWindow(const Layer& l, std::int64_t kh, std::int64_t kw, std::int64_t sh,
                   std::int64_t sw, std::int64_t ph, std::int64_t pw) {
  requirePositive(l, "kernel", std::min(kh, kw));
  requirePositive(l, "stride", std::min(sh, sw));
  requireNonNegative(l, "padding", std::min(ph, pw));
  requireAtMostLimit(l, "kernel", std::max(kh, kw));
  requireAtMostLimit(l, "stride", std::max(sh, sw));
  requireAtMostLimit(l, "padding", std::max(ph, pw));
}

const Shape& requireImage(const Layer& l, const InputShape& in) {
  if (!in.shape->isImage()) mismatch(l, "[C,H,W]", in);
  return *in.shape;
}

std::int64_t windowAxis(const Layer& l, const InputShape& in, const char* axis, std::int64_t size,
                        std::int64_t kernel, std::int64_t stride, std::int64_t pad, bool ceil) {
  const std::int64_t out = windowedExtent(size, kernel, stride, pad, ceil);
  if (out < 1) {
    throwBadInput(describeLayer(l) + ": a " + std::to_string(kernel) +
                  "-wide window with padding " + std::to_string(pad) + " does not fit the input " +
                  axis + " of " + std::to_string(size) + " (input " + in.shape->toString() +
                  " from '" + echoText(*in.producer) + "')");
  }
  return out;
}

Shape conv(const Layer& l, const InputShape& in) {
  const auto& a = l.as<Conv2dAttrs>();
  const Shape& s = requireImage(l, in);
  requirePositive(l, "out_channels", a.out_channels);
  requireWindow(l, a.kernel_h, a.kernel_w, a.stride_h, a.stride_w, a.pad_h, a.pad_w);
  requirePositive(l, "groups", a.groups);
  if (a.in_channels && *a.in_channels != s.channels()) {
    mismatch(l, shapeText(*a.in_channels, ",H,W"), in);
  }
  if (s.channels() % a.groups != 0 || a.out_channels % a.groups != 0) {
    throwBadInput(describeLayer(l) + ": groups=" + std::to_string(a.groups) +
                  " must divide both the input channels (" + std::to_string(s.channels()) +
                  ") and out_channels (" + std::to_string(a.out_channels) + ")");
  }
  const auto h = windowAxis(l, in, "height", s.height(), a.kernel_h, a.stride_h, a.pad_h, false);
  const auto w = windowAxis(l, in, "width", s.width(), a.kernel_w, a.stride_w, a.pad_w, false);
  return Shape{{a.out_channels, h, w}};
}

Shape pool(const Layer& l, const InputShape& in) {
  const auto& a = l.as<PoolAttrs>();
  const Shape& s = requireImage(l, in);
  requireWindow(l, a.kernel_h, a.kernel_w, a.stride_h, a.stride_w, a.pad_h, a.pad_w);
  if (2 * a.pad_h > a.kernel_h || 2 * a.pad_w > a.kernel_w) {
    throwBadInput(describeLayer(l) + ": padding must be at most half the kernel size (padding " +
                  std::to_string(a.pad_h) + "x" + std::to_string(a.pad_w) + ", kernel " +
                  std::to_string(a.kernel_h) + "x" + std::to_string(a.kernel_w) + ")");
  }
  const auto h =
      windowAxis(l, in, "height", s.height(), a.kernel_h, a.stride_h, a.pad_h, a.ceil_mode);
  const auto w =
      windowAxis(l, in, "width", s.width(), a.kernel_w, a.stride_w, a.pad_w, a.ceil_mode);
  return Shape{{s.channels(), h, w}};
}

Shape sameShapes(const Layer& l, const std::vector<InputShape>& in) {
  for (std::size_t i = 1; i < in.size(); ++i) {
    if (!(*in[i].shape == *in[0].shape)) mismatch(l, in[0].shape->toString(), in[i]);
  }
  return *in[0].shape;
}

Shape concat(const Layer& l, const std::vector<InputShape>& in) {
  const Shape& first = *in[0].shape;
  if (first.rank() == 0) mismatch(l, "[C,...]", in[0]);
  std::int64_t channels = 0;
  for (const InputShape& x : in) {
    Shape expected = first;
    expected.dims[0] = x.shape->rank() > 0 ? x.shape->dims[0] : 0;
    if (!(*x.shape == expected)) {
      std::string e = "[C";
      for (std::size_t d = 1; d < first.rank(); ++d) {
        e += ',';
        e += std::to_string(first.dims[d]);
      }
      mismatch(l, e + "]", x);
    }
    if (__builtin_add_overflow(channels, x.shape->dims[0], &channels)) {
      throwBadInput(describeLayer(l) +
                    ": the channels of its inputs add up beyond 64-bit integers");
    }
  }
  Shape outShape = first;
  outShape.dims[0] = channels;
  return outShape;
}

/// Two inputs of the same shape, or a per-channel [C,1,1] and a [C,H,W] (either order): the
/// output has the larger shape.
Shape mul(const Layer& l, const std::vector<InputShape>& in) {
  const Shape& a = *in[0].shape;
  const Shape& b = *in[1].shape;
  if (a == b) return a;
  const auto perChannelOf = [](const Shape& small, const Shape& big) {
    return small.isImage() && big.isImage() && small.channels() == big.channels() &&
           small.height() == 1 && small.width() == 1;
  };
  if (perChannelOf(a, b)) return b;
  if (perChannelOf(b, a)) return a;
  throwBadInput(describeLayer(l) + ": its inputs " + a.toString() + " from '" +
                echoText(*in[0].producer) + "' and " + b.toString() + " from '" +
                echoText(*in[1].producer) +
                "' are neither of the same shape nor [C,1,1] and [C,H,W]");
}

void requireFinite(const Layer& l, const char* field, double v) {
  if (!std::isfinite(v))
    throwBadInput(describeLayer(l) + ": field '" + field + "' must be a finite number");
}

}  // namespace

std::int64_t windowedExtent(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                            std::int64_t pad, bool ceil_mode) {
  const std::int64_t span = in + 2 * pad - kernel;
  if (span < 0) return 0;
  std::int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

Shape inferOutputShape(const Layer& l, const std::vector<InputShape>& in) {
  switch (l.kind) {
    case LayerKind::Input: {
      const Shape& s = l.as<InputAttrs>().shape;
      if (s.rank() != 1 && s.rank() != 3) {
        throwBadInput(describeLayer(l) + ": field 'shape' must be [C,H,W] or [F], got " +
                      s.toString());
      }
      for (auto d : s.dims) {
        if (d <= 0)
          throwBadInput(describeLayer(l) + ": field 'shape' must be positive, got " + s.toString());
        if (d > kMaxLayerInteger) {
          throwBadInput(describeLayer(l) + ": field 'shape' must be at most " +
                        std::to_string(kMaxLayerInteger) + ", got " + s.toString());
        }
      }
      return s;
    }
    case LayerKind::Conv2d:
      return conv(l, in[0]);
    case LayerKind::BatchNorm2d: {
      const auto& a = l.as<BatchNormAttrs>();
      const Shape& s = requireImage(l, in[0]);
      if (a.num_features && *a.num_features != s.channels()) {
        mismatch(l, shapeText(*a.num_features, ",H,W"), in[0]);
      }
      if (!(a.eps > 0)) throwBadInput(describeLayer(l) + ": field 'eps' must be positive");
      if (!(a.momentum >= 0 && a.momentum <= 1)) {
        throwBadInput(describeLayer(l) + ": field 'momentum' must be in [0,1], got " +
                      number(a.momentum));
      }
      return s;
    }
    case LayerKind::ReLU:
      return *in[0].shape;
    case LayerKind::Dropout: {
      const double p = l.as<DropoutAttrs>().p;
      if (!(p >= 0 && p < 1)) {
        throwBadInput(describeLayer(l) + ": field 'p' must be in [0,1), got " + number(p));
      }
      return *in[0].shape;
    }
    case LayerKind::MaxPool2d:
    case LayerKind::AvgPool2d:
      return pool(l, in[0]);
    case LayerKind::AdaptiveAvgPool2d: {
      const auto& a = l.as<AdaptivePoolAttrs>();
      const Shape& s = requireImage(l, in[0]);
      requirePositive(l, "output_size", a.out_h);
      requirePositive(l, "output_size", a.out_w);
      return Shape{{s.channels(), a.out_h, a.out_w}};
    }
    case LayerKind::Linear: {
      const auto& a = l.as<LinearAttrs>();
      requirePositive(l, "out_features", a.out_features);
      if (!in[0].shape->isFlat()) {
        mismatch(l, a.in_features ? shapeText(*a.in_features) : "[F]", in[0]);
      }
      if (a.in_features && *a.in_features != in[0].shape->dims[0]) {
        mismatch(l, shapeText(*a.in_features), in[0]);
      }
      return Shape{{a.out_features}};
    }
    case LayerKind::Add:
      return sameShapes(l, in);
    case LayerKind::Mul:
      return mul(l, in);
    case LayerKind::Clip: {
      const auto& a = l.as<ClipAttrs>();
      if (a.min) requireFinite(l, "min", *a.min);
      if (a.max) requireFinite(l, "max", *a.max);
      if (a.min && a.max && !(*a.min <= *a.max)) {
        throwBadInput(describeLayer(l) + ": field 'min' (" + number(*a.min) +
                      ") must not exceed field 'max' (" + number(*a.max) + ")");
      }
      return *in[0].shape;
    }
    case LayerKind::HardSigmoid: {
      const auto& a = l.as<HardSigmoidAttrs>();
      requireFinite(l, "alpha", a.alpha);
      requireFinite(l, "beta", a.beta);
      if (!(a.alpha > 0)) throwBadInput(describeLayer(l) + ": field 'alpha' must be positive");
      return *in[0].shape;
    }
    case LayerKind::Sigmoid:
    case LayerKind::HardSwish:
      return *in[0].shape;
    case LayerKind::Concat:
      return concat(l, in);
    case LayerKind::Flatten:
      return Shape{{in[0].shape->numel()}};
    case LayerKind::SoftmaxCrossEntropy: {
      if (!in[0].shape->isFlat() || in[0].shape->dims[0] < 2) mismatch(l, "[classes >= 2]", in[0]);
      return Shape{{}};
    }
  }
  throwBadInput(describeLayer(l) + ": unhandled layer kind");
}

}  // namespace swapscope
