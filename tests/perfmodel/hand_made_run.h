// SPDX-License-Identifier: MIT
/// @brief Run databases made by hand for the model and planner tests: the rows every one needs
/// (the network and its layers) and the copies a fit of the link needs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/network_analysis.h"
#include "store/run_db.h"

namespace swapscope::perf::testing {

/// A run database of `net` with nothing recorded yet: its path, a test device, the network and
/// one row per layer with the analyzer's costs.
inline store::RunData handMadeRun(const Network& net, std::string path) {
  const std::vector<LayerCost> costs = computeLayerCosts(net);
  store::RunData run;
  run.path = std::move(path);
  run.meta.device = "test device";
  run.network.name = net.name();
  run.network.structure_hash = net.structureHash();
  for (int i = 0; i < net.size(); ++i) {
    const LayerCost& c = costs[static_cast<std::size_t>(i)];
    run.layers.push_back({i,
                          net.layer(i).name,
                          std::string(layerKindName(net.layer(i).kind)),
                          {},
                          {},
                          c.params,
                          c.fwd_flops,
                          c.bwd_data_flops,
                          c.bwd_weight_flops,
                          c.fm});
  }
  return run;
}

/// At minibatch k, copies of `unit` and 3 `unit` bytes each way at `bytesPerSecond` without
/// latency. Each direction is recorded in an iteration of its own (0 to the host, 1 to the
/// device), so that no copy overlaps one in the other direction.
inline void addCopies(store::RunData& run, std::int64_t k, double unit, double bytesPerSecond) {
  for (const bool toHost : {true, false}) {
    for (const double bytes : {unit, 3 * unit}) {
      store::TransferRow t;
      t.k = k;
      t.iteration = toHost ? 0 : 1;
      t.to_host = toHost;
      t.kind = toHost ? store::TransferKind::Offload : store::TransferKind::Prefetch;
      t.bytes = static_cast<std::int64_t>(bytes);
      t.end_ns = static_cast<std::int64_t>(bytes * 1e9 / bytesPerSecond);
      run.transfers.push_back(t);
    }
  }
}

}  // namespace swapscope::perf::testing
