// SPDX-License-Identifier: MIT
#include "graph/builder.h"

namespace swapscope {

std::string NetworkBuilder::push(Layer layer) {
  m_layers.push_back(std::move(layer));
  return m_layers.back().name;
}

std::string NetworkBuilder::input(const std::string& name, Shape shape) {
  return push({name, LayerKind::Input, {}, InputAttrs{std::move(shape)}});
}

std::string NetworkBuilder::conv(const std::string& name, const std::string& in,
                                 std::int64_t out_channels, std::int64_t kernel,
                                 std::int64_t stride, std::int64_t pad, bool bias,
                                 std::int64_t groups) {
  Conv2dAttrs a;
  a.out_channels = out_channels;
  a.kernel_h = a.kernel_w = kernel;
  a.stride_h = a.stride_w = stride;
  a.pad_h = a.pad_w = pad;
  a.groups = groups;
  a.bias = bias;
  return push({name, LayerKind::Conv2d, {in}, a});
}

std::string NetworkBuilder::batchNorm(const std::string& name, const std::string& in, double eps) {
  BatchNormAttrs a;
  a.eps = eps;
  return push({name, LayerKind::BatchNorm2d, {in}, a});
}

std::string NetworkBuilder::relu(const std::string& name, const std::string& in) {
  return push({name, LayerKind::ReLU, {in}, NoAttrs{}});
}

std::string NetworkBuilder::maxPool(const std::string& name, const std::string& in,
                                    std::int64_t kernel, std::int64_t stride, std::int64_t pad,
                                    bool ceil_mode) {
  PoolAttrs a;
  a.kernel_h = a.kernel_w = kernel;
  a.stride_h = a.stride_w = stride;
  a.pad_h = a.pad_w = pad;
  a.ceil_mode = ceil_mode;
  return push({name, LayerKind::MaxPool2d, {in}, a});
}

std::string NetworkBuilder::avgPool(const std::string& name, const std::string& in,
                                    std::int64_t kernel, std::int64_t stride, std::int64_t pad) {
  PoolAttrs a;
  a.kernel_h = a.kernel_w = kernel;
  a.stride_h = a.stride_w = stride;
  a.pad_h = a.pad_w = pad;
  return push({name, LayerKind::AvgPool2d, {in}, a});
}

std::string NetworkBuilder::adaptiveAvgPool(const std::string& name, const std::string& in,
                                            std::int64_t out_h, std::int64_t out_w) {
  return push({name, LayerKind::AdaptiveAvgPool2d, {in}, AdaptivePoolAttrs{out_h, out_w}});
}

std::string NetworkBuilder::linear(const std::string& name, const std::string& in,
                                   std::int64_t out_features, bool bias) {
  LinearAttrs a;
  a.out_features = out_features;
  a.bias = bias;
  return push({name, LayerKind::Linear, {in}, a});
}

std::string NetworkBuilder::add(const std::string& name, std::vector<std::string> ins) {
  return push({name, LayerKind::Add, std::move(ins), NoAttrs{}});
}

std::string NetworkBuilder::concat(const std::string& name, std::vector<std::string> ins) {
  return push({name, LayerKind::Concat, std::move(ins), NoAttrs{}});
}

std::string NetworkBuilder::flatten(const std::string& name, const std::string& in) {
  return push({name, LayerKind::Flatten, {in}, NoAttrs{}});
}

std::string NetworkBuilder::dropout(const std::string& name, const std::string& in, double p) {
  return push({name, LayerKind::Dropout, {in}, DropoutAttrs{p}});
}

std::string NetworkBuilder::clip(const std::string& name, const std::string& in,
                                 std::optional<double> min, std::optional<double> max) {
  return push({name, LayerKind::Clip, {in}, ClipAttrs{min, max}});
}

std::string NetworkBuilder::sigmoid(const std::string& name, const std::string& in) {
  return push({name, LayerKind::Sigmoid, {in}, NoAttrs{}});
}

std::string NetworkBuilder::hardSigmoid(const std::string& name, const std::string& in,
                                        double alpha, double beta) {
  return push({name, LayerKind::HardSigmoid, {in}, HardSigmoidAttrs{alpha, beta}});
}

std::string NetworkBuilder::hardSwish(const std::string& name, const std::string& in) {
  return push({name, LayerKind::HardSwish, {in}, NoAttrs{}});
}

std::string NetworkBuilder::mul(const std::string& name, const std::string& a,
                                const std::string& b) {
  return push({name, LayerKind::Mul, {a, b}, NoAttrs{}});
}

std::string NetworkBuilder::loss(const std::string& name, const std::string& in) {
  return push({name, LayerKind::SoftmaxCrossEntropy, {in}, NoAttrs{}});
}

Network NetworkBuilder::build() && {
  return Network::build(m_name, std::move(m_layers));
}

}  // namespace swapscope
