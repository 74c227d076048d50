// SPDX-License-Identifier: MIT
/// @brief A small chain network with every swappable feature map swapped, for simulator and
/// planner tests: input -> conv1 -> relu1 -> conv2 -> flat -> fc -> loss (12 steps).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "analysis/network_analysis.h"
#include "graph/builder.h"
#include "perfmodel/simulator.h"

namespace swapscope::perf::testing {

struct Chain {
  Network net;
  std::vector<LayerCost> costs;
  Gmap gmap;
  MemoryCurve curve;
  Chain() : net(build()), costs(computeLayerCosts(net)) {
    gmap = buildGmap(net, costs, makeSwapSet(Policy::SwapAll, net, costs));
    curve = computeMemoryCurve(gmap);
  }
  static Network build() {
    NetworkBuilder b("chain");
    auto x = b.input("data", Shape{{1, 4, 4}});
    auto c1 = b.conv("conv1", x, 2, 3, 1, 1);
    auto r1 = b.relu("relu1", c1);
    auto c2 = b.conv("conv2", r1, 2, 3, 1, 1);
    auto f = b.flatten("flat", c2);
    auto l = b.linear("fc", f, 3);
    b.loss("loss", l);
    return std::move(b).build();
  }
  SimInput input(double step, double transfer) const {
    SimInput in;
    in.gmap = &gmap;
    in.curve = &curve;
    in.k = 1;
    in.step_seconds.assign(static_cast<std::size_t>(gmap.steps() + 1), step);
    in.offload_seconds.assign(gmap.buffers.size(), transfer);
    in.prefetch_seconds.assign(gmap.buffers.size(), transfer);
    return in;
  }
  /// The feature-map buffer of layer `name`, or -1.
  int buffer(const std::string& name) const {
    for (std::size_t b = 0; b < gmap.buffers.size(); ++b) {
      if (gmap.buffers[b].name == name && gmap.buffers[b].kind == BufferKind::FeatureMap)
        return static_cast<int>(b);
    }
    return -1;
  }
  int step(GmapOpKind kind, int buffer, bool backward) const {
    for (const GmapOp& op : gmap.ops) {
      if (op.kind == kind && op.buffer == buffer && gmap.isBackwardStep(op.step) == backward)
        return op.step;
    }
    return -1;
  }
};

}  // namespace swapscope::perf::testing
