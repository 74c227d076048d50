// SPDX-License-Identifier: MIT
// CUDA kernels of the layers. cuDNN 9's legacy API for convolution, batch norm, ReLU and pooling,
// cuBLAS for linear layers, and the small kernels of ops.cu for the rest. Every tensor is NCHW
// fp32 in the pool, exactly the analyzer's tensors; a convolution's workspace is pool memory
// that the executor allocates for its step (LayerKernel::workspaceBytes).
#include <algorithm>
#include <climits>
#include <limits>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "common/error.h"
#include "runtime/cuda/cuda_context.h"
#include "runtime/cuda/handles.h"
#include "runtime/cuda/ops.h"

namespace swapscope::rt::cuda {
namespace {

constexpr float kOne = 1.0f, kZero = 0.0f;

int toInt(std::int64_t v, const Network& net, int layer) {
  if (v > INT_MAX) {
    throw Error(ErrorKind::Runtime, "layer '" + net.layer(layer).name + "': a dimension of " +
                                        std::to_string(v) +
                                        " exceeds cuDNN's 32-bit limit; use a smaller minibatch");
  }
  return static_cast<int>(v);
}

/// A 4-d NCHW descriptor of [k, shape...]: flat features become [k, F, 1, 1].
TensorDesc batchTensor(const Network& net, int layer, std::int64_t k, const Shape& s) {
  TensorDesc d = makeTensorDesc();
  std::int64_t c = s.dims.at(0), h = 1, w = 1;
  if (s.dims.size() == 3) {
    h = s.dims[1];
    w = s.dims[2];
  } else if (s.dims.size() != 1) {
    throw Error(ErrorKind::Runtime, "layer '" + net.layer(layer).name + "': shape " + s.toString() +
                                        " has no NCHW layout");
  }
  SWAPSCOPE_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.get(), CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                                   toInt(k, net, layer), toInt(c, net, layer),
                                                   toInt(h, net, layer), toInt(w, net, layer)));
  return d;
}

const float* beta(bool accumulate) {
  return accumulate ? &kOne : &kZero;
}

/// Whether the first input of `layer` needs a gradient (the analyzer's needs_grad).
bool inputNeedsGrad(const Network& net, const std::vector<LayerCost>& costs, int layer) {
  return costs.at(static_cast<std::size_t>(net.inputsOf(layer).at(0))).needs_grad;
}

// ---------------------------------------------------------------------------------------------
// Convolution algorithm choice.

const char* fwdAlgoName(cudnnConvolutionFwdAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM:
      return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM:
      return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM:
      return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT:
      return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT:
      return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING:
      return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD:
      return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED:
      return "WINOGRAD_NONFUSED";
    default:
      return "?";
  }
}
const char* bwdDataAlgoName(cudnnConvolutionBwdDataAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_0:
      return "ALGO_0";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_1:
      return "ALGO_1";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT:
      return "FFT";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING:
      return "FFT_TILING";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD:
      return "WINOGRAD";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED:
      return "WINOGRAD_NONFUSED";
    default:
      return "?";
  }
}
const char* bwdFilterAlgoName(cudnnConvolutionBwdFilterAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0:
      return "ALGO_0";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1:
      return "ALGO_1";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT:
      return "FFT";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3:
      return "ALGO_3";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED:
      return "WINOGRAD_NONFUSED";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING:
      return "FFT_TILING";
    default:
      return "?";
  }
}

/// Algorithms cuDNN documents as non-deterministic (they accumulate with atomics), refused in
/// deterministic mode whatever the heuristics' records say.
bool knownNondeterministic(cudnnConvolutionBwdDataAlgo_t a) {
  return a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
}
bool knownNondeterministic(cudnnConvolutionBwdFilterAlgo_t a) {
  return a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0 || a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;
}
bool knownNondeterministic(cudnnConvolutionFwdAlgo_t) {
  return false;
}

struct AlgoChoice {
  int algo = -1;
  std::size_t workspace = 0;
  cudnnMathType_t math = CUDNN_FMA_MATH;
  std::string name;
};

/// Picks one algorithm of a convolution pass. `perfs` are cuDNN's heuristic records, best first;
/// `sizeOf(algo, math)` asks cuDNN for the workspace (false where the algorithm cannot run). In
/// fp32 mode every candidate runs with FMA math (no TF32); in tf32 mode with the math the
/// heuristics name. Every algorithm id is tried after the records, so that a pass always gets
/// one if cuDNN supports any.
template <typename Algo, typename Perf, typename SizeFn, typename NameFn>
AlgoChoice chooseAlgo(const std::vector<Perf>& perfs, int algoCount, const DeviceOptions& o,
                      SizeFn sizeOf, NameFn nameOf, const std::string& what) {
  std::vector<AlgoChoice> candidates;
  auto consider = [&](Algo algo, cudnnMathType_t math) {
    for (const AlgoChoice& c : candidates) {
      if (c.algo == static_cast<int>(algo)) return;
    }
    if (o.deterministic && knownNondeterministic(algo)) return;
    std::size_t bytes = 0;
    if (!sizeOf(algo, math, bytes)) return;
    candidates.push_back({static_cast<int>(algo), bytes, math, nameOf(algo)});
  };
  const cudnnMathType_t plain = o.math == MathMode::Fp32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
  for (const Perf& p : perfs) {
    if (p.status != CUDNN_STATUS_SUCCESS) continue;
    if (o.deterministic && p.determinism != CUDNN_DETERMINISTIC) continue;
    consider(p.algo, o.math == MathMode::Fp32 ? CUDNN_FMA_MATH : p.mathType);
  }
  for (int a = 0; a < algoCount; ++a)
    consider(static_cast<Algo>(a), plain);
  if (candidates.empty()) {
    throw Error(ErrorKind::Runtime, what + ": cuDNN supports no " +
                                        (o.deterministic ? "deterministic " : "") +
                                        "algorithm for it");
  }
  if (o.conv_algo == ConvAlgoPolicy::Memory) {
    return *std::min_element(candidates.begin(), candidates.end(),
                             [](const AlgoChoice& a, const AlgoChoice& b) {
                               return a.workspace < b.workspace;  // stable: heuristics' order
                             });
  }
  for (const AlgoChoice& c : candidates) {
    if (static_cast<std::int64_t>(c.workspace) <= o.workspace_limit) return c;
  }
  // None fits the limit: the least workspace is the only honest fallback.
  return *std::min_element(
      candidates.begin(), candidates.end(),
      [](const AlgoChoice& a, const AlgoChoice& b) { return a.workspace < b.workspace; });
}

std::string describeChoice(const char* pass, const AlgoChoice& c) {
  std::string s = pass;
  s += " ";
  s += c.name;
  if (c.math == CUDNN_TENSOR_OP_MATH || c.math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
    s += " (tensor ops)";
  s += " ";
  s += formatBytes(static_cast<std::int64_t>(c.workspace));
  return s;
}

// ---------------------------------------------------------------------------------------------
class ConvKernel final : public LayerKernel {
 public:
  ConvKernel(CudaContext& ctx, const Network& net, const std::vector<LayerCost>& costs, int layer,
             std::int64_t k)
      : m_ctx(ctx) {
    const Layer& l = net.layer(layer);
    const auto& a = l.as<Conv2dAttrs>();
    const Shape& in = net.inputShape(layer);
    const Shape& out = net.outputShape(layer);
    m_x = batchTensor(net, layer, k, in);
    m_y = batchTensor(net, layer, k, out);
    m_w = makeFilterDesc();
    const std::int64_t cPerGroup = in.channels() / a.groups;
    m_weightElems = a.out_channels * cPerGroup * a.kernel_h * a.kernel_w;
    SWAPSCOPE_CUDNN_CHECK(
        cudnnSetFilter4dDescriptor(m_w.get(), CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                   toInt(a.out_channels, net, layer), toInt(cPerGroup, net, layer),
                                   toInt(a.kernel_h, net, layer), toInt(a.kernel_w, net, layer)));
    for (ConvDesc* d : {&m_fwdConv, &m_dataConv, &m_filterConv}) {
      *d = makeConvDesc();
      SWAPSCOPE_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
          d->get(), toInt(a.pad_h, net, layer), toInt(a.pad_w, net, layer),
          toInt(a.stride_h, net, layer), toInt(a.stride_w, net, layer), 1, 1,
          CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
      SWAPSCOPE_CUDNN_CHECK(cudnnSetConvolutionGroupCount(d->get(), toInt(a.groups, net, layer)));
    }
    int n = 0, c = 0, h = 0, w = 0;
    SWAPSCOPE_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(m_fwdConv.get(), m_x.get(),
                                                                m_w.get(), &n, &c, &h, &w));
    if (n != k || c != a.out_channels || h != out.height() || w != out.width()) {
      throw Error(ErrorKind::Runtime, "layer '" + l.name + "': cuDNN computes an output of [" +
                                          std::to_string(c) + ", " + std::to_string(h) + ", " +
                                          std::to_string(w) + "], the network says " +
                                          out.toString());
    }
    if (a.bias) {
      m_bias = makeTensorDesc();
      SWAPSCOPE_CUDNN_CHECK(cudnnSetTensor4dDescriptor(m_bias.get(), CUDNN_TENSOR_NCHW,
                                                       CUDNN_DATA_FLOAT, 1,
                                                       toInt(a.out_channels, net, layer), 1, 1));
    }
    m_needsDataGrad = inputNeedsGrad(net, costs, layer);
    chooseAlgorithms(l.name);
  }

  void forward(const KernelArgs& a) override {
    SWAPSCOPE_CUDNN_CHECK(
        cudnnConvolutionForward(m_ctx.cudnn, &kOne, m_x.get(), a.in[0], m_w.get(), a.weights,
                                m_fwdConv.get(), static_cast<cudnnConvolutionFwdAlgo_t>(m_fwd.algo),
                                a.workspace, m_fwd.workspace, &kZero, m_y.get(), a.out));
    if (m_bias) {
      SWAPSCOPE_CUDNN_CHECK(cudnnAddTensor(m_ctx.cudnn, &kOne, m_bias.get(),
                                           a.weights + m_weightElems, &kOne, m_y.get(), a.out));
    }
  }

  void backward(const KernelArgs& a) override {
    if (a.in_grad[0]) {
      SWAPSCOPE_CUDNN_CHECK(cudnnConvolutionBackwardData(
          m_ctx.cudnn, &kOne, m_w.get(), a.weights, m_y.get(), a.out_grad, m_dataConv.get(),
          static_cast<cudnnConvolutionBwdDataAlgo_t>(m_data.algo), a.workspace, m_data.workspace,
          beta(a.accumulate[0]), m_x.get(), a.in_grad[0]));
    }
    SWAPSCOPE_CUDNN_CHECK(cudnnConvolutionBackwardFilter(
        m_ctx.cudnn, &kOne, m_x.get(), a.in[0], m_y.get(), a.out_grad, m_filterConv.get(),
        static_cast<cudnnConvolutionBwdFilterAlgo_t>(m_filter.algo), a.workspace,
        m_filter.workspace, beta(a.accumulate_weight_grad), m_w.get(), a.weight_grad));
    if (m_bias) {
      SWAPSCOPE_CUDNN_CHECK(cudnnConvolutionBackwardBias(
          m_ctx.cudnn, &kOne, m_y.get(), a.out_grad, beta(a.accumulate_weight_grad), m_bias.get(),
          a.weight_grad + m_weightElems));
    }
  }

  std::int64_t workspaceBytes(bool backward) const override {
    if (!backward) return static_cast<std::int64_t>(m_fwd.workspace);
    return static_cast<std::int64_t>(
        std::max(m_needsDataGrad ? m_data.workspace : 0, m_filter.workspace));
  }

  std::string algorithms() const override {
    std::string s = describeChoice("fwd", m_fwd);
    if (m_needsDataGrad) s += "; " + describeChoice("bwd-data", m_data);
    s += "; " + describeChoice("bwd-filter", m_filter);
    return s;
  }

 private:
  void chooseAlgorithms(const std::string& name) {
    const DeviceOptions& o = m_ctx.options;
    cudnnHandle_t h = m_ctx.cudnn;
    {
      std::vector<cudnnConvolutionFwdAlgoPerf_t> perfs(CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
      int returned = 0;
      SWAPSCOPE_CUDNN_CHECK(cudnnSetConvolutionMathType(
          m_fwdConv.get(), o.math == MathMode::Fp32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
      SWAPSCOPE_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(
          h, m_x.get(), m_w.get(), m_fwdConv.get(), m_y.get(), static_cast<int>(perfs.size()),
          &returned, perfs.data()));
      perfs.resize(static_cast<std::size_t>(returned));
      m_fwd = chooseAlgo<cudnnConvolutionFwdAlgo_t>(
          perfs, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, o,
          [&](cudnnConvolutionFwdAlgo_t algo, cudnnMathType_t math, std::size_t& bytes) {
            return cudnnSetConvolutionMathType(m_fwdConv.get(), math) == CUDNN_STATUS_SUCCESS &&
                   cudnnGetConvolutionForwardWorkspaceSize(h, m_x.get(), m_w.get(), m_fwdConv.get(),
                                                           m_y.get(), algo,
                                                           &bytes) == CUDNN_STATUS_SUCCESS;
          },
          fwdAlgoName, "the forward convolution of layer '" + name + "'");
      SWAPSCOPE_CUDNN_CHECK(cudnnSetConvolutionMathType(m_fwdConv.get(), m_fwd.math));
    }
    if (m_needsDataGrad) {
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perfs(CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
      int returned = 0;
      SWAPSCOPE_CUDNN_CHECK(cudnnSetConvolutionMathType(
          m_dataConv.get(), o.math == MathMode::Fp32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
      SWAPSCOPE_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(
          h, m_w.get(), m_y.get(), m_dataConv.get(), m_x.get(), static_cast<int>(perfs.size()),
          &returned, perfs.data()));
      perfs.resize(static_cast<std::size_t>(returned));
      m_data = chooseAlgo<cudnnConvolutionBwdDataAlgo_t>(
          perfs, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, o,
          [&](cudnnConvolutionBwdDataAlgo_t algo, cudnnMathType_t math, std::size_t& bytes) {
            return cudnnSetConvolutionMathType(m_dataConv.get(), math) == CUDNN_STATUS_SUCCESS &&
                   cudnnGetConvolutionBackwardDataWorkspaceSize(h, m_w.get(), m_y.get(),
                                                                m_dataConv.get(), m_x.get(), algo,
                                                                &bytes) == CUDNN_STATUS_SUCCESS;
          },
          bwdDataAlgoName, "the data gradient of layer '" + name + "'");
      SWAPSCOPE_CUDNN_CHECK(cudnnSetConvolutionMathType(m_dataConv.get(), m_data.math));
    }
    {
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perfs(
          CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT);
      int returned = 0;
      SWAPSCOPE_CUDNN_CHECK(cudnnSetConvolutionMathType(
          m_filterConv.get(), o.math == MathMode::Fp32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
      SWAPSCOPE_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
          h, m_x.get(), m_y.get(), m_filterConv.get(), m_w.get(), static_cast<int>(perfs.size()),
          &returned, perfs.data()));
      perfs.resize(static_cast<std::size_t>(returned));
      m_filter = chooseAlgo<cudnnConvolutionBwdFilterAlgo_t>(
          perfs, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, o,
          [&](cudnnConvolutionBwdFilterAlgo_t algo, cudnnMathType_t math, std::size_t& bytes) {
            return cudnnSetConvolutionMathType(m_filterConv.get(), math) == CUDNN_STATUS_SUCCESS &&
                   cudnnGetConvolutionBackwardFilterWorkspaceSize(
                       h, m_x.get(), m_y.get(), m_filterConv.get(), m_w.get(), algo, &bytes) ==
                       CUDNN_STATUS_SUCCESS;
          },
          bwdFilterAlgoName, "the weight gradient of layer '" + name + "'");
      SWAPSCOPE_CUDNN_CHECK(cudnnSetConvolutionMathType(m_filterConv.get(), m_filter.math));
    }
  }

  CudaContext& m_ctx;
  TensorDesc m_x, m_y, m_bias;
  FilterDesc m_w;
  ConvDesc m_fwdConv, m_dataConv, m_filterConv;
  AlgoChoice m_fwd, m_data, m_filter;
  std::int64_t m_weightElems = 0;
  bool m_needsDataGrad = true;
};

// ---------------------------------------------------------------------------------------------
/// Linear on cuBLAS. cuBLAS is column-major, and a row-major [r, c] matrix is its transpose
/// there: with X [k, in], W [out, in] and Y [k, out] row-major, Y^T = W X^T is
/// gemm(T, N, out, k, in); the data gradient dX^T = W^T dY^T is gemm(N, N, in, k, out); the
/// weight gradient dW^T = X^T dY is gemm(N, T, in, out, k).
class LinearKernel final : public LayerKernel {
 public:
  LinearKernel(CudaContext& ctx, const Network& net, int layer, std::int64_t k)
      : m_ctx(ctx),
        m_k(toInt(k, net, layer)),
        m_in(toInt(net.inputShape(layer).numel(), net, layer)),
        m_out(toInt(net.layer(layer).as<LinearAttrs>().out_features, net, layer)),
        m_bias(net.layer(layer).as<LinearAttrs>().bias) {}

  void forward(const KernelArgs& a) override {
    SWAPSCOPE_CUBLAS_CHECK(cublasSgemm(m_ctx.cublas, CUBLAS_OP_T, CUBLAS_OP_N, m_out, m_k, m_in,
                                       &kOne, a.weights, m_in, a.in[0], m_in, &kZero, a.out,
                                       m_out));
    if (m_bias) ops::addBiasRows(m_ctx.compute, a.out, a.weights + weightElems(), m_k, m_out);
  }

  void backward(const KernelArgs& a) override {
    if (a.in_grad[0]) {
      SWAPSCOPE_CUBLAS_CHECK(cublasSgemm(m_ctx.cublas, CUBLAS_OP_N, CUBLAS_OP_N, m_in, m_k, m_out,
                                         &kOne, a.weights, m_in, a.out_grad, m_out,
                                         beta(a.accumulate[0]), a.in_grad[0], m_in));
    }
    SWAPSCOPE_CUBLAS_CHECK(cublasSgemm(m_ctx.cublas, CUBLAS_OP_N, CUBLAS_OP_T, m_in, m_out, m_k,
                                       &kOne, a.in[0], m_in, a.out_grad, m_out,
                                       beta(a.accumulate_weight_grad), a.weight_grad, m_in));
    if (m_bias) {
      ops::columnSums(m_ctx.compute, a.weight_grad + weightElems(), a.out_grad, m_k, m_out,
                      a.accumulate_weight_grad);
    }
  }

 private:
  std::int64_t weightElems() const { return static_cast<std::int64_t>(m_in) * m_out; }
  CudaContext& m_ctx;
  int m_k, m_in, m_out;
  bool m_bias;
};

// ---------------------------------------------------------------------------------------------
/// Spatial batch norm on cuDNN, PyTorch's semantics: batch statistics in training, the running
/// statistics updated with `momentum` (cuDNN's exponential average factor) and the unbiased
/// variance. Saved state: batch mean and inverse standard deviation, as the analyzer counts.
class BatchNormKernel final : public LayerKernel {
 public:
  BatchNormKernel(CudaContext& ctx, const Network& net, const std::vector<LayerCost>& costs,
                  int layer, std::int64_t k)
      : m_ctx(ctx) {
    const auto& a = net.layer(layer).as<BatchNormAttrs>();
    const Shape& s = net.outputShape(layer);
    if (a.eps < CUDNN_BN_MIN_EPSILON) {
      throw Error(ErrorKind::BadInput, "layer '" + net.layer(layer).name + "': eps " +
                                           std::to_string(a.eps) + " is below cuDNN's minimum " +
                                           std::to_string(CUDNN_BN_MIN_EPSILON));
    }
    m_eps = a.eps;
    m_momentum = a.momentum;
    m_channels = s.channels();
    m_x = batchTensor(net, layer, k, s);
    m_stat = makeTensorDesc();
    SWAPSCOPE_CUDNN_CHECK(
        cudnnDeriveBNTensorDescriptor(m_stat.get(), m_x.get(), CUDNN_BATCHNORM_SPATIAL));
    // Where the input needs no gradient, cuDNN still writes one: into the step's workspace.
    if (!inputNeedsGrad(net, costs, layer)) m_scratchBytes = k * s.numel() * kFloatBytes;
  }

  void forward(const KernelArgs& a) override {
    const float* gamma = a.weights;
    const float* betaP = a.weights + m_channels;
    float* mean = a.running_stats;
    float* var = a.running_stats + m_channels;
    if (!a.training) {
      SWAPSCOPE_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(
          m_ctx.cudnn, CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, m_x.get(), a.in[0], m_x.get(), a.out,
          m_stat.get(), gamma, betaP, mean, var, m_eps));
      return;
    }
    float* saved = static_cast<float*>(a.saved);
    SWAPSCOPE_CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
        m_ctx.cudnn, CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, m_x.get(), a.in[0], m_x.get(), a.out,
        m_stat.get(), gamma, betaP, m_momentum, a.recompute ? nullptr : mean,
        a.recompute ? nullptr : var, m_eps, saved, saved + m_channels));  // null: not updated
  }

  void backward(const KernelArgs& a) override {
    const float* saved = static_cast<const float*>(a.saved);
    float* dx = a.in_grad[0] ? a.in_grad[0] : static_cast<float*>(a.workspace);
    const bool accumulate = a.in_grad[0] && a.accumulate[0];
    SWAPSCOPE_CUDNN_CHECK(cudnnBatchNormalizationBackward(
        m_ctx.cudnn, CUDNN_BATCHNORM_SPATIAL, &kOne, beta(accumulate), &kOne,
        beta(a.accumulate_weight_grad), m_x.get(), a.in[0], m_x.get(), a.out_grad, m_x.get(), dx,
        m_stat.get(), a.weights, a.weight_grad, a.weight_grad + m_channels, m_eps, saved,
        saved + m_channels));
  }

  std::int64_t workspaceBytes(bool backward) const override {
    return backward ? m_scratchBytes : 0;
  }

 private:
  CudaContext& m_ctx;
  TensorDesc m_x, m_stat;
  std::int64_t m_channels = 0, m_scratchBytes = 0;
  double m_eps = 1e-5, m_momentum = 0.1;
};

// ---------------------------------------------------------------------------------------------
/// ReLU on cuDNN. Its backward reads only the output, as the analyzer says: for ReLU the output
/// is positive exactly where the input is, so the output also stands in for cuDNN's x argument.
class ReluKernel final : public LayerKernel {
 public:
  ReluKernel(CudaContext& ctx, const Network& net, int layer, std::int64_t k) : m_ctx(ctx) {
    m_x = batchTensor(net, layer, k, net.outputShape(layer));
    m_act = makeActivationDesc();
    SWAPSCOPE_CUDNN_CHECK(cudnnSetActivationDescriptor(m_act.get(), CUDNN_ACTIVATION_RELU,
                                                       CUDNN_NOT_PROPAGATE_NAN, 0.0));
  }
  void forward(const KernelArgs& a) override {
    SWAPSCOPE_CUDNN_CHECK(cudnnActivationForward(m_ctx.cudnn, m_act.get(), &kOne, m_x.get(),
                                                 a.in[0], &kZero, m_x.get(), a.out));
  }
  void backward(const KernelArgs& a) override {
    if (!a.in_grad[0]) return;
    SWAPSCOPE_CUDNN_CHECK(cudnnActivationBackward(m_ctx.cudnn, m_act.get(), &kOne, m_x.get(), a.out,
                                                  m_x.get(), a.out_grad, m_x.get(), a.out,
                                                  beta(a.accumulate[0]), m_x.get(), a.in_grad[0]));
  }

 private:
  CudaContext& m_ctx;
  TensorDesc m_x;
  ActivationDesc m_act;
};

// ---------------------------------------------------------------------------------------------
/// Max and average pooling on cuDNN (symmetric padding; a ceil_mode shape cuDNN cannot produce
/// is refused at creation). Average pooling's backward reads neither input nor output, so the
/// gradients stand in for them there.
class PoolKernel final : public LayerKernel {
 public:
  PoolKernel(CudaContext& ctx, const Network& net, int layer, std::int64_t k) : m_ctx(ctx) {
    const Layer& l = net.layer(layer);
    const auto& a = l.as<PoolAttrs>();
    const Shape& out = net.outputShape(layer);
    m_max = l.kind == LayerKind::MaxPool2d;
    m_x = batchTensor(net, layer, k, net.inputShape(layer));
    m_y = batchTensor(net, layer, k, out);
    m_pool = makePoolDesc();
    const cudnnPoolingMode_t mode =
        m_max ? (ctx.options.deterministic ? CUDNN_POOLING_MAX_DETERMINISTIC : CUDNN_POOLING_MAX)
        : a.count_include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                              : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    SWAPSCOPE_CUDNN_CHECK(cudnnSetPooling2dDescriptor(
        m_pool.get(), mode, CUDNN_NOT_PROPAGATE_NAN, toInt(a.kernel_h, net, layer),
        toInt(a.kernel_w, net, layer), toInt(a.pad_h, net, layer), toInt(a.pad_w, net, layer),
        toInt(a.stride_h, net, layer), toInt(a.stride_w, net, layer)));
    int n = 0, c = 0, h = 0, w = 0;
    SWAPSCOPE_CUDNN_CHECK(
        cudnnGetPooling2dForwardOutputDim(m_pool.get(), m_x.get(), &n, &c, &h, &w));
    if (h != out.height() || w != out.width()) {
      throw Error(
          ErrorKind::Runtime,
          "layer '" + l.name + "': cuDNN pools to " + std::to_string(h) + "x" + std::to_string(w) +
              " but the network says " + out.toString() +
              (a.ceil_mode ? " (ceil_mode needs asymmetric padding, which cuDNN lacks)" : ""));
    }
  }
  void forward(const KernelArgs& a) override {
    SWAPSCOPE_CUDNN_CHECK(cudnnPoolingForward(m_ctx.cudnn, m_pool.get(), &kOne, m_x.get(), a.in[0],
                                              &kZero, m_y.get(), a.out));
  }
  void backward(const KernelArgs& a) override {
    if (!a.in_grad[0]) return;
    const void* y = m_max ? static_cast<const void*>(a.out) : a.out_grad;
    const void* x = m_max ? static_cast<const void*>(a.in[0]) : a.in_grad[0];
    SWAPSCOPE_CUDNN_CHECK(cudnnPoolingBackward(m_ctx.cudnn, m_pool.get(), &kOne, m_y.get(), y,
                                               m_y.get(), a.out_grad, m_x.get(), x,
                                               beta(a.accumulate[0]), m_x.get(), a.in_grad[0]));
  }

 private:
  CudaContext& m_ctx;
  TensorDesc m_x, m_y;
  PoolDesc m_pool;
  bool m_max = false;
};

// ---------------------------------------------------------------------------------------------
// Small-kernel layers.

class AdaptiveAvgPoolKernel final : public LayerKernel {
 public:
  AdaptiveAvgPoolKernel(CudaContext& ctx, const Network& net, int layer, std::int64_t k)
      : m_ctx(ctx), m_k(k), m_in(net.inputShape(layer)), m_out(net.outputShape(layer)) {}
  void forward(const KernelArgs& a) override {
    ops::adaptiveAvgPoolForward(m_ctx.compute, a.out, a.in[0], m_k * m_in.channels(), m_in.height(),
                                m_in.width(), m_out.height(), m_out.width());
  }
  void backward(const KernelArgs& a) override {
    if (!a.in_grad[0]) return;
    ops::adaptiveAvgPoolBackward(m_ctx.compute, a.in_grad[0], a.out_grad, m_k * m_in.channels(),
                                 m_in.height(), m_in.width(), m_out.height(), m_out.width(),
                                 a.accumulate[0]);
  }

 private:
  CudaContext& m_ctx;
  std::int64_t m_k;
  Shape m_in, m_out;
};

class AddKernel final : public LayerKernel {
 public:
  AddKernel(CudaContext& ctx, const Network& net, int layer, std::int64_t k)
      : m_ctx(ctx), m_elems(k * net.outputShape(layer).numel()) {}
  void forward(const KernelArgs& a) override {
    for (std::size_t i = 0; i < a.in.size(); ++i)
      ops::copyOrAdd(m_ctx.compute, a.out, a.in[i], m_elems, i > 0);
  }
  void backward(const KernelArgs& a) override {
    for (std::size_t i = 0; i < a.in.size(); ++i) {
      if (a.in_grad[i])
        ops::copyOrAdd(m_ctx.compute, a.in_grad[i], a.out_grad, m_elems, a.accumulate[i]);
    }
  }

 private:
  CudaContext& m_ctx;
  std::int64_t m_elems;
};

class ConcatKernel final : public LayerKernel {
 public:
  ConcatKernel(CudaContext& ctx, const Network& net, int layer, std::int64_t k)
      : m_ctx(ctx), m_k(k), m_outSize(net.outputShape(layer).numel()) {
    for (std::size_t i = 0; i < net.inputsOf(layer).size(); ++i)
      m_sizes.push_back(net.inputShape(layer, static_cast<int>(i)).numel());
  }
  void forward(const KernelArgs& a) override {
    std::int64_t off = 0;
    for (std::size_t i = 0; i < m_sizes.size(); ++i) {
      ops::stridedCopy(m_ctx.compute, a.out + off, m_outSize, a.in[i], m_sizes[i], m_sizes[i], m_k,
                       false);
      off += m_sizes[i];
    }
  }
  void backward(const KernelArgs& a) override {
    std::int64_t off = 0;
    for (std::size_t i = 0; i < m_sizes.size(); ++i) {
      if (a.in_grad[i]) {
        ops::stridedCopy(m_ctx.compute, a.in_grad[i], m_sizes[i], a.out_grad + off, m_outSize,
                         m_sizes[i], m_k, a.accumulate[i]);
      }
      off += m_sizes[i];
    }
  }

 private:
  CudaContext& m_ctx;
  std::int64_t m_k, m_outSize;
  std::vector<std::int64_t> m_sizes;
};

class FlattenKernel final : public LayerKernel {
 public:
  FlattenKernel(CudaContext& ctx, const Network& net, int layer, std::int64_t k)
      : m_ctx(ctx), m_elems(k * net.outputShape(layer).numel()) {}
  void forward(const KernelArgs& a) override {
    ops::copyOrAdd(m_ctx.compute, a.out, a.in[0], m_elems, false);
  }
  void backward(const KernelArgs& a) override {
    if (a.in_grad[0])
      ops::copyOrAdd(m_ctx.compute, a.in_grad[0], a.out_grad, m_elems, a.accumulate[0]);
  }

 private:
  CudaContext& m_ctx;
  std::int64_t m_elems;
};

class DropoutKernel final : public LayerKernel {
 public:
  DropoutKernel(CudaContext& ctx, const Network& net, int layer, std::int64_t k)
      : m_ctx(ctx),
        m_elems(k * net.outputShape(layer).numel()),
        m_p(net.layer(layer).as<DropoutAttrs>().p) {}
  void forward(const KernelArgs& a) override {
    ops::dropoutForward(m_ctx.compute, a.out, static_cast<std::uint8_t*>(a.saved), a.in[0], m_elems,
                        m_p, a.seed, a.training);
  }
  void backward(const KernelArgs& a) override {
    if (!a.in_grad[0]) return;
    ops::dropoutBackward(m_ctx.compute, a.in_grad[0], a.out_grad,
                         static_cast<const std::uint8_t*>(a.saved), m_elems, m_p, a.accumulate[0]);
  }

 private:
  CudaContext& m_ctx;
  std::int64_t m_elems;
  double m_p;
};

class SoftmaxXentKernel final : public LayerKernel {
 public:
  SoftmaxXentKernel(CudaContext& ctx, const Network& net, int layer, std::int64_t rows)
      : m_ctx(ctx), m_rows(rows), m_classes(net.inputShape(layer).numel()) {}
  void forward(const KernelArgs& a) override {
    ops::softmaxXentForward(m_ctx.compute, a.out, a.in[0], a.labels, m_rows, m_classes, samples(a));
  }
  void backward(const KernelArgs& a) override {
    if (!a.in_grad[0]) return;
    ops::softmaxXentBackward(m_ctx.compute, a.in_grad[0], a.in[0], a.labels, m_rows, m_classes,
                             samples(a), a.accumulate[0]);
  }

 private:
  /// The samples the mean runs over: the minibatch, of which this kernel sees one pass in
  /// sub-batches.
  std::int64_t samples(const KernelArgs& a) const {
    return a.loss_samples > 0 ? a.loss_samples : m_rows;
  }
  CudaContext& m_ctx;
  std::int64_t m_rows, m_classes;
};

/// Clip, sigmoid, hardsigmoid and hardswish (ops.cu). Clip and sigmoid take their gradient from
/// the output, the others from the input, as the analyzer's reads say.
class ActivationKernel final : public LayerKernel {
 public:
  ActivationKernel(CudaContext& ctx, const Network& net, int layer, std::int64_t k)
      : m_ctx(ctx), m_elems(k * net.outputShape(layer).numel()) {
    const Layer& l = net.layer(layer);
    switch (l.kind) {
      case LayerKind::Clip: {
        const auto& c = l.as<ClipAttrs>();
        constexpr float inf = std::numeric_limits<float>::infinity();
        m_f = ops::Activation::Clip;
        m_a = c.min ? static_cast<float>(*c.min) : -inf;
        m_b = c.max ? static_cast<float>(*c.max) : inf;
        break;
      }
      case LayerKind::Sigmoid:
        m_f = ops::Activation::Sigmoid;
        break;
      case LayerKind::HardSigmoid:
        m_f = ops::Activation::HardSigmoid;
        m_a = static_cast<float>(l.as<HardSigmoidAttrs>().alpha);
        m_b = static_cast<float>(l.as<HardSigmoidAttrs>().beta);
        break;
      default:
        m_f = ops::Activation::HardSwish;
    }
  }
  void forward(const KernelArgs& a) override {
    ops::activationForward(m_ctx.compute, m_f, a.out, a.in[0], m_elems, m_a, m_b);
  }
  void backward(const KernelArgs& a) override {
    if (!a.in_grad[0]) return;
    const bool fromOutput = m_f == ops::Activation::Clip || m_f == ops::Activation::Sigmoid;
    ops::activationBackward(m_ctx.compute, m_f, a.in_grad[0], a.out_grad,
                            fromOutput ? a.out : a.in[0], m_elems, m_a, m_b, a.accumulate[0]);
  }

 private:
  CudaContext& m_ctx;
  std::int64_t m_elems;
  ops::Activation m_f = ops::Activation::HardSwish;
  float m_a = 0, m_b = 0;
};

/// Elementwise product, of the same shape or per channel ([C,1,1] x [C,H,W]).
class MulKernel final : public LayerKernel {
 public:
  MulKernel(CudaContext& ctx, const Network& net, int layer, std::int64_t k)
      : m_ctx(ctx), m_elems(k * net.outputShape(layer).numel()) {
    const Shape& out = net.outputShape(layer);
    for (int i = 0; i < 2; ++i) {
      m_plane[i] = net.inputShape(layer, i).numel() != out.numel() ? out.height() * out.width() : 1;
    }
  }
  void forward(const KernelArgs& a) override {
    ops::mulForward(m_ctx.compute, a.out, a.in[0], m_plane[0], a.in[1], m_plane[1], m_elems);
  }
  void backward(const KernelArgs& a) override {
    for (int i = 0; i < 2; ++i) {
      const auto u = static_cast<std::size_t>(i);
      if (!a.in_grad[u]) continue;
      ops::mulBackward(m_ctx.compute, a.in_grad[u], m_plane[i], a.out_grad, a.in[1 - u],
                       m_plane[1 - i], m_elems, a.accumulate[u]);
    }
  }

 private:
  CudaContext& m_ctx;
  std::int64_t m_elems;
  std::int64_t m_plane[2] = {1, 1};
};

}  // namespace

std::unique_ptr<LayerKernel> createCudaKernel(CudaContext& ctx, const Network& net,
                                              const std::vector<LayerCost>& costs, int layer,
                                              std::int64_t samples) {
  switch (net.layer(layer).kind) {
    case LayerKind::Input:
      return nullptr;
    case LayerKind::Conv2d:
      return std::make_unique<ConvKernel>(ctx, net, costs, layer, samples);
    case LayerKind::BatchNorm2d:
      return std::make_unique<BatchNormKernel>(ctx, net, costs, layer, samples);
    case LayerKind::ReLU:
      return std::make_unique<ReluKernel>(ctx, net, layer, samples);
    case LayerKind::MaxPool2d:
    case LayerKind::AvgPool2d:
      return std::make_unique<PoolKernel>(ctx, net, layer, samples);
    case LayerKind::AdaptiveAvgPool2d:
      return std::make_unique<AdaptiveAvgPoolKernel>(ctx, net, layer, samples);
    case LayerKind::Linear:
      return std::make_unique<LinearKernel>(ctx, net, layer, samples);
    case LayerKind::Add:
      return std::make_unique<AddKernel>(ctx, net, layer, samples);
    case LayerKind::Concat:
      return std::make_unique<ConcatKernel>(ctx, net, layer, samples);
    case LayerKind::Flatten:
      return std::make_unique<FlattenKernel>(ctx, net, layer, samples);
    case LayerKind::Dropout:
      return std::make_unique<DropoutKernel>(ctx, net, layer, samples);
    case LayerKind::SoftmaxCrossEntropy:
      return std::make_unique<SoftmaxXentKernel>(ctx, net, layer, samples);
    case LayerKind::Clip:
    case LayerKind::Sigmoid:
    case LayerKind::HardSigmoid:
    case LayerKind::HardSwish:
      return std::make_unique<ActivationKernel>(ctx, net, layer, samples);
    case LayerKind::Mul:
      return std::make_unique<MulKernel>(ctx, net, layer, samples);
  }
  throw Error(ErrorKind::Runtime, "no CUDA kernel for layer '" + net.layer(layer).name + "'");
}

}  // namespace swapscope::rt::cuda
