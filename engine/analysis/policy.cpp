// SPDX-License-Identifier: MIT
#include "analysis/policy.h"

#include <array>

#include "common/error.h"

namespace swapscope {

namespace {

constexpr std::array kPolicies{
    PolicyInfo{Policy::KeepAll, "keep-all", "keep every feature map on the device (no swapping)",
               PolicyChoice::Fixed, kFmKeep},
    PolicyInfo{Policy::SwapAll, "swap-all",
               "swap every feature map a backward step reads (the smallest swapping peak)",
               PolicyChoice::Fixed, kFmSwap},
    PolicyInfo{Policy::VdnnConv, "vdnn-conv",
               "vDNN: swap the feature maps that convolutions read, keep the rest",
               PolicyChoice::Fixed, kFmKeep | kFmSwap},
    PolicyInfo{Policy::AccUdnn, "accudnn",
               "AccUDNN: from swap-all, keep the feature maps whose swaps stall the most per byte",
               PolicyChoice::Searched, kFmKeep | kFmSwap},
    PolicyInfo{Policy::RecomputeLight, "recompute-light",
               "SuperNeurons' rule: recompute the feature maps of light layers (ReLU, batch norm, "
               "pooling, add, concat, flatten), swap the rest",
               PolicyChoice::Fixed, kFmSwap | kFmRecompute},
    PolicyInfo{Policy::Ito, "ito",
               "Ito et al.: keep or swap as accudnn does, then recompute the swapped feature maps "
               "whose re-make costs less than their copies where the simulation is no slower",
               PolicyChoice::Searched, kFmKeep | kFmSwap | kFmRecompute},
};

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
