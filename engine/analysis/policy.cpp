// SPDX-License-Identifier: MIT
#include "analysis/policy.h"

#include <array>
#include <utility>

#include "analysis/swap_policy.h"
#include "common/error.h"
#include "graph/network.h"

namespace swapscope {

namespace {

// The fixed policies' functions (each row below names its own).

FixedSets keepAllSets(const Network& net, const std::vector<LayerCost>&) {
  return {std::vector<bool>(net.size(), false), std::vector<bool>(net.size(), false)};
}

FixedSets swapAllSets(const Network& net, const std::vector<LayerCost>& costs) {
  return {swappableFms(net, costs), std::vector<bool>(net.size(), false)};
}

/// vDNN's conv policy: the FMs that convolutions read, where some backward step reads them too.
FixedSets vdnnConvSets(const Network& net, const std::vector<LayerCost>& costs) {
  const std::vector<bool> swappable = swappableFms(net, costs);
  std::vector<bool> swapped(net.size(), false);
  for (int i = 0; i < net.size(); ++i) {
    if (net.layer(i).kind != LayerKind::Conv2d) continue;
    for (int src : net.inputsOf(i))
      swapped[src] = swappable[src];
  }
  return {std::move(swapped), std::vector<bool>(net.size(), false)};
}

/// SuperNeurons' rule: recompute the light layers' FMs that recomputableFms finds, swap the rest.
FixedSets recomputeLightSets(const Network& net, const std::vector<LayerCost>& costs) {
  std::vector<bool> recomputed = recomputableFms(net, costs);
  std::vector<bool> swapped = swappableFms(net, costs);
  for (int i = 0; i < net.size(); ++i)
    swapped[i] = swapped[i] && !recomputed[i];
  return {std::move(swapped), std::move(recomputed)};
}

constexpr std::array kPolicies{
    PolicyInfo{Policy::KeepAll, "keep-all", "keep every feature map on the device (no swapping)",
               PolicyChoice::Fixed, kFmKeep, &keepAllSets},
    PolicyInfo{Policy::SwapAll, "swap-all",
               "swap every feature map a backward step reads (the smallest swapping peak)",
               PolicyChoice::Fixed, kFmSwap, &swapAllSets},
    PolicyInfo{Policy::VdnnConv, "vdnn-conv",
               "vDNN: swap the feature maps that convolutions read, keep the rest",
               PolicyChoice::Fixed, kFmKeep | kFmSwap, &vdnnConvSets},
    PolicyInfo{Policy::AccUdnn, "accudnn",
               "AccUDNN: from swap-all, keep the feature maps whose swaps stall the most per byte",
               PolicyChoice::Searched, kFmKeep | kFmSwap},
    PolicyInfo{Policy::RecomputeLight, "recompute-light",
               "SuperNeurons' rule: recompute the feature maps of light layers (ReLU, batch norm, "
               "pooling, add, concat, flatten), swap the rest",
               PolicyChoice::Fixed, kFmSwap | kFmRecompute, &recomputeLightSets},
    PolicyInfo{Policy::Ito, "ito",
               "Ito et al.: keep or swap as accudnn does, then recompute the swapped feature maps "
               "whose re-make costs less than their copies where the simulation is no slower",
               PolicyChoice::Searched, kFmKeep | kFmSwap | kFmRecompute},
};

/// Every fixed row has its function and no searched row has one.
constexpr bool behaviourMatchesChoice() {
  for (const PolicyInfo& info : kPolicies) {
    if (info.fixed() != (info.sets != nullptr)) return false;
  }
  return true;
}
static_assert(behaviourMatchesChoice(),
              "a fixed policy's row names its function; a searched policy's row names none");

bool inRows(const PolicyInfo& p, PolicyRows rows) {
  return rows == PolicyRows::All || p.fixed();
}

}  // namespace

std::span<const PolicyInfo> policyTable() {
  return kPolicies;
}

const PolicyInfo& policyInfo(Policy p) {
  for (const PolicyInfo& info : kPolicies) {
    if (info.id == p) return info;
  }
  throw Error(ErrorKind::Runtime,
              "policy " + std::to_string(static_cast<int>(p)) + " has no row in the policy table");
}

std::string_view policyName(Policy p) {
  return policyInfo(p).name;
}

std::optional<Policy> policyFromName(std::string_view name) {
  for (const PolicyInfo& info : kPolicies) {
    if (info.name == name) return info.id;
  }
  return std::nullopt;
}

std::vector<std::string_view> policyNames(PolicyRows rows) {
  std::vector<std::string_view> names;
  for (const PolicyInfo& info : kPolicies) {
    if (inRows(info, rows)) names.push_back(info.name);
  }
  return names;
}

namespace {

std::string join(const std::vector<std::string_view>& names, std::string_view sep,
                 std::string_view last_sep) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? last_sep : sep;
    out += names[i];
  }
  return out;
}

}  // namespace

std::string joinPolicyNames(PolicyRows rows, std::string_view sep, std::string_view last_sep) {
  return join(policyNames(rows), sep, last_sep);
}

std::string policyChoices(PolicyRows rows, Policy default_policy) {
  const std::string_view first = policyName(default_policy);
  std::vector<std::string_view> others;
  for (std::string_view n : policyNames(rows)) {
    if (n != first) others.push_back(n);
  }
  return std::string(first) + " (default)" + (others.empty() ? "" : ", ") +
         join(others, ", ", " or ");
}

}  // namespace swapscope
