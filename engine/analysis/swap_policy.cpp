// SPDX-License-Identifier: MIT
#include "analysis/swap_policy.h"

#include "common/error.h"
#include "graph/json_guard.h"

namespace swapscope {

bool isLightLayer(LayerKind kind) {
  switch (kind) {
    case LayerKind::ReLU:
    case LayerKind::BatchNorm2d:
    case LayerKind::MaxPool2d:
    case LayerKind::AvgPool2d:
    case LayerKind::AdaptiveAvgPool2d:
    case LayerKind::Add:
    case LayerKind::Concat:
    case LayerKind::Flatten:
    case LayerKind::Dropout:
    case LayerKind::Clip:
    case LayerKind::Sigmoid:
    case LayerKind::HardSigmoid:
    case LayerKind::HardSwish:
    case LayerKind::Mul:
      return true;
    default:
      return false;
  }
}

std::vector<bool> recomputableFms(const Network& net, const std::vector<LayerCost>& costs) {
  const std::vector<bool> read = swappableFms(net, costs);
  // remakeable[i]: layer i can run again in backward from kept or prefetched FMs, through FMs
  // released in forward (layer ids are topological, so every input's entry is known).
  std::vector<bool> remakeable(net.size(), false), out(net.size(), false);
  for (int i = 0; i < net.size(); ++i) {
    if (i == net.inputLayer() || !isLightLayer(net.layer(i).kind)) continue;
    bool ok = true;
    for (int src : net.inputsOf(i))
      ok = ok && (read[src] ? !out[src] : remakeable[src]);
    remakeable[i] = ok;
    out[i] = ok && read[i] && !net.consumersOf(i).empty();
  }
  return out;
}

std::vector<bool> swappableFms(const Network& net, const std::vector<LayerCost>& costs) {
  std::vector<bool> swappable(net.size(), false);
  for (int i = 0; i < net.size(); ++i) {
    if (costs[i].reads.output) swappable[i] = true;
    if (costs[i].reads.inputs) {
      for (int src : net.inputsOf(i))
        swappable[src] = true;
    }
  }
  return swappable;
}

FixedSets fixedSets(Policy policy, const Network& net, const std::vector<LayerCost>& costs) {
  const PolicyInfo& info = policyInfo(policy);
  if (!info.fixed()) {
    throw Error(ErrorKind::Runtime, "policy " + std::string(info.name) +
                                        " is searched by the planner; its swap set does not " +
                                        "follow from the network alone");
  }
  return info.sets(net, costs);
}

SwapSet makeSwapSet(Policy policy, const Network& net, const std::vector<LayerCost>& costs) {
  return fixedSets(policy, net, costs).swapped;
}

RecomputeSet makeRecomputeSet(Policy policy, const Network& net,
                              const std::vector<LayerCost>& costs) {
  if (!policyInfo(policy).fixed()) return RecomputeSet(net.size(), false);
  return fixedSets(policy, net, costs).recomputed;
}

namespace {

std::vector<bool> fmSetFromNames(const Network& net, const std::vector<LayerCost>& costs,
                                 const std::vector<std::string>& names, const std::string& where,
                                 const std::string& field, const char* verb) {
  std::vector<bool> set(net.size(), false);
  const std::vector<bool> swappable = swappableFms(net, costs);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string entry =
        where + "[" + std::to_string(i) + "]" + field + ": '" + echoText(names[i]) + "'";
    const int id = net.indexOf(names[i]);
    if (id < 0) throwBadInput(entry + " does not name a layer of '" + net.name() + "'");
    if (!swappable[id]) {
      throwBadInput(entry + ": its feature map is not read by any backward step, so it cannot " +
                    "be " + verb);
    }
    set[id] = true;
  }
  return set;
}

}  // namespace

RecomputeSet recomputeSetFromNames(const Network& net, const std::vector<LayerCost>& costs,
                                   const std::vector<std::string>& names, const std::string& where,
                                   const std::string& field) {
  return fmSetFromNames(net, costs, names, where, field, "recomputed");
}

SwapSet swapSetFromNames(const Network& net, const std::vector<LayerCost>& costs,
                         const std::vector<std::string>& names, const std::string& where,
                         const std::string& field) {
  return fmSetFromNames(net, costs, names, where, field, "swapped");
}

}  // namespace swapscope
