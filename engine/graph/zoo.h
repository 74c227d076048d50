// SPDX-License-Identifier: MIT
/// @brief The model zoo: torchvision's ImageNet CNNs layer for layer, He et al.'s CIFAR ResNets,
/// and a small Fashion-MNIST CNN. Input size and class count are parameters.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/network.h"

namespace swapscope {

struct ZooOptions {
  std::optional<Shape> input;           ///< per-sample input [C,H,W]; default per model
  std::optional<std::int64_t> classes;  ///< class count; default per model
};

struct ZooEntry {
  std::string name;
  std::string family;       ///< "torchvision", "cifar-resnet" or "small"
  std::string description;  ///< one line for `swapscope models`
  Shape default_input;
  std::int64_t default_classes;
};

/// Every zoo model, in the order `swapscope models` lists them.
const std::vector<ZooEntry>& zooEntries();
/// The entry for `name`, or nullptr.
const ZooEntry* findZooEntry(const std::string& name);
/// Builds a zoo model. Throws Error(BadInput) for an unknown name (listing the known ones) or an
/// input size the architecture cannot take (naming the layer where it breaks).
Network buildZooModel(const std::string& name, const ZooOptions& options = {});

// The builders behind the registry (zoo_torchvision.cpp, zoo_small.cpp).
Network buildAlexNet(const Shape& input, std::int64_t classes);
Network buildVgg(int depth, const Shape& input, std::int64_t classes);
Network buildGoogLeNet(const Shape& input, std::int64_t classes);
Network buildResNet(int depth, const Shape& input, std::int64_t classes);
Network buildCifarResNet(int depth, const Shape& input, std::int64_t classes);
Network buildFashionCnn(const Shape& input, std::int64_t classes);

}  // namespace swapscope
