// SPDX-License-Identifier: MIT
#include "analysis/layer_cost.h"

#include <initializer_list>
#include <numeric>
#include <string>

#include "common/checked.h"
#include "common/error.h"
#include "graph/json_guard.h"
#include "graph/shape_inference.h"

namespace swapscope {
namespace {

// FLOPs per element of the elementwise layers: {forward, backward data, backward weights}.
// batchnorm2d: forward = sum and sum of squares (3) + normalize with folded scale and shift (2);
//              backward weights = x_hat (2) + dgamma and dbeta sums (2);
//              backward data = combine dy with the two sums (4).
// relu: one max forward, one select backward. dropout: compare + scale forward, scale backward.
// clip: max and min forward; two compares backward (the gradient passes strictly inside the
// bounds). sigmoid: negate, exp, add, divide forward (4); dy * y * (1 - y) backward (3).
// hardsigmoid: alpha x + beta, then max and min forward (4); the same range test and a scale
//              backward (3). hardswish: hardsigmoid and a multiply forward (5); the range test
//              and the slope 2x/6 + 1/2 times dy backward (5).
// mul: one multiply per output element forward; backward, per input one multiply per output
//      element, and a per-channel input one add more to sum its gradient over H and W.
// softmax_cross_entropy, per logit: max, subtract, exp, sum forward (4); softmax again (3) and
// subtract the one-hot target, scale by 1/k backward (5).
struct PerElement {
  std::int64_t fwd, bwd_data, bwd_weight;
};
constexpr PerElement kBatchNorm{5, 4, 4};
constexpr PerElement kReLU{1, 1, 0};
constexpr PerElement kDropout{2, 1, 0};
constexpr PerElement kSoftmaxXent{4, 5, 0};
constexpr PerElement kClip{2, 2, 0};
constexpr PerElement kSigmoid{4, 3, 0};
constexpr PerElement kHardSigmoid{4, 3, 0};
constexpr PerElement kHardSwish{5, 5, 0};

/// Counts of one layer in checked 64-bit arithmetic: an overflow is Error(BadInput) naming the
/// layer and what was counted, never a wrapped number.
class Counter {
 public:
  explicit Counter(const Layer& l) : m_layer(l) {}

  std::int64_t mul(const char* what, std::initializer_list<std::int64_t> factors) const {
    std::int64_t r = 1;
    for (std::int64_t f : factors) {
      const auto p = checkedMul(r, f);
      if (!p) overflow(what);
      r = *p;
    }
    return r;
  }
  std::int64_t add(const char* what, std::int64_t a, std::int64_t b) const {
    const auto s = checkedAdd(a, b);
    if (!s) overflow(what);
    return *s;
  }
  [[noreturn]] void overflow(const char* what) const {
    throwBadInput("layer '" + echoText(m_layer.name) + "' (" +
                  std::string(layerKindName(m_layer.kind)) + "): " + what +
                  " do not fit in 64-bit integers");
  }

 private:
  const Layer& m_layer;
};

/// Sum over the output positions of one axis of the adaptive window extents: in + out -
/// gcd(in, out) (each output adds its window; a window boundary that falls between inputs is
/// shared by two windows, which happens out - gcd(in, out) times). Closed form: no loop over a
/// user's output size, no (i + 1) * in to overflow.
std::int64_t adaptiveAxisSum(std::int64_t in, std::int64_t out) {
  return in + out - std::gcd(in, out);
}

/// Conv and linear: 2 FLOPs per MAC in each direction, plus the bias adds forward and the bias
/// gradient's sums backward. They read their input in backward for the weight gradient. The data
/// gradient is cleared later where no input needs one.
void setMatmulCosts(const Counter& n, LayerCost& c, std::int64_t macs, std::int64_t biasFlops) {
  c.fwd_macs = macs;
  const std::int64_t twice = n.mul("its FLOPs", {2, macs});
  c.fwd_flops = n.add("its FLOPs", twice, biasFlops);
  c.bwd_data_flops = twice;
  c.bwd_weight_flops = c.fwd_flops;
  c.reads.inputs = true;
}

/// Running totals over the layers, so that sumCosts() and every per-sample total fit.
struct Totals {
  CostTotals t;
  void add(const Counter& n, const LayerCost& c) {
    const char* what = "the network's totals up to this layer";
    t.params = n.add(what, t.params, c.params);
    t.running_stats = n.add(what, t.running_stats, c.running_stats);
    t.fwd_macs = n.add(what, t.fwd_macs, c.fwd_macs);
    t.fwd_flops = n.add(what, t.fwd_flops, c.fwd_flops);
    t.bwd_flops = n.add(what, t.bwd_flops, n.add(what, c.bwd_data_flops, c.bwd_weight_flops));
    n.add(what, t.fwd_flops, t.bwd_flops);  // trainFlops()
    // Weights, their gradients and momentum, and the statistics, in fp32 bytes.
    n.add(what, n.mul(what, {t.params, 3 * kFloatBytes}),
          n.mul(what, {t.running_stats, kFloatBytes}));
  }
};

}  // namespace

std::vector<LayerCost> computeLayerCosts(const Network& net) {
  const int n = net.size();
  std::vector<LayerCost> costs(n);
  Totals totals;
  for (int i = 0; i < n; ++i) {
    const Layer& l = net.layer(i);
    const Counter count(l);
    const Shape& out = net.outputShape(i);
    LayerCost& c = costs[i];
    const std::int64_t outElems = out.numel();  // at most 2^36: Network::build checks it
    c.fm = l.kind == LayerKind::SoftmaxCrossEntropy
               ? LinearBytes{kFloatBytes, 0}
               : LinearBytes{0, count.mul("its feature-map bytes", {outElems, kFloatBytes})};

    // A gradient flows into a layer's input only if something before it has parameters.
    bool inputNeedsGrad = false;
    for (int src : net.inputsOf(i))
      inputNeedsGrad = inputNeedsGrad || costs[src].needs_grad;

    switch (l.kind) {
      case LayerKind::Input:
        break;
      case LayerKind::Conv2d: {
        const auto& a = l.as<Conv2dAttrs>();
        const std::int64_t inC = net.inputShape(i).channels();
        const std::int64_t weights =
            count.mul("its parameters", {a.out_channels, inC / a.groups, a.kernel_h, a.kernel_w});
        c.params = count.add("its parameters", weights, a.bias ? a.out_channels : 0);
        setMatmulCosts(count, c,
                       count.mul("its multiply-accumulates",
                                 {outElems, inC / a.groups, a.kernel_h, a.kernel_w}),
                       a.bias ? outElems : 0);
        break;
      }
      case LayerKind::Linear: {
        const auto& a = l.as<LinearAttrs>();
        const std::int64_t inF = net.inputShape(i).dims[0];
        const std::int64_t weights = count.mul("its parameters", {inF, a.out_features});
        c.params = count.add("its parameters", weights, a.bias ? a.out_features : 0);
        setMatmulCosts(count, c, weights, a.bias ? a.out_features : 0);
        break;
      }
      case LayerKind::BatchNorm2d: {
        const std::int64_t channels = out.channels();
        c.params = count.mul("its parameters", {2, channels});  // gamma, beta
        c.running_stats = c.params;                             // running mean, running variance
        c.fwd_flops = count.mul("its FLOPs", {kBatchNorm.fwd, outElems});
        c.bwd_data_flops = count.mul("its FLOPs", {kBatchNorm.bwd_data, outElems});
        c.bwd_weight_flops = count.mul("its FLOPs", {kBatchNorm.bwd_weight, outElems});
        c.reads.inputs = true;
        c.reads.saved = {count.mul("its saved bytes", {c.params, kFloatBytes}), 0};  // mean, 1/std
        break;
      }
      case LayerKind::ReLU:
        c.fwd_flops = count.mul("its FLOPs", {kReLU.fwd, outElems});
        c.bwd_data_flops = count.mul("its FLOPs", {kReLU.bwd_data, outElems});
        c.reads.output = true;
        break;
      case LayerKind::Clip:
      case LayerKind::Sigmoid: {
        const PerElement e = l.kind == LayerKind::Clip ? kClip : kSigmoid;
        c.fwd_flops = count.mul("its FLOPs", {e.fwd, outElems});
        c.bwd_data_flops = count.mul("its FLOPs", {e.bwd_data, outElems});
        c.reads.output = true;  // the gradient is a function of the output
        break;
      }
      case LayerKind::HardSigmoid:
      case LayerKind::HardSwish: {
        const PerElement e = l.kind == LayerKind::HardSigmoid ? kHardSigmoid : kHardSwish;
        c.fwd_flops = count.mul("its FLOPs", {e.fwd, outElems});
        c.bwd_data_flops = count.mul("its FLOPs", {e.bwd_data, outElems});
        c.reads.inputs = true;
        break;
      }
      case LayerKind::Mul: {
        c.fwd_flops = outElems;
        std::int64_t perOut = 0;
        for (int src : net.inputsOf(i)) {
          if (!costs[src].needs_grad) continue;
          perOut += net.outputShape(src).numel() == outElems ? 1 : 2;
        }
        c.bwd_data_flops = count.mul("its FLOPs", {perOut, outElems});
        c.reads.inputs = true;  // each input's gradient is the output's times the other input
        break;
      }
      case LayerKind::Dropout:
        c.fwd_flops = count.mul("its FLOPs", {kDropout.fwd, outElems});
        c.bwd_data_flops = count.mul("its FLOPs", {kDropout.bwd_data, outElems});
        c.reads.saved = {0, count.mul("its saved bytes", {outElems, kMaskBytes})};
        break;
      case LayerKind::MaxPool2d:
      case LayerKind::AvgPool2d: {
        const auto& a = l.as<PoolAttrs>();
        const std::int64_t window = count.mul("its FLOPs", {a.kernel_h, a.kernel_w, outElems});
        c.fwd_flops = window;
        c.bwd_data_flops = window;
        // Max pooling's backward finds each window's maximum again from its input and output.
        c.reads.inputs = c.reads.output = l.kind == LayerKind::MaxPool2d;
        break;
      }
      case LayerKind::AdaptiveAvgPool2d: {
        const Shape& in = net.inputShape(i);
        const std::int64_t window =
            count.mul("its FLOPs", {in.channels(), adaptiveAxisSum(in.height(), out.height()),
                                    adaptiveAxisSum(in.width(), out.width())});
        c.fwd_flops = window;
        c.bwd_data_flops = window;
        break;
      }
      case LayerKind::Add:
        c.fwd_flops = count.mul("its FLOPs",
                                {static_cast<std::int64_t>(net.inputsOf(i).size() - 1), outElems});
        break;
      case LayerKind::Concat:
      case LayerKind::Flatten:
        break;
      case LayerKind::SoftmaxCrossEntropy: {
        const std::int64_t logits = net.inputShape(i).numel();
        c.fwd_flops = count.mul("its FLOPs", {kSoftmaxXent.fwd, logits});
        c.bwd_data_flops = count.mul("its FLOPs", {kSoftmaxXent.bwd_data, logits});
        c.reads.inputs = true;
        break;
      }
    }
    c.needs_grad = c.params > 0 || inputNeedsGrad;
    c.backward_active = c.needs_grad;
    if (!c.backward_active) {
      c.bwd_data_flops = c.bwd_weight_flops = 0;
      c.reads = {};
    } else if (!inputNeedsGrad) {
      c.bwd_data_flops = 0;
    }
    totals.add(count, c);
  }
  return costs;
}

CostTotals sumCosts(const std::vector<LayerCost>& costs) {
  // computeLayerCosts() checked these sums; costs made elsewhere are checked here.
  auto add = [](std::int64_t a, std::int64_t b) {
    const auto s = checkedAdd(a, b);
    if (!s) throwBadInput("the network's cost totals do not fit in 64-bit integers");
    return *s;
  };
  CostTotals t;
  for (const LayerCost& c : costs) {
    t.params = add(t.params, c.params);
    t.running_stats = add(t.running_stats, c.running_stats);
    t.fwd_macs = add(t.fwd_macs, c.fwd_macs);
    t.fwd_flops = add(t.fwd_flops, c.fwd_flops);
    t.bwd_flops = add(t.bwd_flops, add(c.bwd_data_flops, c.bwd_weight_flops));
  }
  add(t.fwd_flops, t.bwd_flops);
  return t;
}

}  // namespace swapscope
