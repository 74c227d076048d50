// SPDX-License-Identifier: MIT
/// @brief The network: a validated DAG of layers in topological order, with inferred shapes.
///
/// A Network is immutable once built. Network::build checks everything a user can get wrong
/// (unknown or duplicate names, wrong input counts, cycles, shape mismatches) and throws
/// Error(BadInput) with a message that names the layer, and for shapes the expected and actual one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/layer.h"
#include "graph/shape.h"

namespace swapscope {

class Network {
 public:
  /// Validates `layers` (in any order that the inputs allow) and infers shapes. The network must
  /// have exactly one input layer, and exactly one softmax_cross_entropy layer as its only sink.
  static Network build(std::string name, std::vector<Layer> layers);

  const std::string& name() const { return m_name; }
  /// Layers in topological order; index i is the layer's id everywhere else in the engine.
  const std::vector<Layer>& layers() const { return m_layers; }
  int size() const { return static_cast<int>(m_layers.size()); }
  const Layer& layer(int i) const { return m_layers.at(i); }
  /// Ids of the layers whose outputs layer i reads, in the order of Layer::inputs.
  const std::vector<int>& inputsOf(int i) const { return m_inputs.at(i); }
  /// Ids of the layers that read layer i's output, in increasing order.
  const std::vector<int>& consumersOf(int i) const { return m_consumers.at(i); }
  /// Per-sample output shape of layer i.
  const Shape& outputShape(int i) const { return m_shapes.at(i); }
  /// Per-sample shape of the input_index-th input of layer i.
  const Shape& inputShape(int i, int input_index = 0) const {
    return m_shapes.at(m_inputs.at(i).at(input_index));
  }
  /// Id of the layer with this name, or -1.
  int indexOf(const std::string& name) const;

  int inputLayer() const { return m_inputLayer; }
  int lossLayer() const { return m_lossLayer; }
  /// Per-sample shape of the input batch, e.g. [3,224,224].
  const Shape& sampleShape() const { return m_shapes.at(m_inputLayer); }
  /// Number of classes the loss expects (the feature count of its input).
  std::int64_t classes() const { return inputShape(m_lossLayer).dims.at(0); }

  /// A 64-bit FNV-1a hash of the structure (kinds, attributes, edges; not names), as 16 hex
  /// digits. Plans use it to refuse running on a different network.
  /// Computed once, when the network is built (a network does not change afterwards).
  const std::string& structureHash() const { return m_hash; }

  friend bool operator==(const Network& a, const Network& b) {
    return a.m_name == b.m_name && a.m_layers == b.m_layers;
  }

 private:
  std::string m_name;
  std::vector<Layer> m_layers;
  std::vector<std::vector<int>> m_inputs;
  std::vector<std::vector<int>> m_consumers;
  std::vector<Shape> m_shapes;
  int m_inputLayer = -1;
  int m_lossLayer = -1;
  std::string m_hash;

  std::string computeStructureHash() const;
};

}  // namespace swapscope
