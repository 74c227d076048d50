// SPDX-License-Identifier: MIT
// CPU kernels. oneDNN primitives for convolution, batch norm, ReLU, pooling and inner product,
// eltwise activations; the other kinds are loops. Image FMs are in the context's layout (NHWC by
// default, where oneDNN runs its JIT kernels; NCHW on request), every other tensor in the pool
// is plain (oihw, nc, x): the pool holds exactly the analyzer's tensors, with the same bytes in
// either layout. Convolution weights are reordered into the blocked order the primitives chose,
// in scratch outside the pool whose size depends on the layer, not on k. oneDNN's scratchpad is
// user-managed and counted outside the pool.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>

#include "common/error.h"
#include "graph/shape_inference.h"
#include "runtime/cpu/cpu_context.h"
#include "runtime/rng.h"

namespace swapscope::rt::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

memory::desc plainDesc(const memory::dims& dims) {
  switch (dims.size()) {
    case 1:
      return {dims, dt::f32, tag::a};
    case 2:
      return {dims, dt::f32, tag::ab};
    case 4:
      return {dims, dt::f32, tag::abcd};
    case 5:
      return {dims, dt::f32, tag::abcde};
    default:
      throw Error(ErrorKind::Runtime, "unsupported tensor rank " + std::to_string(dims.size()));
  }
}

/// [k, dims...] of a per-sample shape.
memory::dims batchDims(std::int64_t k, const Shape& s) {
  memory::dims d{k};
  for (auto v : s.dims)
    d.push_back(v);
  return d;
}

/// The descriptor of a minibatch of `k` samples of shape `s` in the pool: images in `layout`,
/// anything else plain.
memory::desc fmDesc(ImageLayout layout, std::int64_t k, const Shape& s) {
  if (s.isImage() && layout == ImageLayout::Nhwc) return {batchDims(k, s), dt::f32, tag::nhwc};
  return plainDesc(batchDims(k, s));
}

dnnl::primitive_attr userScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

/// Base of the oneDNN kernels: memory objects over pool pointers, and execution with the shared
/// scratchpad.
class DnnlKernel : public LayerKernel {
 protected:
  explicit DnnlKernel(CpuContext& ctx) : m_ctx(ctx) {}

  memory mem(const memory::desc& md, const void* p) const {
    return memory(md, m_ctx.engine, const_cast<void*>(p));
  }
  memory::desc fmDesc(std::int64_t k, const Shape& s) const {
    return cpu::fmDesc(m_ctx.layout, k, s);
  }
  template <typename PD>
  void reserve(const PD& pd) {
    m_ctx.reserveScratchpad(pd.scratchpad_desc().get_size());
  }
  template <typename PD>
  void exec(const dnnl::primitive& p, const PD& pd, std::unordered_map<int, memory> args) {
    args.emplace(DNNL_ARG_SCRATCHPAD, mem(pd.scratchpad_desc(), m_ctx.scratchpad()));
    p.execute(m_ctx.stream, args);
    m_ctx.stream.wait();
  }
  /// Where a data gradient goes: the destination itself, or a temporary that is then added.
  float* gradTarget(const KernelArgs& a, std::size_t i) const {
    return a.accumulate[i] ? reinterpret_cast<float*>(m_ctx.slot(CpuContext::kGradTemp))
                           : a.in_grad[i];
  }
  void finishGrad(const KernelArgs& a, std::size_t i, std::int64_t n) const {
    if (!a.accumulate[i]) return;
    const float* t = reinterpret_cast<const float*>(m_ctx.slot(CpuContext::kGradTemp));
    float* d = a.in_grad[i];
    for (std::int64_t j = 0; j < n; ++j)
      d[j] += t[j];
  }
  void reserveGradTemp(std::int64_t elems) {
    m_ctx.reserve(CpuContext::kGradTemp, static_cast<std::size_t>(elems) * sizeof(float));
  }
  /// Where a weight gradient of `elems` values goes: weight_grad itself, or a temporary that
  /// finishWeightGrad then adds (oneDNN's backward primitives overwrite their destination).
  float* weightGradTarget(const KernelArgs& a) const {
    return a.accumulate_weight_grad
               ? reinterpret_cast<float*>(m_ctx.slot(CpuContext::kWeightGradTemp))
               : a.weight_grad;
  }
  void finishWeightGrad(const KernelArgs& a, std::int64_t elems) const {
    if (!a.accumulate_weight_grad) return;
    const float* t = reinterpret_cast<const float*>(m_ctx.slot(CpuContext::kWeightGradTemp));
    for (std::int64_t j = 0; j < elems; ++j)
      a.weight_grad[j] += t[j];
  }
  void reserveWeightGradTemp(std::int64_t elems) {
    m_ctx.reserve(CpuContext::kWeightGradTemp, static_cast<std::size_t>(elems) * sizeof(float));
  }

  CpuContext& m_ctx;
};

// ---------------------------------------------------------------------------------------------
/// Convolution and inner product share their shape: forward with bias, backward data (where the
/// input needs a gradient) and backward weights with the bias gradient.
template <typename Fwd, typename BwdData, typename BwdWeights>
class MatmulKernel : public DnnlKernel {
 public:
  void forward(const KernelArgs& a) override {
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, mem(m_src, a.in[0])},
                                         {DNNL_ARG_WEIGHTS, m_fwdWei.from(*this, a.weights)},
                                         {DNNL_ARG_DST, mem(m_dst, a.out)}};
    if (m_bias) args.emplace(DNNL_ARG_BIAS, mem(m_biasMd, a.weights + m_weightElems));
    exec(m_fwd, m_fwdPd, std::move(args));
  }

  void backward(const KernelArgs& a) override {
    if (a.in_grad[0]) {
      exec(m_bwdData, m_bwdDataPd,
           {{DNNL_ARG_DIFF_DST, mem(m_dst, a.out_grad)},
            {DNNL_ARG_WEIGHTS, m_bwdDataWei.from(*this, a.weights)},
            {DNNL_ARG_DIFF_SRC, mem(m_src, gradTarget(a, 0))}});
      finishGrad(a, 0, m_inElems);
    }
    float* dw = weightGradTarget(a);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, mem(m_src, a.in[0])},
                                         {DNNL_ARG_DIFF_DST, mem(m_dst, a.out_grad)},
                                         {DNNL_ARG_DIFF_WEIGHTS, m_diffWei.target(*this, dw)}};
    if (m_bias) args.emplace(DNNL_ARG_DIFF_BIAS, mem(m_biasMd, dw + m_weightElems));
    exec(m_bwdWei, m_bwdWeiPd, std::move(args));
    m_diffWei.toPlain(*this, dw);
    finishWeightGrad(a, paramElems());
  }

  void prepareWeightGradAccumulation() override { reserveWeightGradTemp(paramElems()); }

 protected:
  MatmulKernel(CpuContext& ctx, std::int64_t inElems, std::int64_t weightElems, bool bias)
      : DnnlKernel(ctx), m_inElems(inElems), m_weightElems(weightElems), m_bias(bias) {}

  /// Call from the derived constructor once the descriptors are set.
  void create(typename Fwd::primitive_desc fwd, typename BwdData::primitive_desc bwdData,
              typename BwdWeights::primitive_desc bwdWeights) {
    m_fwdPd = std::move(fwd);
    m_bwdDataPd = std::move(bwdData);
    m_bwdWeiPd = std::move(bwdWeights);
    m_fwd = Fwd(m_fwdPd);
    m_bwdData = BwdData(m_bwdDataPd);
    m_bwdWei = BwdWeights(m_bwdWeiPd);
    reserve(m_fwdPd);
    reserve(m_bwdDataPd);
    reserve(m_bwdWeiPd);
    reserveGradTemp(m_inElems);
    m_fwdWei = WeightOrder(*this, m_wei, m_fwdPd.weights_desc(), CpuContext::kBlockedWeights);
    m_bwdDataWei =
        WeightOrder(*this, m_wei, m_bwdDataPd.weights_desc(), CpuContext::kBlockedWeights);
    m_diffWei =
        WeightOrder(*this, m_bwdWeiPd.diff_weights_desc(), m_wei, CpuContext::kBlockedWeightGrad);
  }

  memory::desc m_src, m_dst, m_wei, m_biasMd;
  typename Fwd::primitive_desc m_fwdPd;

 private:
  std::int64_t paramElems() const {
    return m_weightElems +
           (m_bias ? static_cast<std::int64_t>(m_biasMd.get_size() / sizeof(float)) : 0);
  }
  /// Weights (or their gradient) in the order a primitive chose, where that is not the pool's
  /// plain order: a reorder between the pool and a scratch slot, run at every use, since the
  /// weights change with every update and the slot is shared by every convolution.
  class WeightOrder {
   public:
    WeightOrder() = default;
    /// A reorder `from` -> `to` where they differ; one of them is the pool's plain order
    /// (m_wei), the other is scratch slot `slot`'s.
    WeightOrder(MatmulKernel& k, const memory::desc& from, const memory::desc& to, int slot)
        : m_slot(slot) {
      if (from == to) return;
      m_active = true;
      const bool intoSlot = from == k.m_wei;
      m_slotMd = intoSlot ? to : from;
      m_poolMd = intoSlot ? from : to;
      m_pd =
          dnnl::reorder::primitive_desc(k.m_ctx.engine, from, k.m_ctx.engine, to, userScratchpad());
      m_reorder = dnnl::reorder(m_pd);
      k.m_ctx.reserve(slot, m_slotMd.get_size());
      k.reserve(m_pd);
    }
    /// The weights at `w` (plain, in the pool) in the chosen order.
    memory from(MatmulKernel& k, const float* w) const {
      if (!m_active) return k.mem(k.m_wei, w);
      memory slot = k.mem(m_slotMd, k.m_ctx.slot(m_slot));
      k.exec(m_reorder, m_pd, {{DNNL_ARG_FROM, k.mem(m_poolMd, w)}, {DNNL_ARG_TO, slot}});
      return slot;
    }
    /// Where a primitive writes the gradient that belongs at `dw` (plain, in the pool).
    memory target(MatmulKernel& k, float* dw) const {
      return m_active ? k.mem(m_slotMd, k.m_ctx.slot(m_slot)) : k.mem(k.m_wei, dw);
    }
    /// Moves what target() received into `dw`, in the plain order.
    void toPlain(MatmulKernel& k, float* dw) const {
      if (!m_active) return;
      k.exec(m_reorder, m_pd,
             {{DNNL_ARG_FROM, k.mem(m_slotMd, k.m_ctx.slot(m_slot))},
              {DNNL_ARG_TO, k.mem(m_poolMd, dw)}});
    }

   private:
    bool m_active = false;
    int m_slot = 0;
    memory::desc m_slotMd, m_poolMd;
    dnnl::reorder::primitive_desc m_pd;
    dnnl::reorder m_reorder;
  };

  typename BwdData::primitive_desc m_bwdDataPd;
  typename BwdWeights::primitive_desc m_bwdWeiPd;
  dnnl::primitive m_fwd, m_bwdData, m_bwdWei;
  WeightOrder m_fwdWei, m_bwdDataWei, m_diffWei;
  std::int64_t m_inElems = 0, m_weightElems = 0;
  bool m_bias = false;
};

class ConvKernel final
    : public MatmulKernel<dnnl::convolution_forward, dnnl::convolution_backward_data,
                          dnnl::convolution_backward_weights> {
 public:
  ConvKernel(CpuContext& ctx, const Network& net, int layer, std::int64_t k)
      : MatmulKernel(ctx, k * net.inputShape(layer).numel(), weightCount(net, layer),
                     net.layer(layer).as<Conv2dAttrs>().bias) {
    const auto& a = net.layer(layer).as<Conv2dAttrs>();
    const Shape& in = net.inputShape(layer);
    const Shape& out = net.outputShape(layer);
    const std::int64_t c = in.channels(), o = a.out_channels, g = a.groups;
    const memory::dims strides{a.stride_h, a.stride_w}, padL{a.pad_h, a.pad_w};
    // oneDNN's right padding makes the output extent come out as PyTorch's (it may be negative).
    const memory::dims padR{(out.height() - 1) * a.stride_h + a.kernel_h - in.height() - a.pad_h,
                            (out.width() - 1) * a.stride_w + a.kernel_w - in.width() - a.pad_w};
    m_src = fmDesc(k, in);
    m_dst = fmDesc(k, out);
    m_wei = g == 1 ? plainDesc({o, c, a.kernel_h, a.kernel_w})
                   : plainDesc({g, o / g, c / g, a.kernel_h, a.kernel_w});
    m_biasMd = a.bias ? plainDesc({o}) : memory::desc();
    // On NHWC FMs oneDNN's JIT kernels need their own blocked weights (on plain oihw weights
    // they fall back to the reference code): the primitives choose (format_tag::any) and the
    // kernel reorders. On NCHW FMs the plain weights keep oneDNN's GEMM-based kernels.
    const memory::desc wei =
        ctx.layout == ImageLayout::Nhwc ? memory::desc(m_wei.dims(), dt::f32, tag::any) : m_wei;
    const auto attr = userScratchpad();
    const auto algo = dnnl::algorithm::convolution_direct;
    dnnl::convolution_forward::primitive_desc fwd(
        {dnnl::prop_kind::forward_training, algo, m_src, wei, m_biasMd, m_dst, strides, padL, padR},
        attr, ctx.engine);
    create(fwd, {{algo, m_src, wei, m_dst, strides, padL, padR}, attr, ctx.engine, fwd},
           {{algo, m_src, wei, m_biasMd, m_dst, strides, padL, padR}, attr, ctx.engine, fwd});
  }

 private:
  static std::int64_t weightCount(const Network& net, int layer) {
    const auto& a = net.layer(layer).as<Conv2dAttrs>();
    return a.out_channels * (net.inputShape(layer).channels() / a.groups) * a.kernel_h * a.kernel_w;
  }
};

class LinearKernel final
    : public MatmulKernel<dnnl::inner_product_forward, dnnl::inner_product_backward_data,
                          dnnl::inner_product_backward_weights> {
 public:
  LinearKernel(CpuContext& ctx, const Network& net, int layer, std::int64_t k)
      : MatmulKernel(
            ctx, k * net.inputShape(layer).numel(),
            net.inputShape(layer).numel() * net.layer(layer).as<LinearAttrs>().out_features,
            net.layer(layer).as<LinearAttrs>().bias) {
    const auto& a = net.layer(layer).as<LinearAttrs>();
    const std::int64_t in = net.inputShape(layer).numel(), o = a.out_features;
    m_src = plainDesc({k, in});
    m_dst = plainDesc({k, o});
    m_wei = plainDesc({o, in});
    m_biasMd = a.bias ? plainDesc({o}) : memory::desc();
    const auto attr = userScratchpad();
    dnnl::inner_product_forward::primitive_desc fwd(
        {dnnl::prop_kind::forward_training, m_src, m_wei, m_biasMd, m_dst}, attr, ctx.engine);
    create(fwd, {{m_src, m_wei, m_dst}, attr, ctx.engine, fwd},
           {{m_src, m_wei, m_biasMd, m_dst}, attr, ctx.engine, fwd});
  }
};

// ---------------------------------------------------------------------------------------------
/// Batch norm with PyTorch's semantics: batch statistics in training (biased variance for the
/// normalisation, unbiased for the running variance), running statistics in inference.
class BatchNormKernel final : public DnnlKernel {
 public:
  BatchNormKernel(CpuContext& ctx, const Network& net, int layer, std::int64_t k)
      : DnnlKernel(ctx) {
    const auto& a = net.layer(layer).as<BatchNormAttrs>();
    const Shape& s = net.outputShape(layer);
    m_channels = s.channels();
    m_elems = k * s.numel();
    m_perChannel = k * s.numel() / m_channels;
    m_momentum = static_cast<float>(a.momentum);
    m_data = fmDesc(k, s);
    m_stat = plainDesc({m_channels});
    const auto eps = static_cast<float>(a.eps);
    const auto attr = userScratchpad();
    const auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
    m_trainPd = {{dnnl::prop_kind::forward_training, m_data, eps, flags}, attr, ctx.engine};
    m_inferPd = {{dnnl::prop_kind::forward_inference, m_data, eps,
                  flags | dnnl::normalization_flags::use_global_stats},
                 attr,
                 ctx.engine};
    m_bwdPd = {
        {dnnl::prop_kind::backward, m_data, m_data, eps, flags}, attr, ctx.engine, m_trainPd};
    m_train = dnnl::batch_normalization_forward(m_trainPd);
    m_infer = dnnl::batch_normalization_forward(m_inferPd);
    m_bwd = dnnl::batch_normalization_backward(m_bwdPd);
    reserve(m_trainPd);
    reserve(m_inferPd);
    reserve(m_bwdPd);
    reserveGradTemp(m_elems);
  }

  void forward(const KernelArgs& a) override {
    float* saved = static_cast<float*>(a.saved);
    if (!a.training) {
      exec(m_infer, m_inferPd,
           {{DNNL_ARG_SRC, mem(m_data, a.in[0])},
            {DNNL_ARG_DST, mem(m_data, a.out)},
            {DNNL_ARG_MEAN, mem(m_stat, a.running_stats)},
            {DNNL_ARG_VARIANCE, mem(m_stat, a.running_stats + m_channels)},
            {DNNL_ARG_SCALE, mem(m_stat, a.weights)},
            {DNNL_ARG_SHIFT, mem(m_stat, a.weights + m_channels)}});
      return;
    }
    exec(m_train, m_trainPd,
         {{DNNL_ARG_SRC, mem(m_data, a.in[0])},
          {DNNL_ARG_DST, mem(m_data, a.out)},
          {DNNL_ARG_MEAN, mem(m_stat, saved)},
          {DNNL_ARG_VARIANCE, mem(m_stat, saved + m_channels)},
          {DNNL_ARG_SCALE, mem(m_stat, a.weights)},
          {DNNL_ARG_SHIFT, mem(m_stat, a.weights + m_channels)}});
    if (a.recompute) return;
    const float unbias =
        m_perChannel > 1 ? static_cast<float>(m_perChannel) / static_cast<float>(m_perChannel - 1)
                         : 1.0f;
    for (std::int64_t c = 0; c < m_channels; ++c) {
      float& mean = a.running_stats[c];
      float& var = a.running_stats[m_channels + c];
      mean = (1 - m_momentum) * mean + m_momentum * saved[c];
      var = (1 - m_momentum) * var + m_momentum * saved[m_channels + c] * unbias;
    }
  }

  void backward(const KernelArgs& a) override {
    const float* saved = static_cast<const float*>(a.saved);
    float* diffSrc = a.in_grad[0] ? gradTarget(a, 0)
                                  : reinterpret_cast<float*>(m_ctx.slot(CpuContext::kGradTemp));
    float* dw = weightGradTarget(a);
    exec(m_bwd, m_bwdPd,
         {{DNNL_ARG_SRC, mem(m_data, a.in[0])},
          {DNNL_ARG_MEAN, mem(m_stat, saved)},
          {DNNL_ARG_VARIANCE, mem(m_stat, saved + m_channels)},
          {DNNL_ARG_DIFF_DST, mem(m_data, a.out_grad)},
          {DNNL_ARG_SCALE, mem(m_stat, a.weights)},
          {DNNL_ARG_SHIFT, mem(m_stat, a.weights + m_channels)},
          {DNNL_ARG_DIFF_SRC, mem(m_data, diffSrc)},
          {DNNL_ARG_DIFF_SCALE, mem(m_stat, dw)},
          {DNNL_ARG_DIFF_SHIFT, mem(m_stat, dw + m_channels)}});
    if (a.in_grad[0]) finishGrad(a, 0, m_elems);
    finishWeightGrad(a, 2 * m_channels);
  }

  void prepareWeightGradAccumulation() override { reserveWeightGradTemp(2 * m_channels); }

 private:
  memory::desc m_data, m_stat;
  dnnl::batch_normalization_forward::primitive_desc m_trainPd, m_inferPd;
  dnnl::batch_normalization_backward::primitive_desc m_bwdPd;
  dnnl::primitive m_train, m_infer, m_bwd;
  std::int64_t m_channels = 0, m_elems = 0, m_perChannel = 0;
  float m_momentum = 0.1f;
};

// ---------------------------------------------------------------------------------------------
/// ReLU; its backward reads its output (oneDNN's relu_use_dst_for_bwd), as the analyzer says.
class ReluKernel final : public DnnlKernel {
 public:
  ReluKernel(CpuContext& ctx, const Network& net, int layer, std::int64_t k) : DnnlKernel(ctx) {
    m_elems = k * net.outputShape(layer).numel();
    m_data = plainDesc({m_elems});
    const auto attr = userScratchpad();
    const auto algo = dnnl::algorithm::eltwise_relu_use_dst_for_bwd;
    m_fwdPd = {{dnnl::prop_kind::forward_training, algo, m_data, 0.f, 0.f}, attr, ctx.engine};
    m_bwdPd = {{algo, m_data, m_data, 0.f, 0.f}, attr, ctx.engine, m_fwdPd};
    m_fwd = dnnl::eltwise_forward(m_fwdPd);
    m_bwd = dnnl::eltwise_backward(m_bwdPd);
    reserve(m_fwdPd);
    reserve(m_bwdPd);
    reserveGradTemp(m_elems);
  }
  void forward(const KernelArgs& a) override {
    exec(m_fwd, m_fwdPd,
         {{DNNL_ARG_SRC, mem(m_data, a.in[0])}, {DNNL_ARG_DST, mem(m_data, a.out)}});
  }
  void backward(const KernelArgs& a) override {
    if (!a.in_grad[0]) return;
    exec(m_bwd, m_bwdPd,
         {{DNNL_ARG_DST, mem(m_data, a.out)},
          {DNNL_ARG_DIFF_DST, mem(m_data, a.out_grad)},
          {DNNL_ARG_DIFF_SRC, mem(m_data, gradTarget(a, 0))}});
    finishGrad(a, 0, m_elems);
  }

 private:
  memory::desc m_data;
  dnnl::eltwise_forward::primitive_desc m_fwdPd;
  dnnl::eltwise_backward::primitive_desc m_bwdPd;
  dnnl::primitive m_fwd, m_bwd;
  std::int64_t m_elems = 0;
};

// ---------------------------------------------------------------------------------------------
/// The activations oneDNN has: clip (clip_v2, whose gradient passes strictly inside the bounds,
/// as PyTorch's hardtanh), sigmoid (logistic), both from their output; hardswish from its input.
class EltwiseKernel final : public DnnlKernel {
 public:
  EltwiseKernel(CpuContext& ctx, const Network& net, int layer, std::int64_t k) : DnnlKernel(ctx) {
    const Layer& l = net.layer(layer);
    m_elems = k * net.outputShape(layer).numel();
    m_data = plainDesc({m_elems});
    float alpha = 0.f, beta = 0.f;
    dnnl::algorithm algo = dnnl::algorithm::eltwise_hardswish;
    if (l.kind == LayerKind::Clip) {
      const auto& c = l.as<ClipAttrs>();
      constexpr float inf = std::numeric_limits<float>::infinity();
      alpha = c.min ? static_cast<float>(*c.min) : -inf;
      beta = c.max ? static_cast<float>(*c.max) : inf;
      algo = dnnl::algorithm::eltwise_clip_v2_use_dst_for_bwd;
      m_useDst = true;
    } else if (l.kind == LayerKind::Sigmoid) {
      algo = dnnl::algorithm::eltwise_logistic_use_dst_for_bwd;
      m_useDst = true;
    }
    const auto attr = userScratchpad();
    m_fwdPd = {{dnnl::prop_kind::forward_training, algo, m_data, alpha, beta}, attr, ctx.engine};
    m_bwdPd = {{algo, m_data, m_data, alpha, beta}, attr, ctx.engine, m_fwdPd};
    m_fwd = dnnl::eltwise_forward(m_fwdPd);
    m_bwd = dnnl::eltwise_backward(m_bwdPd);
    reserve(m_fwdPd);
    reserve(m_bwdPd);
    reserveGradTemp(m_elems);
  }
  void forward(const KernelArgs& a) override {
    exec(m_fwd, m_fwdPd,
         {{DNNL_ARG_SRC, mem(m_data, a.in[0])}, {DNNL_ARG_DST, mem(m_data, a.out)}});
  }
  void backward(const KernelArgs& a) override {
    if (!a.in_grad[0]) return;
    exec(m_bwd, m_bwdPd,
         {{m_useDst ? DNNL_ARG_DST : DNNL_ARG_SRC, mem(m_data, m_useDst ? a.out : a.in[0])},
          {DNNL_ARG_DIFF_DST, mem(m_data, a.out_grad)},
          {DNNL_ARG_DIFF_SRC, mem(m_data, gradTarget(a, 0))}});
    finishGrad(a, 0, m_elems);
  }

 private:
  memory::desc m_data;
  dnnl::eltwise_forward::primitive_desc m_fwdPd;
  dnnl::eltwise_backward::primitive_desc m_bwdPd;
  dnnl::primitive m_fwd, m_bwd;
  std::int64_t m_elems = 0;
  bool m_useDst = false;
};

// ---------------------------------------------------------------------------------------------
/// Max and average pooling. Max pooling's backward recomputes the forward from the input to get
/// oneDNN's argmax workspace (into scratch), so the pool holds only what the analyzer counts.
class PoolKernel final : public DnnlKernel {
 public:
  PoolKernel(CpuContext& ctx, const Network& net, int layer, std::int64_t k) : DnnlKernel(ctx) {
    const Layer& l = net.layer(layer);
    const auto& a = l.as<PoolAttrs>();
    const Shape& in = net.inputShape(layer);
    const Shape& out = net.outputShape(layer);
    m_max = l.kind == LayerKind::MaxPool2d;
    m_inElems = k * in.numel();
    m_outElems = k * out.numel();
    const memory::dims strides{a.stride_h, a.stride_w}, kernel{a.kernel_h, a.kernel_w},
        padL{a.pad_h, a.pad_w};
    const memory::dims padR{(out.height() - 1) * a.stride_h + a.kernel_h - in.height() - a.pad_h,
                            (out.width() - 1) * a.stride_w + a.kernel_w - in.width() - a.pad_w};
    m_src = fmDesc(k, in);
    m_dst = fmDesc(k, out);
    const auto algo = m_max                 ? dnnl::algorithm::pooling_max
                      : a.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                            : dnnl::algorithm::pooling_avg_exclude_padding;
    const auto attr = userScratchpad();
    m_fwdPd = {{dnnl::prop_kind::forward_training, algo, m_src, m_dst, strides, kernel, padL, padR},
               attr,
               ctx.engine};
    m_bwdPd = {{algo, m_src, m_dst, strides, kernel, padL, padR}, attr, ctx.engine, m_fwdPd};
    m_fwd = dnnl::pooling_forward(m_fwdPd);
    m_bwd = dnnl::pooling_backward(m_bwdPd);
    reserve(m_fwdPd);
    reserve(m_bwdPd);
    reserveGradTemp(m_inElems);
    if (m_max) {
      m_ws = m_fwdPd.workspace_desc();
      ctx.reserve(CpuContext::kPoolDst, static_cast<std::size_t>(m_outElems) * sizeof(float));
      ctx.reserve(CpuContext::kPoolWorkspace, m_ws.get_size());
    }
  }
  void forward(const KernelArgs& a) override {
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, mem(m_src, a.in[0])},
                                         {DNNL_ARG_DST, mem(m_dst, a.out)}};
    if (m_max) args.emplace(DNNL_ARG_WORKSPACE, mem(m_ws, m_ctx.slot(CpuContext::kPoolWorkspace)));
    exec(m_fwd, m_fwdPd, std::move(args));
  }
  void backward(const KernelArgs& a) override {
    if (!a.in_grad[0]) return;
    std::unordered_map<int, memory> args{{DNNL_ARG_DIFF_DST, mem(m_dst, a.out_grad)},
                                         {DNNL_ARG_DIFF_SRC, mem(m_src, gradTarget(a, 0))}};
    if (m_max) {
      const memory ws = mem(m_ws, m_ctx.slot(CpuContext::kPoolWorkspace));
      exec(m_fwd, m_fwdPd,
           {{DNNL_ARG_SRC, mem(m_src, a.in[0])},
            {DNNL_ARG_DST, mem(m_dst, m_ctx.slot(CpuContext::kPoolDst))},
            {DNNL_ARG_WORKSPACE, ws}});
      args.emplace(DNNL_ARG_WORKSPACE, ws);
    }
    exec(m_bwd, m_bwdPd, std::move(args));
    finishGrad(a, 0, m_inElems);
  }

 private:
  memory::desc m_src, m_dst, m_ws;
  dnnl::pooling_forward::primitive_desc m_fwdPd;
  dnnl::pooling_backward::primitive_desc m_bwdPd;
  dnnl::primitive m_fwd, m_bwd;
  std::int64_t m_inElems = 0, m_outElems = 0;
  bool m_max = false;
};

// ---------------------------------------------------------------------------------------------
// Loop kernels.

void writeGrad(float* dst, float value, bool accumulate) {
  if (accumulate) {
    *dst += value;
  } else {
    *dst = value;
  }
}

/// Where value (n, c, y, x) of a minibatch of images of shape `s` lies: the strides of n, c, y
/// and x in `layout`.
struct ImageStrides {
  ImageStrides(ImageLayout layout, const Shape& s) {
    const std::int64_t channels = s.channels(), h = s.height(), w = s.width();
    n = channels * h * w;
    if (layout == ImageLayout::Nhwc) {
      c = 1, y = w * channels, x = channels;
    } else {
      c = h * w, y = w, x = 1;
    }
  }
  std::int64_t at(std::int64_t in, std::int64_t ic, std::int64_t iy, std::int64_t ix) const {
    return in * n + ic * c + iy * y + ix * x;
  }
  std::int64_t n = 0, c = 0, y = 0, x = 0;
};

class AdaptiveAvgPoolKernel final : public LayerKernel {
 public:
  AdaptiveAvgPoolKernel(const Network& net, int layer, std::int64_t k, ImageLayout layout)
      : m_k(k),
        m_in(net.inputShape(layer)),
        m_out(net.outputShape(layer)),
        m_inAt(layout, m_in),
        m_outAt(layout, m_out) {}

  /// f(n, c, y0, y1, x0, x1, output index) for every output value's window.
  template <typename F>
  void windows(F&& f) const {
    const std::int64_t h = m_in.height(), w = m_in.width();
    const std::int64_t oh = m_out.height(), ow = m_out.width();
    for (std::int64_t n = 0; n < m_k; ++n) {
      for (std::int64_t c = 0; c < m_in.channels(); ++c) {
        for (std::int64_t y = 0; y < oh; ++y) {
          const std::int64_t y0 = adaptiveStart(y, h, oh), y1 = adaptiveEnd(y, h, oh);
          for (std::int64_t x = 0; x < ow; ++x) {
            const std::int64_t x0 = adaptiveStart(x, w, ow), x1 = adaptiveEnd(x, w, ow);
            f(n, c, y0, y1, x0, x1, m_outAt.at(n, c, y, x));
          }
        }
      }
    }
  }
  void forward(const KernelArgs& a) override {
    windows([&](std::int64_t n, std::int64_t c, std::int64_t y0, std::int64_t y1, std::int64_t x0,
                std::int64_t x1, std::int64_t o) {
      float sum = 0;
      for (std::int64_t y = y0; y < y1; ++y)
        for (std::int64_t x = x0; x < x1; ++x)
          sum += a.in[0][m_inAt.at(n, c, y, x)];
      a.out[o] = sum / static_cast<float>((y1 - y0) * (x1 - x0));
    });
  }
  void backward(const KernelArgs& a) override {
    if (!a.in_grad[0]) return;
    float* g = a.in_grad[0];
    if (!a.accumulate[0]) std::fill(g, g + m_k * m_in.numel(), 0.0f);
    windows([&](std::int64_t n, std::int64_t c, std::int64_t y0, std::int64_t y1, std::int64_t x0,
                std::int64_t x1, std::int64_t o) {
      const float v = a.out_grad[o] / static_cast<float>((y1 - y0) * (x1 - x0));
      for (std::int64_t y = y0; y < y1; ++y)
        for (std::int64_t x = x0; x < x1; ++x)
          g[m_inAt.at(n, c, y, x)] += v;
    });
  }

 private:
  std::int64_t m_k;
  Shape m_in, m_out;
  ImageStrides m_inAt, m_outAt;
};

class AddKernel final : public LayerKernel {
 public:
  AddKernel(const Network& net, int layer, std::int64_t k)
      : m_elems(k * net.outputShape(layer).numel()) {}
  void forward(const KernelArgs& a) override {
    for (std::int64_t j = 0; j < m_elems; ++j) {
      float s = a.in[0][j];
      for (std::size_t i = 1; i < a.in.size(); ++i)
        s += a.in[i][j];
      a.out[j] = s;
    }
  }
  void backward(const KernelArgs& a) override {
    for (std::size_t i = 0; i < a.in.size(); ++i) {
      if (!a.in_grad[i]) continue;
      for (std::int64_t j = 0; j < m_elems; ++j)
        writeGrad(&a.in_grad[i][j], a.out_grad[j], a.accumulate[i]);
    }
  }

 private:
  std::int64_t m_elems;
};

/// Concatenation along the channels (or features): per sample (NCHW) or per sample and pixel
/// (NHWC), the inputs' runs of values one after another.
class ConcatKernel final : public LayerKernel {
 public:
  ConcatKernel(const Network& net, int layer, std::int64_t k, ImageLayout layout) : m_k(k) {
    const Shape& out = net.outputShape(layer);
    // Under NHWC the channels of one pixel are contiguous: a run is one pixel's channels.
    const std::int64_t pixels =
        layout == ImageLayout::Nhwc && out.isImage() ? out.height() * out.width() : 1;
    m_k = k * pixels;
    for (std::size_t i = 0; i < net.inputsOf(layer).size(); ++i)
      m_sizes.push_back(net.inputShape(layer, static_cast<int>(i)).numel() / pixels);
    m_outSize = out.numel() / pixels;
  }
  void forward(const KernelArgs& a) override {
    for (std::int64_t n = 0; n < m_k; ++n) {
      std::int64_t off = n * m_outSize;
      for (std::size_t i = 0; i < m_sizes.size(); ++i) {
        std::memcpy(a.out + off, a.in[i] + n * m_sizes[i],
                    static_cast<std::size_t>(m_sizes[i]) * sizeof(float));
        off += m_sizes[i];
      }
    }
  }
  void backward(const KernelArgs& a) override {
    for (std::int64_t n = 0; n < m_k; ++n) {
      std::int64_t off = n * m_outSize;
      for (std::size_t i = 0; i < m_sizes.size(); ++i) {
        if (a.in_grad[i]) {
          for (std::int64_t j = 0; j < m_sizes[i]; ++j)
            writeGrad(&a.in_grad[i][n * m_sizes[i] + j], a.out_grad[off + j], a.accumulate[i]);
        }
        off += m_sizes[i];
      }
    }
  }

 private:
  std::int64_t m_k, m_outSize = 0;
  std::vector<std::int64_t> m_sizes;
};

/// Flattening to PyTorch's feature order (channel, row, column): a copy, or under NHWC a
/// transposition of each sample.
class FlattenKernel final : public LayerKernel {
 public:
  FlattenKernel(const Network& net, int layer, std::int64_t k, ImageLayout layout)
      : m_k(k),
        m_elems(k * net.outputShape(layer).numel()),
        m_in(net.inputShape(layer)),
        m_layout(layout) {}
  void forward(const KernelArgs& a) override {
    if (!differsFromNchw(m_layout, m_in)) {
      std::memcpy(a.out, a.in[0], static_cast<std::size_t>(m_elems) * sizeof(float));
      return;
    }
    convertImages(m_layout, m_in, m_k, a.in[0], a.out, false);
  }
  void backward(const KernelArgs& a) override {
    float* g = a.in_grad[0];
    if (!g) return;
    if (!differsFromNchw(m_layout, m_in)) {
      for (std::int64_t j = 0; j < m_elems; ++j)
        writeGrad(&g[j], a.out_grad[j], a.accumulate[0]);
      return;
    }
    const std::int64_t c = m_in.channels(), hw = m_in.height() * m_in.width();
    for (std::int64_t n = 0; n < m_k; ++n) {
      const std::int64_t base = n * c * hw;
      for (std::int64_t p = 0; p < hw; ++p)
        for (std::int64_t ch = 0; ch < c; ++ch)
          writeGrad(&g[base + p * c + ch], a.out_grad[base + ch * hw + p], a.accumulate[0]);
    }
  }

 private:
  std::int64_t m_k, m_elems;
  Shape m_in;
  ImageLayout m_layout;
};

/// Hardsigmoid, max(0, min(1, alpha x + beta)) (oneDNN 2 has no such algorithm); its gradient
/// is alpha dy strictly inside the linear range, from the input.
class HardSigmoidKernel final : public LayerKernel {
 public:
  HardSigmoidKernel(const Network& net, int layer, std::int64_t k)
      : m_elems(k * net.outputShape(layer).numel()) {
    const auto& a = net.layer(layer).as<HardSigmoidAttrs>();
    m_alpha = static_cast<float>(a.alpha);
    m_beta = static_cast<float>(a.beta);
  }
  void forward(const KernelArgs& a) override {
    for (std::int64_t j = 0; j < m_elems; ++j)
      a.out[j] = std::clamp(m_alpha * a.in[0][j] + m_beta, 0.0f, 1.0f);
  }
  void backward(const KernelArgs& a) override {
    if (!a.in_grad[0]) return;
    for (std::int64_t j = 0; j < m_elems; ++j) {
      const float y = m_alpha * a.in[0][j] + m_beta;
      writeGrad(&a.in_grad[0][j], y > 0.0f && y < 1.0f ? m_alpha * a.out_grad[j] : 0.0f,
                a.accumulate[0]);
    }
  }

 private:
  std::int64_t m_elems;
  float m_alpha = 0, m_beta = 0;
};

/// Elementwise product of two FMs of the same shape, or of a per-channel [C,1,1] FM and a
/// [C,H,W] one (squeeze-and-excitation), in either order. The per-channel input's gradient sums
/// over each channel's plane.
class MulKernel final : public LayerKernel {
 public:
  MulKernel(const Network& net, int layer, std::int64_t k, ImageLayout layout) {
    const Shape& out = net.outputShape(layer);
    m_elems = k * out.numel();
    for (int i = 0; i < 2; ++i)
      m_perChannel[i] = net.inputShape(layer, i).numel() != out.numel();
    m_plane = m_perChannel[0] || m_perChannel[1] ? out.height() * out.width() : 1;
    m_channelsLast = m_plane > 1 && differsFromNchw(layout, out);
    m_channels = out.isImage() ? out.channels() : 1;
  }
  /// The index into input i of output element j.
  std::int64_t at(int i, std::int64_t j) const {
    if (!m_perChannel[i]) return j;
    if (!m_channelsLast) return j / m_plane;
    return j / (m_plane * m_channels) * m_channels + j % m_channels;
  }
  void forward(const KernelArgs& a) override {
    for (std::int64_t j = 0; j < m_elems; ++j)
      a.out[j] = a.in[0][at(0, j)] * a.in[1][at(1, j)];
  }
  void backward(const KernelArgs& a) override {
    for (int i = 0; i < 2; ++i) {
      float* g = a.in_grad[static_cast<std::size_t>(i)];
      if (!g) continue;
      const float* other = a.in[static_cast<std::size_t>(1 - i)];
      const bool acc = a.accumulate[static_cast<std::size_t>(i)];
      if (!m_perChannel[i]) {
        for (std::int64_t j = 0; j < m_elems; ++j)
          writeGrad(&g[j], a.out_grad[j] * other[at(1 - i, j)], acc);
        continue;
      }
      for (std::int64_t c = 0; c < m_elems / m_plane; ++c) {
        float sum = 0;
        if (m_channelsLast) {  // channel c % C of sample c / C: every C-th value
          const std::int64_t first = c / m_channels * m_plane * m_channels + c % m_channels;
          for (std::int64_t p = 0; p < m_plane; ++p) {
            const std::int64_t j = first + p * m_channels;
            sum += a.out_grad[j] * other[j];
          }
        } else {
          for (std::int64_t j = c * m_plane; j < (c + 1) * m_plane; ++j)
            sum += a.out_grad[j] * other[j];
        }
        writeGrad(&g[c], sum, acc);
      }
    }
  }

 private:
  std::int64_t m_elems = 0, m_plane = 1, m_channels = 1;
  bool m_perChannel[2] = {false, false};
  bool m_channelsLast = false;  ///< the full-size input and the output are NHWC
};

/// Inverted dropout: kept elements are scaled by 1/(1-p). The mask is a pure function of the
/// seed and the element index, so it never depends on timing or on the swap set.
class DropoutKernel final : public LayerKernel {
 public:
  DropoutKernel(const Network& net, int layer, std::int64_t k, ImageLayout layout)
      : m_elems(k * net.outputShape(layer).numel()), m_p(net.layer(layer).as<DropoutAttrs>().p) {
    const Shape& s = net.outputShape(layer);
    if (differsFromNchw(layout, s)) {
      m_channels = s.channels();
      m_plane = s.height() * s.width();
    }
  }
  /// The NCHW index of the value at `j`: the mask's random number is drawn for it, so that the
  /// mask is the same in either layout.
  std::uint64_t logical(std::int64_t j) const {
    if (m_plane == 1) return static_cast<std::uint64_t>(j);
    const std::int64_t sample = m_channels * m_plane, r = j % sample;
    return static_cast<std::uint64_t>(j - r + r % m_channels * m_plane + r / m_channels);
  }
  void forward(const KernelArgs& a) override {
    if (!a.training || m_p == 0.0) {
      std::memcpy(a.out, a.in[0], static_cast<std::size_t>(m_elems) * sizeof(float));
      if (a.saved) std::memset(a.saved, 1, static_cast<std::size_t>(m_elems));
      return;
    }
    auto* mask = static_cast<std::uint8_t*>(a.saved);
    const float scale = m_p < 1.0 ? static_cast<float>(1.0 / (1.0 - m_p)) : 0.0f;
    for (std::int64_t j = 0; j < m_elems; ++j) {
      const bool keep = uniform01(a.seed, logical(j)) >= m_p;
      mask[j] = keep ? 1 : 0;
      a.out[j] = keep ? a.in[0][j] * scale : 0.0f;
    }
  }
  void backward(const KernelArgs& a) override {
    if (!a.in_grad[0]) return;
    const auto* mask = static_cast<const std::uint8_t*>(a.saved);
    const float scale = m_p < 1.0 ? static_cast<float>(1.0 / (1.0 - m_p)) : 0.0f;
    for (std::int64_t j = 0; j < m_elems; ++j)
      writeGrad(&a.in_grad[0][j], mask[j] ? a.out_grad[j] * scale : 0.0f, a.accumulate[0]);
  }

 private:
  std::int64_t m_elems;
  double m_p;
  std::int64_t m_channels = 1, m_plane = 1;  ///< of an NHWC image, else 1
};

/// Mean softmax cross-entropy over the minibatch. The gradient of the logits is
/// (softmax - onehot) / k, k the minibatch (KernelArgs::loss_samples); the loss's own output
/// gradient is 1.
class SoftmaxXentKernel final : public LayerKernel {
 public:
  SoftmaxXentKernel(const Network& net, int layer, std::int64_t rows)
      : m_rows(rows), m_classes(net.inputShape(layer).numel()) {}
  void forward(const KernelArgs& a) override {
    double total = 0;
    for (std::int64_t n = 0; n < m_rows; ++n) {
      const float* z = a.in[0] + n * m_classes;
      const std::int32_t y = label(a, n);
      const float m = *std::max_element(z, z + m_classes);
      double sum = 0;
      for (std::int64_t c = 0; c < m_classes; ++c)
        sum += std::exp(static_cast<double>(z[c] - m));
      total += std::log(sum) + m - z[y];
    }
    a.out[0] = static_cast<float>(total / static_cast<double>(samples(a)));
  }
  void backward(const KernelArgs& a) override {
    if (!a.in_grad[0]) return;
    const float invK = 1.0f / static_cast<float>(samples(a));
    for (std::int64_t n = 0; n < m_rows; ++n) {
      const float* z = a.in[0] + n * m_classes;
      float* g = a.in_grad[0] + n * m_classes;
      const std::int32_t y = label(a, n);
      const float m = *std::max_element(z, z + m_classes);
      float sum = 0;
      for (std::int64_t c = 0; c < m_classes; ++c)
        sum += std::exp(z[c] - m);
      for (std::int64_t c = 0; c < m_classes; ++c) {
        const float p = std::exp(z[c] - m) / sum;
        writeGrad(&g[c], (p - (c == y ? 1.0f : 0.0f)) * invK, a.accumulate[0]);
      }
    }
  }

 private:
  /// The samples the mean runs over: the minibatch, of which this kernel sees one pass in
  /// sub-batches.
  std::int64_t samples(const KernelArgs& a) const {
    return a.loss_samples > 0 ? a.loss_samples : m_rows;
  }
  std::int32_t label(const KernelArgs& a, std::int64_t n) const {
    const std::int32_t y = a.labels[n];
    if (y < 0 || y >= m_classes) {
      throw Error(ErrorKind::BadInput, "label " + std::to_string(y) + " of sample " +
                                           std::to_string(n) + " is outside the " +
                                           std::to_string(m_classes) + " classes");
    }
    return y;
  }
  std::int64_t m_rows, m_classes;
};

}  // namespace

std::unique_ptr<LayerKernel> createCpuKernel(CpuContext& ctx, const Network& net, int layer,
                                             std::int64_t samples) {
  try {
    switch (net.layer(layer).kind) {
      case LayerKind::Input:
        return nullptr;
      case LayerKind::Conv2d:
        return std::make_unique<ConvKernel>(ctx, net, layer, samples);
      case LayerKind::BatchNorm2d:
        return std::make_unique<BatchNormKernel>(ctx, net, layer, samples);
      case LayerKind::ReLU:
        return std::make_unique<ReluKernel>(ctx, net, layer, samples);
      case LayerKind::MaxPool2d:
      case LayerKind::AvgPool2d:
        return std::make_unique<PoolKernel>(ctx, net, layer, samples);
      case LayerKind::AdaptiveAvgPool2d:
        return std::make_unique<AdaptiveAvgPoolKernel>(net, layer, samples, ctx.layout);
      case LayerKind::Linear:
        return std::make_unique<LinearKernel>(ctx, net, layer, samples);
      case LayerKind::Add:
        return std::make_unique<AddKernel>(net, layer, samples);
      case LayerKind::Concat:
        return std::make_unique<ConcatKernel>(net, layer, samples, ctx.layout);
      case LayerKind::Flatten:
        return std::make_unique<FlattenKernel>(net, layer, samples, ctx.layout);
      case LayerKind::Dropout:
        return std::make_unique<DropoutKernel>(net, layer, samples, ctx.layout);
      case LayerKind::SoftmaxCrossEntropy:
        return std::make_unique<SoftmaxXentKernel>(net, layer, samples);
      case LayerKind::Clip:
      case LayerKind::Sigmoid:
      case LayerKind::HardSwish:
        return std::make_unique<EltwiseKernel>(ctx, net, layer, samples);
      case LayerKind::HardSigmoid:
        return std::make_unique<HardSigmoidKernel>(net, layer, samples);
      case LayerKind::Mul:
        return std::make_unique<MulKernel>(net, layer, samples, ctx.layout);
    }
  } catch (const dnnl::error& e) {
    throw Error(ErrorKind::Runtime, "oneDNN cannot run layer '" + net.layer(layer).name + "' at " +
                                        std::to_string(samples) + " samples: " + e.what());
  }
  throw Error(ErrorKind::Runtime, "no CPU kernel for layer '" + net.layer(layer).name + "'");
}

}  // namespace swapscope::rt::cpu
