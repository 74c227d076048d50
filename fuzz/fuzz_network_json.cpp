// SPDX-License-Identifier: MIT
/// @brief Network JSON reader: the text goes through networkFromText, the in-memory part of
/// readNetworkFile (parse, then networkFromJson). A network it accepts then goes through what
/// every verb does next: layer costs, the analysis (GMAPs and memory curves) and the peaks and
/// k_max at small minibatches. Invariants: an accepted network writes and reads back equal, and
/// the analysis of an accepted network never fails with a runtime error (a broken GMAP).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "analysis/layer_cost.h"
#include "analysis/network_analysis.h"
#include "analysis/swap_policy.h"
#include "common/error.h"
#include "fuzz_common.h"
#include "graph/network_json.h"

using namespace swapscope;

namespace {

void analyze(const Network& net) {
  const std::vector<LayerCost> costs = computeLayerCosts(net);
  const NetworkAnalysis a = analyzeNetwork(net);
  if (a.costs.size() != costs.size()) fuzz::finding("analyzeNetwork: cost count differs");
  // The same overflow guard as `analyze`: a k whose per-sample counts overflow is refused.
  std::int64_t perSample = a.totals.trainFlops();
  for (const LinearBytes& r : a.keep_all.curve.resident)
    perSample = std::max(perSample, r.per_sample);
  const MemoryPlan vdnn = planMemory(net, a.costs, makeSwapSet(Policy::VdnnConv, net, a.costs));
  for (const std::int64_t k : {1, 2, 7}) {
    if (perSample > (std::int64_t{1} << 62) / k) break;
    const std::int64_t keep = a.keep_all.curve.peak(k);
    const std::int64_t swap = a.swap_all.curve.peak(k);
    const std::int64_t mid = vdnn.curve.peak(k);
    if (swap > keep || mid > keep) {
      fuzz::finding("swapping raised the peak at k = " + std::to_string(k) + ": keep-all " +
                    std::to_string(keep) + ", swap-all " + std::to_string(swap) + ", vdnn-conv " +
                    std::to_string(mid));
    }
    (void)a.keep_all.curve.peakStep(k);
    if (a.keep_all.curve.kMax(keep) < k) {
      fuzz::finding("k_max for keep-all's own peak at k = " + std::to_string(k) + " is below k");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Network net;
  try {
    net = networkFromText(fuzz::asText(data, size), "fuzz.json");
  } catch (const Error&) {
    return 0;
  }
  // Accepted: it must round-trip through the canonical writer.
  try {
    const std::string text = networkToText(net);
    const Network back = networkFromText(text, "written.json");
    if (!(back == net)) fuzz::finding("an accepted network reads back different after writing");
    if (networkToText(back) != text) fuzz::finding("an accepted network writes different text");
  } catch (const Error& e) {
    fuzz::finding(std::string("an accepted network does not read back: ") + e.what());
  }
  try {
    analyze(net);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Runtime) {
      fuzz::finding(std::string("analysis of an accepted network failed: ") + e.what());
    }
  }
  return 0;
}
