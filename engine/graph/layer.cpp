// SPDX-License-Identifier: MIT
#include "graph/layer.h"

#include "common/name_table.h"
#include "graph/json_guard.h"

namespace swapscope {
namespace {

constexpr NamedValue<LayerKind> kNames[] = {
    {LayerKind::Input, "input"},
    {LayerKind::Conv2d, "conv2d"},
    {LayerKind::BatchNorm2d, "batchnorm2d"},
    {LayerKind::ReLU, "relu"},
    {LayerKind::MaxPool2d, "maxpool2d"},
    {LayerKind::AvgPool2d, "avgpool2d"},
    {LayerKind::AdaptiveAvgPool2d, "adaptive_avgpool2d"},
    {LayerKind::Linear, "linear"},
    {LayerKind::Add, "add"},
    {LayerKind::Concat, "concat"},
    {LayerKind::Flatten, "flatten"},
    {LayerKind::Dropout, "dropout"},
    {LayerKind::SoftmaxCrossEntropy, "softmax_cross_entropy"},
    {LayerKind::Clip, "clip"},
    {LayerKind::Sigmoid, "sigmoid"},
    {LayerKind::HardSigmoid, "hardsigmoid"},
    {LayerKind::HardSwish, "hardswish"},
    {LayerKind::Mul, "mul"},
};

}  // namespace

std::string_view layerKindName(LayerKind kind) {
  return nameIn(kNames, kind);
}

std::optional<LayerKind> layerKindFromName(std::string_view name) {
  return valueIn(kNames, name);
}

std::string allLayerKindNames() {
  std::string out;
  for (const auto& [k, name] : kNames) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

std::string describeLayer(const Layer& l) {
  // Appended, not a literal + a temporary (GCC 12 at -O3 misreads that as an overlapping copy).
  std::string s = "layer '";
  s += echoText(l.name);
  s += "' (";
  s += layerKindName(l.kind);
  s += ')';
  return s;
}

}  // namespace swapscope
