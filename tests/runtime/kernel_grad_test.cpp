// SPDX-License-Identifier: MIT
// Every CPU kernel against a naive double-precision reference: the forward output, and the
// backward gradients against central finite differences of the reference. The objective is
// L = sum_j out_j * R_j for a fixed random R (the loss layer: L = the loss itself).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "analysis/layer_cost.h"
#include "graph/builder.h"
#include "graph/shape_inference.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/rng.h"

namespace swapscope::rt {
namespace {

using Vec = std::vector<double>;
/// The reference forward: inputs and weights in, output out (all in double).
using RefFn = std::function<Vec(const std::vector<Vec>& in, const Vec& w)>;

Vec randomVec(std::size_t n, std::uint64_t seed, double lo, double hi) {
  Vec v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = lo + (hi - lo) * uniform01(seed, i);
  return v;
}

/// Distinct values 0.01 apart in random order: no ties for max pooling, none near relu's kink.
Vec separatedVec(std::size_t n, std::uint64_t seed) {
  Vec v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = (static_cast<double>(i) - static_cast<double>(n) / 2.0 + 0.5) * 0.01;
  for (std::size_t i = n - 1; i > 0; --i)
    std::swap(v[i], v[static_cast<std::size_t>(uniform01(seed, i) * static_cast<double>(i + 1))]);
  return v;
}

std::vector<float> toFloat(const Vec& v) {
  return {v.begin(), v.end()};
}

struct GradCase {
  GradCase(Network n, std::string l, std::int64_t kk = 2)
      : net(std::move(n)), layer(std::move(l)), k(kk) {}
  Network net;
  std::string layer;
  std::int64_t k = 2;
  RefFn ref;
  bool separated = false;  ///< use separatedVec for the inputs
  double weight_lo = -0.5, weight_hi = 0.5;
  std::vector<std::int32_t> labels;  ///< for the loss
  double tolerance = 2e-3;
};

/// `v` (k samples of shape `s`, NCHW) in `layout`'s order, or back from it (`!toLayout`).
template <typename T>
std::vector<T> converted(ImageLayout layout, const Shape& s, std::int64_t k, const std::vector<T>& v,
                         bool toLayout) {
  std::vector<T> out(v.size());
  if (static_cast<std::int64_t>(v.size()) != k * s.numel()) return v;  // the loss's scalar
  convertImages(layout, s, k, v.data(), out.data(), toLayout);
  return out;
}

void checkGradientsIn(GradCase c, ImageLayout layout) {
  SCOPED_TRACE(layout == ImageLayout::Nhwc ? "NHWC image FMs" : "NCHW image FMs");
  DeviceOptions options;
  options.cpu_layout = layout;
  auto device = createCpuDevice(options);
  const Network& net = c.net;
  const int layer = net.indexOf(c.layer);
  const std::int64_t k = c.k;
  const auto costs = computeLayerCosts(net);
  const LayerCost& cost = costs[layer];
  auto kernel = device->createKernel(net, computeLayerCosts(net), layer, k);
  const bool isLoss = net.layer(layer).kind == LayerKind::SoftmaxCrossEntropy;

  // Inputs and weights, in double for the reference and float for the kernel.
  const auto& srcs = net.inputsOf(layer);
  std::vector<Vec> in;
  for (std::size_t i = 0; i < srcs.size(); ++i) {
    const auto n = static_cast<std::size_t>(k * net.outputShape(srcs[i]).numel());
    in.push_back(c.separated ? separatedVec(n, 100 + i) : randomVec(n, 100 + i, -1.0, 1.0));
  }
  Vec w = randomVec(static_cast<std::size_t>(cost.params), 7, c.weight_lo, c.weight_hi);
  // The kernel sees its FMs in the device's layout; the references and the checks use NCHW.
  const Shape& outShape = net.outputShape(layer);
  std::vector<std::vector<float>> inF;
  for (std::size_t i = 0; i < in.size(); ++i)
    inF.push_back(converted(layout, net.outputShape(srcs[i]), k, toFloat(in[i]), true));
  std::vector<float> wF = toFloat(w);
  std::vector<float> running(static_cast<std::size_t>(cost.running_stats), 0.0f);
  const std::int64_t outElems = isLoss ? 1 : k * net.outputShape(layer).numel();
  std::vector<float> out(static_cast<std::size_t>(outElems), std::nanf(""));
  std::vector<std::byte> saved(static_cast<std::size_t>(cost.reads.saved.at(k)) + 1);

  KernelArgs a;
  for (auto& v : inF)
    a.in.push_back(v.data());
  a.out = out.data();
  a.weights = wF.data();
  a.running_stats = running.data();
  a.saved = saved.data();
  a.labels = c.labels.data();
  a.training = true;
  a.seed = 42;
  kernel->forward(a);
  const std::vector<float> outNchw = converted(layout, outShape, k, out, false);

  // For dropout the reference needs the mask the kernel drew (in NCHW order).
  std::vector<std::uint8_t> maskNchw;
  if (net.layer(layer).kind == LayerKind::Dropout) {
    const auto* raw = reinterpret_cast<const std::uint8_t*>(saved.data());
    maskNchw = converted(layout, outShape, k, std::vector<std::uint8_t>(raw, raw + outElems),
                         false);
    const std::uint8_t* mask = maskNchw.data();
    const double p = net.layer(layer).as<DropoutAttrs>().p;
    c.ref = [mask, p](const std::vector<Vec>& x, const Vec&) {
      Vec o(x[0].size());
      for (std::size_t i = 0; i < o.size(); ++i)
        o[i] = mask[i] ? x[0][i] / (1.0 - p) : 0.0;
      return o;
    };
  }

  const Vec expected = c.ref(in, w);
  ASSERT_EQ(expected.size(), outNchw.size());
  for (std::size_t i = 0; i < outNchw.size(); ++i)
    ASSERT_NEAR(outNchw[i], expected[i], 1e-4 * (1 + std::abs(expected[i]))) << "output " << i;

  // Backward with R as the output gradient.
  const Vec r = isLoss ? Vec{1.0} : randomVec(out.size(), 99, -1.0, 1.0);
  const std::vector<float> rF = converted(layout, outShape, k, toFloat(r), true);
  std::vector<std::vector<float>> inGrad;
  for (const Vec& v : in)
    inGrad.emplace_back(v.size(), std::nanf(""));
  std::vector<float> wGrad(w.size(), std::nanf(""));
  a.out_grad = isLoss ? nullptr : rF.data();
  for (auto& g : inGrad)
    a.in_grad.push_back(g.data());
  a.accumulate.assign(in.size(), false);
  a.weight_grad = wGrad.data();
  kernel->backward(a);
  std::vector<std::vector<float>> inGradNchw;
  for (std::size_t i = 0; i < in.size(); ++i)
    inGradNchw.push_back(converted(layout, net.outputShape(srcs[i]), k, inGrad[i], false));

  auto objective = [&](const std::vector<Vec>& x, const Vec& ww) {
    const Vec o = c.ref(x, ww);
    double s = 0;
    for (std::size_t i = 0; i < o.size(); ++i)
      s += o[i] * r[i];
    return s;
  };
  const double h = 1e-4;
  for (std::size_t i = 0; i < in.size(); ++i) {
    for (std::size_t j = 0; j < in[i].size(); ++j) {
      auto x = in;
      x[i][j] += h;
      const double up = objective(x, w);
      x[i][j] -= 2 * h;
      const double down = objective(x, w);
      const double numeric = (up - down) / (2 * h);
      ASSERT_NEAR(inGradNchw[i][j], numeric, c.tolerance * (1 + std::abs(numeric)))
          << c.layer << ": d/d input " << i << "[" << j << "]";
    }
  }
  for (std::size_t j = 0; j < w.size(); ++j) {
    Vec ww = w;
    ww[j] += h;
    const double up = objective(in, ww);
    ww[j] -= 2 * h;
    const double down = objective(in, ww);
    const double numeric = (up - down) / (2 * h);
    ASSERT_NEAR(wGrad[j], numeric, c.tolerance * (1 + std::abs(numeric)))
        << c.layer << ": d/d weight " << j;
  }

  // Accumulation: the same gradients are added to what the buffers already hold.
  std::vector<std::vector<float>> first = inGrad;
  for (auto& g : inGrad)
    std::fill(g.begin(), g.end(), 1.0f);
  a.accumulate.assign(in.size(), true);
  kernel->backward(a);
  for (std::size_t i = 0; i < in.size(); ++i) {
    for (std::size_t j = 0; j < in[i].size(); ++j)
      ASSERT_NEAR(inGrad[i][j], 1.0f + first[i][j], 1e-6) << c.layer << ": accumulated input " << i;
  }
}

/// The kernel with its image FMs in either order: NCHW and NHWC (the CPU backend's default).
void checkGradients(const GradCase& c) {
  for (ImageLayout layout : {ImageLayout::Nchw, ImageLayout::Nhwc}) {
    checkGradientsIn(c, layout);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// ----- Naive double references ----------------------------------------------------------------

Vec refConv(const Vec& x, const Vec& w, std::int64_t k, std::int64_t c, std::int64_t hgt,
            std::int64_t wid, std::int64_t o, std::int64_t kh, std::int64_t kw, std::int64_t s,
            std::int64_t p, std::int64_t groups, bool bias) {
  const std::int64_t oh = (hgt + 2 * p - kh) / s + 1, ow = (wid + 2 * p - kw) / s + 1;
  const std::int64_t cg = c / groups, og = o / groups;
  Vec y(static_cast<std::size_t>(k * o * oh * ow), 0.0);
  for (std::int64_t n = 0; n < k; ++n)
    for (std::int64_t oc = 0; oc < o; ++oc)
      for (std::int64_t yy = 0; yy < oh; ++yy)
        for (std::int64_t xx = 0; xx < ow; ++xx) {
          double acc = bias ? w[static_cast<std::size_t>(o * cg * kh * kw + oc)] : 0.0;
          const std::int64_t g = oc / og;
          for (std::int64_t ic = 0; ic < cg; ++ic)
            for (std::int64_t i = 0; i < kh; ++i)
              for (std::int64_t j = 0; j < kw; ++j) {
                const std::int64_t iy = yy * s - p + i, ix = xx * s - p + j;
                if (iy < 0 || iy >= hgt || ix < 0 || ix >= wid) continue;
                acc += w[static_cast<std::size_t>(((oc * cg + ic) * kh + i) * kw + j)] *
                       x[static_cast<std::size_t>(((n * c + g * cg + ic) * hgt + iy) * wid + ix)];
              }
          y[static_cast<std::size_t>(((n * o + oc) * oh + yy) * ow + xx)] = acc;
        }
  return y;
}

/// Max or average pooling with PyTorch's ceil_mode and count_include_pad.
Vec refPool(const Vec& x, std::int64_t k, std::int64_t c, std::int64_t hgt, std::int64_t wid,
            std::int64_t ker, std::int64_t s, std::int64_t p, bool ceil, bool max) {
  const std::int64_t oh = windowedExtent(hgt, ker, s, p, ceil);
  const std::int64_t ow = windowedExtent(wid, ker, s, p, ceil);
  Vec y;
  for (std::int64_t n = 0; n < k * c; ++n)
    for (std::int64_t yy = 0; yy < oh; ++yy)
      for (std::int64_t xx = 0; xx < ow; ++xx) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        for (std::int64_t i = 0; i < ker; ++i)
          for (std::int64_t j = 0; j < ker; ++j) {
            const std::int64_t iy = yy * s - p + i, ix = xx * s - p + j;
            if (iy < 0 || iy >= hgt || ix < 0 || ix >= wid) continue;
            const double v = x[static_cast<std::size_t>((n * hgt + iy) * wid + ix)];
            best = std::max(best, v);
            sum += v;
          }
        y.push_back(max ? best : sum / static_cast<double>(ker * ker));
      }
  return y;
}

Network chain(Shape in, const std::function<std::string(NetworkBuilder&, const std::string&)>& f) {
  NetworkBuilder b("grad");
  auto x = b.input("data", std::move(in));
  x = f(b, x);
  x = b.flatten("flat", x);
  x = b.linear("head", x, 3);
  b.loss("loss", x);
  return std::move(b).build();
}

TEST(KernelGradients, Conv2dWithStridePaddingAndBias) {
  GradCase c{chain(Shape{{3, 5, 5}},
                   [](NetworkBuilder& b, const std::string& x) {
                     return b.conv("t", x, 4, 3, 2, 1, /*bias=*/true);
                   }),
             "t"};
  c.ref = [](const std::vector<Vec>& x, const Vec& w) {
    return refConv(x[0], w, 2, 3, 5, 5, 4, 3, 3, 2, 1, 1, true);
  };
  checkGradients(c);
}

TEST(KernelGradients, Conv2dOneByOneStrideTwoGrouped) {
  // The 1x1 stride-2 projection of a ResNet (negative right padding in oneDNN's terms), grouped.
  GradCase c{chain(Shape{{4, 6, 6}},
                   [](NetworkBuilder& b, const std::string& x) {
                     return b.conv("t", x, 6, 1, 2, 0, /*bias=*/false, /*groups=*/2);
                   }),
             "t"};
  c.ref = [](const std::vector<Vec>& x, const Vec& w) {
    return refConv(x[0], w, 2, 4, 6, 6, 6, 1, 1, 2, 0, 2, false);
  };
  checkGradients(c);
}

TEST(KernelGradients, Linear) {
  NetworkBuilder b("grad");
  auto x = b.input("data", Shape{{5}});
  x = b.linear("t", x, 4);
  b.loss("loss", x);
  GradCase c{std::move(b).build(), "t", 3};
  c.ref = [](const std::vector<Vec>& in, const Vec& w) {
    Vec y(12);
    for (int n = 0; n < 3; ++n)
      for (int o = 0; o < 4; ++o) {
        double acc = w[static_cast<std::size_t>(20 + o)];
        for (int i = 0; i < 5; ++i)
          acc +=
              w[static_cast<std::size_t>(o * 5 + i)] * in[0][static_cast<std::size_t>(n * 5 + i)];
        y[static_cast<std::size_t>(n * 4 + o)] = acc;
      }
    return y;
  };
  checkGradients(c);
}

TEST(KernelGradients, BatchNormTraining) {
  GradCase c{chain(Shape{{3, 2, 2}},
                   [](NetworkBuilder& b, const std::string& x) { return b.batchNorm("t", x); }),
             "t", 3};
  c.weight_lo = 0.5;
  c.weight_hi = 1.5;
  c.ref = [](const std::vector<Vec>& x, const Vec& w) {
    const int k = 3, ch = 3, hw = 4;
    Vec y(x[0].size());
    for (int cc = 0; cc < ch; ++cc) {
      double mean = 0, var = 0;
      for (int n = 0; n < k; ++n)
        for (int i = 0; i < hw; ++i)
          mean += x[0][static_cast<std::size_t>((n * ch + cc) * hw + i)];
      mean /= k * hw;
      for (int n = 0; n < k; ++n)
        for (int i = 0; i < hw; ++i) {
          const double d = x[0][static_cast<std::size_t>((n * ch + cc) * hw + i)] - mean;
          var += d * d;
        }
      var /= k * hw;
      for (int n = 0; n < k; ++n)
        for (int i = 0; i < hw; ++i) {
          const auto j = static_cast<std::size_t>((n * ch + cc) * hw + i);
          y[j] = w[static_cast<std::size_t>(cc)] * (x[0][j] - mean) / std::sqrt(var + 1e-5) +
                 w[static_cast<std::size_t>(ch + cc)];
        }
    }
    return y;
  };
  c.tolerance = 5e-3;
  checkGradients(c);
}

TEST(KernelGradients, ReLU) {
  GradCase c{chain(Shape{{2, 3, 3}},
                   [](NetworkBuilder& b, const std::string& x) {
                     return b.relu("t", b.conv("c", x, 2, 1));
                   }),
             "t"};
  c.separated = true;
  c.ref = [](const std::vector<Vec>& x, const Vec&) {
    Vec y(x[0].size());
    for (std::size_t i = 0; i < y.size(); ++i)
      y[i] = std::max(0.0, x[0][i]);
    return y;
  };
  checkGradients(c);
}

/// An elementwise layer `make` after a 1x1 convolution, against `f` applied to each value.
void checkElementwise(const std::function<std::string(NetworkBuilder&, const std::string&)>& make,
                      const std::function<double(double)>& f) {
  GradCase c{
      chain(Shape{{2, 3, 3}},
            [&](NetworkBuilder& b, const std::string& x) { return make(b, b.conv("c", x, 2, 1)); }),
      "t"};
  c.separated = true;  // values 0.01 apart, none within 0.005 of a kink
  c.ref = [f](const std::vector<Vec>& x, const Vec&) {
    Vec y(x[0].size());
    for (std::size_t i = 0; i < y.size(); ++i)
      y[i] = f(x[0][i]);
    return y;
  };
  checkGradients(c);
}

TEST(KernelGradients, ClipBothBoundsInsideTheInputs) {
  checkElementwise(
      [](NetworkBuilder& b, const std::string& x) { return b.clip("t", x, -0.1, 0.12); },
      [](double v) { return std::min(0.12, std::max(-0.1, v)); });
}

TEST(KernelGradients, ClipWithOnlyAnUpperBound) {
  checkElementwise(
      [](NetworkBuilder& b, const std::string& x) { return b.clip("t", x, std::nullopt, 0.04); },
      [](double v) { return std::min(0.04, v); });
}

TEST(KernelGradients, Sigmoid) {
  checkElementwise([](NetworkBuilder& b, const std::string& x) { return b.sigmoid("t", x); },
                   [](double v) { return 1.0 / (1.0 + std::exp(-v)); });
}

TEST(KernelGradients, HardSigmoidSaturatingOnBothSides) {
  checkElementwise(
      [](NetworkBuilder& b, const std::string& x) { return b.hardSigmoid("t", x, 5.0, 0.5); },
      [](double v) { return std::min(1.0, std::max(0.0, 5.0 * v + 0.5)); });
}

TEST(KernelGradients, HardSwish) {
  checkElementwise([](NetworkBuilder& b, const std::string& x) { return b.hardSwish("t", x); },
                   [](double v) { return v * std::min(1.0, std::max(0.0, v / 6.0 + 0.5)); });
}

TEST(KernelGradients, MulOfTheSameShape) {
  GradCase c{chain(Shape{{2, 3, 3}},
                   [](NetworkBuilder& b, const std::string& x) {
                     return b.mul("t", b.conv("c1", x, 2, 1), b.conv("c2", x, 2, 1));
                   }),
             "t"};
  c.ref = [](const std::vector<Vec>& x, const Vec&) {
    Vec y(x[0].size());
    for (std::size_t i = 0; i < y.size(); ++i)
      y[i] = x[0][i] * x[1][i];
    return y;
  };
  checkGradients(c);
}

TEST(KernelGradients, MulOfAPerChannelScaleAndAFeatureMap) {
  // Squeeze-and-excitation: [C,1,1] x [C,H,W], the scale second as torchvision writes it.
  GradCase c{chain(Shape{{2, 3, 3}},
                   [](NetworkBuilder& b, const std::string& x) {
                     auto fm = b.conv("c1", x, 2, 1);
                     auto scale = b.conv("c2", b.adaptiveAvgPool("gap", x, 1, 1), 2, 1);
                     return b.mul("t", fm, scale);
                   }),
             "t"};
  c.ref = [](const std::vector<Vec>& x, const Vec&) {
    Vec y(x[0].size());
    for (std::size_t i = 0; i < y.size(); ++i)
      y[i] = x[0][i] * x[1][i / 9];  // 3x3 planes, one scale per (sample, channel)
    return y;
  };
  checkGradients(c);
}

TEST(KernelGradients, MaxPoolCeilModeWithPadding) {
  GradCase c{chain(Shape{{2, 5, 5}},
                   [](NetworkBuilder& b, const std::string& x) {
                     return b.maxPool("t", b.conv("c", x, 2, 1), 3, 2, 1, /*ceil_mode=*/true);
                   }),
             "t"};
  c.separated = true;
  c.ref = [](const std::vector<Vec>& x, const Vec&) {
    return refPool(x[0], 2, 2, 5, 5, 3, 2, 1, true, true);
  };
  checkGradients(c);
}

TEST(KernelGradients, AvgPool) {
  GradCase c{chain(Shape{{2, 6, 6}},
                   [](NetworkBuilder& b, const std::string& x) {
                     return b.avgPool("t", b.conv("c", x, 2, 1), 2, 2, 0);
                   }),
             "t"};
  c.ref = [](const std::vector<Vec>& x, const Vec&) {
    return refPool(x[0], 2, 2, 6, 6, 2, 2, 0, false, false);
  };
  checkGradients(c);
}

TEST(KernelGradients, AdaptiveAvgPoolUnevenWindows) {
  GradCase c{chain(Shape{{2, 5, 7}},
                   [](NetworkBuilder& b, const std::string& x) {
                     return b.adaptiveAvgPool("t", b.conv("c", x, 2, 1), 3, 2);
                   }),
             "t"};
  c.ref = [](const std::vector<Vec>& x, const Vec&) {
    Vec y;
    for (int n = 0; n < 2 * 2; ++n)
      for (int yy = 0; yy < 3; ++yy)
        for (int xx = 0; xx < 2; ++xx) {
          const auto y0 = adaptiveStart(yy, 5, 3), y1 = adaptiveEnd(yy, 5, 3);
          const auto x0 = adaptiveStart(xx, 7, 2), x1 = adaptiveEnd(xx, 7, 2);
          double s = 0;
          for (auto i = y0; i < y1; ++i)
            for (auto j = x0; j < x1; ++j)
              s += x[0][static_cast<std::size_t>((n * 5 + i) * 7 + j)];
          y.push_back(s / static_cast<double>((y1 - y0) * (x1 - x0)));
        }
    return y;
  };
  checkGradients(c);
}

TEST(KernelGradients, AddOfThree) {
  GradCase c{chain(Shape{{2, 3, 3}},
                   [](NetworkBuilder& b, const std::string& x) {
                     auto a = b.conv("c1", x, 2, 1);
                     auto d = b.conv("c2", x, 2, 1);
                     return b.add("t", {a, d, a});
                   }),
             "t"};
  c.ref = [](const std::vector<Vec>& x, const Vec&) {
    Vec y(x[0].size());
    for (std::size_t i = 0; i < y.size(); ++i)
      y[i] = x[0][i] + x[1][i] + x[2][i];
    return y;
  };
  checkGradients(c);
}

TEST(KernelGradients, ConcatChannels) {
  GradCase c{chain(Shape{{2, 3, 3}},
                   [](NetworkBuilder& b, const std::string& x) {
                     return b.concat("t", {b.conv("c1", x, 1, 1), b.conv("c2", x, 3, 1)});
                   }),
             "t"};
  c.ref = [](const std::vector<Vec>& x, const Vec&) {
    Vec y;
    for (int n = 0; n < 2; ++n) {
      for (int i = 0; i < 9; ++i)
        y.push_back(x[0][static_cast<std::size_t>(n * 9 + i)]);
      for (int i = 0; i < 27; ++i)
        y.push_back(x[1][static_cast<std::size_t>(n * 27 + i)]);
    }
    return y;
  };
  checkGradients(c);
}

TEST(KernelGradients, FlattenAndDropout) {
  NetworkBuilder b("grad");
  auto x = b.input("data", Shape{{2, 2, 2}});
  x = b.conv("c", x, 2, 1);
  x = b.flatten("t", x);
  x = b.dropout("d", x, 0.4);
  x = b.linear("head", x, 3);
  b.loss("loss", x);
  Network net = std::move(b).build();
  GradCase flat{net, "t"};
  flat.ref = [](const std::vector<Vec>& in, const Vec&) { return in[0]; };
  checkGradients(flat);
  GradCase drop{net, "d", 4};
  checkGradients(drop);  // the reference is built from the kernel's mask
}

TEST(KernelGradients, SoftmaxCrossEntropy) {
  NetworkBuilder b("grad");
  auto x = b.input("data", Shape{{4}});
  x = b.linear("fc", x, 5);
  b.loss("t", x);
  GradCase c{std::move(b).build(), "t", 3};
  c.labels = {4, 0, 2};
  c.ref = [](const std::vector<Vec>& z, const Vec&) {
    const int labels[3] = {4, 0, 2};
    double total = 0;
    for (int n = 0; n < 3; ++n) {
      double sum = 0;
      for (int j = 0; j < 5; ++j)
        sum += std::exp(z[0][static_cast<std::size_t>(n * 5 + j)]);
      total += std::log(sum) - z[0][static_cast<std::size_t>(n * 5 + labels[n])];
    }
    return Vec{total / 3};
  };
  checkGradients(c);
}

TEST(KernelGradients, BatchNormUpdatesRunningStatisticsLikePyTorch) {
  NetworkBuilder b("bn");
  auto x = b.input("data", Shape{{1, 2, 1}});
  x = b.batchNorm("bn", x);
  x = b.flatten("f", x);
  x = b.linear("fc", x, 2);
  b.loss("loss", x);
  Network net = std::move(b).build();
  auto device = createCpuDevice();
  auto kernel = device->createKernel(net, computeLayerCosts(net), net.indexOf("bn"), 2);
  std::vector<float> in{1, 3, 5, 7}, out(4), w{1, 1, 0, 0}, running{0, 1}, saved(2);
  KernelArgs a;
  a.in = {in.data()};
  a.out = out.data();
  a.weights = w.data();
  a.running_stats = running.data();
  a.saved = saved.data();
  kernel->forward(a);
  // Batch mean 4, biased variance 5, unbiased 20/3; momentum 0.1.
  EXPECT_FLOAT_EQ(running[0], 0.4f);
  EXPECT_FLOAT_EQ(running[1], 0.9f + 0.1f * 20.0f / 3.0f);
}

}  // namespace
}  // namespace swapscope::rt
