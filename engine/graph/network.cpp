// SPDX-License-Identifier: MIT
#include "graph/network.h"

#include <algorithm>
#include <cstdio>
#include <queue>
#include <unordered_map>

#include "common/error.h"
#include "graph/json_guard.h"
#include "graph/shape_inference.h"

namespace swapscope {
namespace {

bool attrsMatchKind(const Layer& l) {
  switch (l.kind) {
    case LayerKind::Input:
      return std::holds_alternative<InputAttrs>(l.attrs);
    case LayerKind::Conv2d:
      return std::holds_alternative<Conv2dAttrs>(l.attrs);
    case LayerKind::BatchNorm2d:
      return std::holds_alternative<BatchNormAttrs>(l.attrs);
    case LayerKind::MaxPool2d:
    case LayerKind::AvgPool2d:
      return std::holds_alternative<PoolAttrs>(l.attrs);
    case LayerKind::AdaptiveAvgPool2d:
      return std::holds_alternative<AdaptivePoolAttrs>(l.attrs);
    case LayerKind::Linear:
      return std::holds_alternative<LinearAttrs>(l.attrs);
    case LayerKind::Dropout:
      return std::holds_alternative<DropoutAttrs>(l.attrs);
    case LayerKind::Clip:
      return std::holds_alternative<ClipAttrs>(l.attrs);
    case LayerKind::HardSigmoid:
      return std::holds_alternative<HardSigmoidAttrs>(l.attrs);
    case LayerKind::Sigmoid:
    case LayerKind::HardSwish:
    case LayerKind::Mul:
    case LayerKind::ReLU:
    case LayerKind::Add:
    case LayerKind::Concat:
    case LayerKind::Flatten:
    case LayerKind::SoftmaxCrossEntropy:
      return std::holds_alternative<NoAttrs>(l.attrs);
  }
  return false;
}

void checkArity(const Layer& l) {
  const std::size_t n = l.inputs.size();
  switch (l.kind) {
    case LayerKind::Input:
      if (n != 0)
        throwBadInput(describeLayer(l) + ": an input layer takes no inputs, got " +
                      std::to_string(n));
      return;
    case LayerKind::Add:
    case LayerKind::Concat:
      if (n < 2)
        throwBadInput(describeLayer(l) + ": needs at least 2 inputs, got " + std::to_string(n));
      return;
    case LayerKind::Mul:
      if (n != 2)
        throwBadInput(describeLayer(l) + ": needs exactly 2 inputs, got " + std::to_string(n));
      return;
    default:
      if (n != 1)
        throwBadInput(describeLayer(l) + ": needs exactly 1 input, got " + std::to_string(n));
  }
}

/// Finds one cycle among the layers that Kahn's algorithm could not order, for the message.
std::string describeCycle(const std::vector<Layer>& layers, const std::vector<std::vector<int>>& in,
                          const std::vector<bool>& ordered) {
  const int n = static_cast<int>(layers.size());
  std::vector<int> state(n, 0);  // 0 new, 1 on stack, 2 done
  std::vector<int> stack;
  std::vector<int> cycle;
  auto dfs = [&](auto&& self, int v) -> bool {
    state[v] = 1;
    stack.push_back(v);
    for (int u : in[v]) {
      if (ordered[u]) continue;
      if (state[u] == 1) {
        auto it = std::find(stack.begin(), stack.end(), u);
        cycle.assign(it, stack.end());
        return true;
      }
      if (state[u] == 0 && self(self, u)) return true;
    }
    stack.pop_back();
    state[v] = 2;
    return false;
  };
  for (int v = 0; v < n && cycle.empty(); ++v) {
    if (!ordered[v] && state[v] == 0) dfs(dfs, v);
  }
  // `cycle` follows input edges (reader -> producer); print it in data-flow order.
  std::reverse(cycle.begin(), cycle.end());
  if (!cycle.empty())
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  // At most a few layers named: a cycle through thousands is not read to its end.
  constexpr std::size_t kNamed = 8;
  std::string s;
  const auto name = [&](int v) {
    s += '\'';
    s += echoText(layers[static_cast<std::size_t>(v)].name);
    s += '\'';
  };
  for (std::size_t i = 0; i < cycle.size() && i < kNamed; ++i) {
    name(cycle[i]);
    s += " -> ";
  }
  if (cycle.size() > kNamed) {
    s += "... (" + std::to_string(cycle.size()) + " layers in the cycle)";
  } else if (!cycle.empty()) {
    name(cycle.front());
  }
  return s;
}

/// Records the inferred input sizes in the optional check fields (in_channels, num_features,
/// in_features), so that a network built from code equals the same network read from JSON.
/// They are integer fields of the network JSON, so they must fit what the reader accepts: a
/// network that is accepted must read back from its own file.
void fillInferredChecks(Layer& l, const std::vector<InputShape>& in) {
  const auto stateable = [&](std::int64_t v, const char* what) {
    if (v > kMaxLayerInteger) {
      throwBadInput(describeLayer(l) + ": its input has " + std::to_string(v) + " " + what +
                    ", more than " + std::to_string(kMaxLayerInteger));
    }
    return v;
  };
  if (auto* c = std::get_if<Conv2dAttrs>(&l.attrs))
    c->in_channels = stateable(in[0].shape->channels(), "channels");
  if (auto* b = std::get_if<BatchNormAttrs>(&l.attrs))
    b->num_features = stateable(in[0].shape->channels(), "channels");
  if (auto* f = std::get_if<LinearAttrs>(&l.attrs))
    f->in_features = stateable(in[0].shape->dims[0], "features");
}

/// Sizes are computed in 64-bit bytes at minibatch k; a per-sample output beyond 2^36 elements
/// (256 GiB of fp32) is no real network and would overflow at a large k.
void requireSaneSize(const Layer& l, const Shape& s) {
  constexpr std::int64_t kMaxElements = std::int64_t{1} << 36;
  std::int64_t n = 1;
  for (std::int64_t d : s.dims) {
    // A concat or a flatten can make a dimension no layer library indexes (32-bit sizes).
    if (d > kMaxLayerInteger) {
      throwBadInput(describeLayer(l) + ": output " + s.toString() + " has a dimension above " +
                    std::to_string(kMaxLayerInteger) +
                    ", the most the layer libraries index (32-bit sizes)");
    }
    if (__builtin_mul_overflow(n, d, &n) || n > kMaxElements) {
      throwBadInput(describeLayer(l) + ": output " + s.toString() +
                    " has more than 2^36 elements per sample");
    }
  }
}

}  // namespace

Network Network::build(std::string name, std::vector<Layer> layers) {
  if (layers.empty()) throwBadInput("network '" + echoText(name) + "' has no layers");
  const int n = static_cast<int>(layers.size());

  std::unordered_map<std::string, int> byName;
  for (int i = 0; i < n; ++i) {
    const Layer& l = layers[i];
    if (l.name.empty()) throwBadInput("layer #" + std::to_string(i) + " has an empty name");
    if (!byName.emplace(l.name, i).second) {
      throwBadInput("layer name '" + echoText(l.name) + "' is used twice (layers #" +
                    std::to_string(byName[l.name]) + " and #" + std::to_string(i) + ")");
    }
    if (!attrsMatchKind(l))
      throwBadInput(describeLayer(l) + ": attributes do not belong to this kind");
    checkArity(l);
  }

  // Resolve input names (in file order) and order the layers topologically. Kahn's algorithm
  // with a min-heap keeps the file order wherever the edges allow it, so a network written in
  // topological order reads back in exactly that order.
  std::vector<std::vector<int>> in(n);
  std::vector<std::vector<int>> out(n);
  std::vector<int> pending(n, 0);
  for (int i = 0; i < n; ++i) {
    for (const std::string& src : layers[i].inputs) {
      auto it = byName.find(src);
      if (it == byName.end()) {
        throwBadInput(describeLayer(layers[i]) + ": input '" + echoText(src) +
                      "' does not name any layer");
      }
      if (it->second == i)
        throwBadInput(describeLayer(layers[i]) + ": reads its own output (a cycle)");
      in[i].push_back(it->second);
      out[it->second].push_back(i);
      ++pending[i];
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<int> order;
  std::vector<bool> ordered(n, false);
  while (!ready.empty()) {
    const int v = ready.top();
    ready.pop();
    order.push_back(v);
    ordered[v] = true;
    for (int u : out[v]) {
      if (--pending[u] == 0) ready.push(u);
    }
  }
  if (static_cast<int>(order.size()) != n) {
    throwBadInput("network '" + echoText(name) +
                  "' has a cycle: " + describeCycle(layers, in, ordered));
  }

  Network net;
  net.m_name = std::move(name);
  std::vector<int> newId(n);
  for (int i = 0; i < n; ++i)
    newId[order[i]] = i;
  net.m_layers.reserve(n);
  net.m_inputs.resize(n);
  net.m_consumers.resize(n);
  for (int i = 0; i < n; ++i) {
    net.m_layers.push_back(std::move(layers[order[i]]));
    for (int src : in[order[i]]) {
      net.m_inputs[i].push_back(newId[src]);
      net.m_consumers[newId[src]].push_back(i);
    }
  }
  for (auto& c : net.m_consumers) {
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
  }

  for (int i = 0; i < n; ++i) {
    const Layer& l = net.m_layers[i];
    if (l.kind == LayerKind::Input) {
      if (net.m_inputLayer >= 0) {
        throwBadInput("network '" + echoText(net.m_name) + "' has two input layers, '" +
                      echoText(net.m_layers[net.m_inputLayer].name) + "' and '" + echoText(l.name) +
                      "'; exactly one is supported");
      }
      net.m_inputLayer = i;
    } else if (l.kind == LayerKind::SoftmaxCrossEntropy) {
      if (net.m_lossLayer >= 0) {
        throwBadInput("network '" + echoText(net.m_name) + "' has two loss layers, '" +
                      echoText(net.m_layers[net.m_lossLayer].name) + "' and '" + echoText(l.name) +
                      "'");
      }
      net.m_lossLayer = i;
    }
  }
  if (net.m_inputLayer < 0)
    throwBadInput("network '" + echoText(net.m_name) + "' has no input layer");
  if (net.m_lossLayer < 0) {
    throwBadInput("network '" + echoText(net.m_name) +
                  "' has no softmax_cross_entropy layer; training needs a loss");
  }
  for (int i = 0; i < n; ++i) {
    const Layer& l = net.m_layers[i];
    if (l.kind == LayerKind::SoftmaxCrossEntropy && !net.m_consumers[i].empty()) {
      throwBadInput(describeLayer(l) + ": the loss must be the last layer, but '" +
                    echoText(net.m_layers[net.m_consumers[i].front()].name) + "' reads it");
    }
    if (l.kind != LayerKind::SoftmaxCrossEntropy && net.m_consumers[i].empty()) {
      throwBadInput(describeLayer(l) +
                    ": its output is never used; only the loss may end the network");
    }
  }

  net.m_shapes.resize(n);
  for (int i = 0; i < n; ++i) {
    std::vector<InputShape> inShapes;
    for (int src : net.m_inputs[i]) {
      inShapes.push_back({&net.m_layers[src].name, &net.m_shapes[src]});
    }
    net.m_shapes[i] = inferOutputShape(net.m_layers[i], inShapes);
    requireSaneSize(net.m_layers[i], net.m_shapes[i]);
    fillInferredChecks(net.m_layers[i], inShapes);
  }
  net.m_hash = net.computeStructureHash();
  return net;
}

int Network::indexOf(const std::string& name) const {
  for (int i = 0; i < size(); ++i) {
    if (m_layers[i].name == name) return i;
  }
  return -1;
}

namespace {

struct Fnv1a {
  std::uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, std::size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) {
      h ^= c[i];
      h *= 1099511628211ull;
    }
  }
  void i64(std::int64_t v) { bytes(&v, sizeof v); }
  void f64(double v) { bytes(&v, sizeof v); }
};

}  // namespace

std::string Network::computeStructureHash() const {
  Fnv1a f;
  for (int i = 0; i < size(); ++i) {
    const Layer& l = m_layers[i];
    f.i64(static_cast<std::int64_t>(l.kind));
    f.i64(static_cast<std::int64_t>(m_inputs[i].size()));
    for (int src : m_inputs[i])
      f.i64(src);
    std::visit(
        [&](const auto& a) {
          using T = std::decay_t<decltype(a)>;
          if constexpr (std::is_same_v<T, InputAttrs>) {
            for (auto d : a.shape.dims)
              f.i64(d);
          } else if constexpr (std::is_same_v<T, Conv2dAttrs>) {
            for (auto v : {a.out_channels, a.kernel_h, a.kernel_w, a.stride_h, a.stride_w, a.pad_h,
                           a.pad_w, a.groups, std::int64_t{a.bias}})
              f.i64(v);
          } else if constexpr (std::is_same_v<T, BatchNormAttrs>) {
            f.f64(a.eps);
            f.f64(a.momentum);
          } else if constexpr (std::is_same_v<T, PoolAttrs>) {
            for (auto v : {a.kernel_h, a.kernel_w, a.stride_h, a.stride_w, a.pad_h, a.pad_w,
                           std::int64_t{a.ceil_mode}, std::int64_t{a.count_include_pad}})
              f.i64(v);
          } else if constexpr (std::is_same_v<T, AdaptivePoolAttrs>) {
            f.i64(a.out_h);
            f.i64(a.out_w);
          } else if constexpr (std::is_same_v<T, LinearAttrs>) {
            f.i64(a.out_features);
            f.i64(a.bias);
          } else if constexpr (std::is_same_v<T, DropoutAttrs>) {
            f.f64(a.p);
          } else if constexpr (std::is_same_v<T, ClipAttrs>) {
            for (const auto& b : {a.min, a.max}) {
              f.i64(b.has_value());
              if (b) f.f64(*b);
            }
          } else if constexpr (std::is_same_v<T, HardSigmoidAttrs>) {
            f.f64(a.alpha);
            f.f64(a.beta);
          }
        },
        l.attrs);
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(f.h));
  return buf;
}

}  // namespace swapscope
