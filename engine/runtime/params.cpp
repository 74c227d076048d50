// SPDX-License-Identifier: MIT
#include "runtime/params.h"

#include <cmath>
#include <functional>
#include <string>

#include "analysis/layer_cost.h"
#include "runtime/rng.h"

namespace swapscope::rt {
namespace {

std::uint64_t nameHash(const std::string& name) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : name)
    h = (h ^ c) * 0x100000001b3ull;
  return h;
}

}  // namespace

std::vector<float> initialWeights(const Network& net, int layer, std::uint64_t seed) {
  const Layer& l = net.layer(layer);
  const std::uint64_t s = deriveSeed(seed, nameHash(l.name));
  std::vector<float> w;
  switch (l.kind) {
    case LayerKind::Conv2d: {
      const auto& a = l.as<Conv2dAttrs>();
      const std::int64_t inC = net.inputShape(layer).channels();
      const std::int64_t n = a.out_channels * (inC / a.groups) * a.kernel_h * a.kernel_w;
      const double stddev =
          std::sqrt(2.0 / static_cast<double>(a.out_channels * a.kernel_h * a.kernel_w));
      w.resize(static_cast<std::size_t>(n + (a.bias ? a.out_channels : 0)), 0.0f);
      for (std::int64_t i = 0; i < n; ++i)
        w[static_cast<std::size_t>(i)] =
            static_cast<float>(stddev * normal01(s, static_cast<std::uint64_t>(i)));
      break;
    }
    case LayerKind::Linear: {
      const auto& a = l.as<LinearAttrs>();
      const std::int64_t in = net.inputShape(layer).numel();
      const std::int64_t n = in * a.out_features + (a.bias ? a.out_features : 0);
      const double bound = 1.0 / std::sqrt(static_cast<double>(in));
      w.resize(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i)
        w[static_cast<std::size_t>(i)] =
            static_cast<float>(bound * (2.0 * uniform01(s, static_cast<std::uint64_t>(i)) - 1.0));
      break;
    }
    case LayerKind::BatchNorm2d: {
      const std::int64_t c = net.outputShape(layer).channels();
      w.assign(static_cast<std::size_t>(2 * c), 0.0f);
      std::fill(w.begin(), w.begin() + c, 1.0f);
      break;
    }
    default:
      break;
  }
  return w;
}

std::vector<float> initialRunningStats(const Network& net, int layer) {
  if (net.layer(layer).kind != LayerKind::BatchNorm2d) return {};
  const std::int64_t c = net.outputShape(layer).channels();
  std::vector<float> r(static_cast<std::size_t>(2 * c), 0.0f);
  std::fill(r.begin() + c, r.end(), 1.0f);
  return r;
}

}  // namespace swapscope::rt
