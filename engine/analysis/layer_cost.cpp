// SPDX-License-Identifier: MIT
#include "analysis/layer_cost.h"

#include "graph/shape_inference.h"

namespace swapscope {
namespace {

// FLOPs per element of the elementwise layers: {forward, backward data, backward weights}.
// batchnorm2d: forward = sum and sum of squares (3) + normalize with folded scale and shift (2);
//              backward weights = x_hat (2) + dgamma and dbeta sums (2);
//              backward data = combine dy with the two sums (4).
// relu: one max forward, one select backward. dropout: compare + scale forward, scale backward.
// softmax_cross_entropy, per logit: max, subtract, exp, sum forward (4); softmax again (3) and
// subtract the one-hot target, scale by 1/k backward (5).
struct PerElement {
  std::int64_t fwd, bwd_data, bwd_weight;
};
constexpr PerElement kBatchNorm{5, 4, 4};
constexpr PerElement kReLU{1, 1, 0};
constexpr PerElement kDropout{2, 1, 0};
constexpr PerElement kSoftmaxXent{4, 5, 0};

/// Sum over output positions of the pooling window area (the adds or compares forward).
std::int64_t adaptiveWindowArea(std::int64_t in_h, std::int64_t in_w, std::int64_t out_h,
                                std::int64_t out_w) {
  std::int64_t rows = 0;
  for (std::int64_t i = 0; i < out_h; ++i) {
    rows += adaptiveEnd(i, in_h, out_h) - adaptiveStart(i, in_h, out_h);
  }
  std::int64_t cols = 0;
  for (std::int64_t j = 0; j < out_w; ++j) {
    cols += adaptiveEnd(j, in_w, out_w) - adaptiveStart(j, in_w, out_w);
  }
  return rows * cols;
}

/// Conv and linear: 2 FLOPs per MAC in each direction, plus the bias adds forward and the bias
/// gradient's sums backward. They read their input in backward for the weight gradient. The data
/// gradient is cleared later where no input needs one.
void setMatmulCosts(LayerCost& c, std::int64_t macs, std::int64_t biasFlops) {
  c.fwd_macs = macs;
  c.fwd_flops = 2 * macs + biasFlops;
  c.bwd_data_flops = 2 * macs;
  c.bwd_weight_flops = 2 * macs + biasFlops;
  c.reads.inputs = true;
}

}  // namespace

std::vector<LayerCost> computeLayerCosts(const Network& net) {
  const int n = net.size();
  std::vector<LayerCost> costs(n);
  for (int i = 0; i < n; ++i) {
    const Layer& l = net.layer(i);
    const Shape& out = net.outputShape(i);
    LayerCost& c = costs[i];
    const std::int64_t outElems = out.numel();
    c.fm = l.kind == LayerKind::SoftmaxCrossEntropy ? LinearBytes{kFloatBytes, 0}
                                                    : LinearBytes{0, outElems * kFloatBytes};

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
        const std::int64_t weights = a.out_channels * (inC / a.groups) * a.kernel_h * a.kernel_w;
        c.params = weights + (a.bias ? a.out_channels : 0);
        setMatmulCosts(c, outElems * (inC / a.groups) * a.kernel_h * a.kernel_w,
                       a.bias ? outElems : 0);
        break;
      }
      case LayerKind::Linear: {
        const auto& a = l.as<LinearAttrs>();
        const std::int64_t inF = net.inputShape(i).dims[0];
        c.params = inF * a.out_features + (a.bias ? a.out_features : 0);
        setMatmulCosts(c, inF * a.out_features, a.bias ? a.out_features : 0);
        break;
      }
      case LayerKind::BatchNorm2d: {
        const std::int64_t channels = out.channels();
        c.params = 2 * channels;         // gamma, beta
        c.running_stats = 2 * channels;  // running mean, running variance
        c.fwd_flops = kBatchNorm.fwd * outElems;
        c.bwd_data_flops = kBatchNorm.bwd_data * outElems;
        c.bwd_weight_flops = kBatchNorm.bwd_weight * outElems;
        c.reads.inputs = true;
        c.reads.saved = {2 * channels * kFloatBytes, 0};  // batch mean and inverse std
        break;
      }
      case LayerKind::ReLU:
        c.fwd_flops = kReLU.fwd * outElems;
        c.bwd_data_flops = kReLU.bwd_data * outElems;
        c.reads.output = true;
        break;
      case LayerKind::Dropout:
        c.fwd_flops = kDropout.fwd * outElems;
        c.bwd_data_flops = kDropout.bwd_data * outElems;
        c.reads.saved = {0, outElems * kMaskBytes};
        break;
      case LayerKind::MaxPool2d:
      case LayerKind::AvgPool2d: {
        const auto& a = l.as<PoolAttrs>();
        const std::int64_t window = a.kernel_h * a.kernel_w * outElems;
        c.fwd_flops = window;
        c.bwd_data_flops = window;
        // Max pooling's backward finds each window's maximum again from its input and output.
        c.reads.inputs = c.reads.output = l.kind == LayerKind::MaxPool2d;
        break;
      }
      case LayerKind::AdaptiveAvgPool2d: {
        const Shape& in = net.inputShape(i);
        const std::int64_t window =
            in.channels() * adaptiveWindowArea(in.height(), in.width(), out.height(), out.width());
        c.fwd_flops = window;
        c.bwd_data_flops = window;
        break;
      }
      case LayerKind::Add:
        c.fwd_flops = static_cast<std::int64_t>(net.inputsOf(i).size() - 1) * outElems;
        break;
      case LayerKind::Concat:
      case LayerKind::Flatten:
        break;
      case LayerKind::SoftmaxCrossEntropy: {
        const std::int64_t logits = net.inputShape(i).numel();
        c.fwd_flops = kSoftmaxXent.fwd * logits;
        c.bwd_data_flops = kSoftmaxXent.bwd_data * logits;
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
  }
  return costs;
}

CostTotals sumCosts(const std::vector<LayerCost>& costs) {
  CostTotals t;
  for (const LayerCost& c : costs) {
    t.params += c.params;
    t.running_stats += c.running_stats;
    t.fwd_macs += c.fwd_macs;
    t.fwd_flops += c.fwd_flops;
    t.bwd_flops += c.bwd_data_flops + c.bwd_weight_flops;
  }
  return t;
}

}  // namespace swapscope
