// SPDX-License-Identifier: MIT
/// @brief A small fluent helper to write networks in code (used by the zoo and the tests). Each
/// call adds one layer and returns its name, which later calls use as an input.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/network.h"

namespace swapscope {

class NetworkBuilder {
 public:
  explicit NetworkBuilder(std::string name) : m_name(std::move(name)) {}

  std::string input(const std::string& name, Shape shape);
  std::string conv(const std::string& name, const std::string& in, std::int64_t out_channels,
                   std::int64_t kernel, std::int64_t stride = 1, std::int64_t pad = 0,
                   bool bias = true, std::int64_t groups = 1);
  std::string batchNorm(const std::string& name, const std::string& in, double eps = 1e-5);
  std::string relu(const std::string& name, const std::string& in);
  std::string maxPool(const std::string& name, const std::string& in, std::int64_t kernel,
                      std::int64_t stride, std::int64_t pad = 0, bool ceil_mode = false);
  std::string avgPool(const std::string& name, const std::string& in, std::int64_t kernel,
                      std::int64_t stride, std::int64_t pad = 0);
  std::string adaptiveAvgPool(const std::string& name, const std::string& in, std::int64_t out_h,
                              std::int64_t out_w);
  std::string linear(const std::string& name, const std::string& in, std::int64_t out_features,
                     bool bias = true);
  std::string add(const std::string& name, std::vector<std::string> ins);
  std::string concat(const std::string& name, std::vector<std::string> ins);
  std::string flatten(const std::string& name, const std::string& in);
  std::string dropout(const std::string& name, const std::string& in, double p);
  std::string clip(const std::string& name, const std::string& in, std::optional<double> min,
                   std::optional<double> max);
  std::string sigmoid(const std::string& name, const std::string& in);
  std::string hardSigmoid(const std::string& name, const std::string& in, double alpha = 1.0 / 6.0,
                          double beta = 0.5);
  std::string hardSwish(const std::string& name, const std::string& in);
  std::string mul(const std::string& name, const std::string& a, const std::string& b);
  std::string loss(const std::string& name, const std::string& in);

  /// Validates and returns the network (Network::build).
  Network build() &&;

 private:
  std::string push(Layer layer);

  std::string m_name;
  std::vector<Layer> m_layers;
};

}  // namespace swapscope
