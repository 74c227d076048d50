// SPDX-License-Identifier: MIT
/// @brief The one table of policies. Each row holds a policy's name (the CLI's, the plan file's
/// and the app's spelling), a one-line description, the feature-map attributes it may use, and
/// its behaviour: a fixed policy's function, which makes its swap and recompute sets from the
/// network alone, or the mark that the planner searches its sets (the planner's own table of
/// searches, perfmodel/planner.cpp, holds a row for each such policy). Parsing, help texts, error
/// messages, the plan-file check, the analyzer and the app's choices all read this table; a fixed
/// policy is an enum value, its row and its function (docs/architecture.md, "Adding a policy").
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace swapscope {

class Network;
struct LayerCost;

enum class Policy {
  KeepAll,         ///< nothing is swapped: the framework baseline
  SwapAll,         ///< every swappable FM is swapped: the layer-wise ("naive swap") peak
  VdnnConv,        ///< vDNN's conv policy: swap the FMs that convolutions read
  AccUdnn,         ///< AccUDNN: swap-all, then greedy pins by stall removed per byte
  RecomputeLight,  ///< SuperNeurons' static rule: recompute light layers' FMs, swap the rest
  Ito,             ///< Ito et al.'s two stages: keep or swap, then swap or recompute by overhead
};

/// Fixed: the sets follow from the network alone (the row's function makes them). Searched: the
/// planner chooses them from the budget and the performance model.
enum class PolicyChoice { Fixed, Searched };

/// What a policy may do with a feature map that some backward step reads.
enum FmAttribute : unsigned {
  kFmKeep = 1u << 0,       ///< stays on the device from its forward step to its backward use
  kFmSwap = 1u << 1,       ///< offloaded to the host after forward, prefetched before backward
  kFmRecompute = 1u << 2,  ///< released after forward, re-made from an ancestor before backward
};

/// A fixed policy's sets, one flag per layer id: the FMs it swaps and those it recomputes (all
/// false for a policy without recompute).
struct FixedSets {
  std::vector<bool> swapped;
  std::vector<bool> recomputed;
};

/// What a fixed policy does: its sets for a network and its layer costs (analysis/layer_cost.h).
using FixedSetsFn = FixedSets (*)(const Network& net, const std::vector<LayerCost>& costs);

struct PolicyInfo {
  Policy id;
  std::string_view name;
  std::string_view description;
  PolicyChoice choice;
  unsigned attributes;  ///< FmAttribute flags
  /// A fixed policy's sets; nullptr for a searched one (the planner chooses its sets).
  FixedSetsFn sets = nullptr;
  constexpr bool fixed() const { return choice == PolicyChoice::Fixed; }
  constexpr bool uses(FmAttribute a) const { return (attributes & a) != 0; }
};

/// Every policy, in the order the CLI lists them.
std::span<const PolicyInfo> policyTable();
const PolicyInfo& policyInfo(Policy p);
std::string_view policyName(Policy p);
std::optional<Policy> policyFromName(std::string_view name);

/// Which rows a listing covers: every policy, or the fixed ones (those that `train` and
/// `analyze` run without a performance model).
enum class PolicyRows { All, Fixed };
std::vector<std::string_view> policyNames(PolicyRows rows = PolicyRows::All);
/// The names joined with `sep`, the last two with `last_sep`: ("|", "|") gives
/// "keep-all|swap-all|...", (", ", " or ") gives "keep-all, swap-all or ...".
std::string joinPolicyNames(PolicyRows rows, std::string_view sep, std::string_view last_sep);
/// "D (default), A, B or C": the default first, then the others in table order.
std::string policyChoices(PolicyRows rows, Policy default_policy);

}  // namespace swapscope
