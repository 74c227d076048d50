// SPDX-License-Identifier: MIT
/// @brief A plan bound to a network and a device: the network it names, its swap and recompute
/// sets, and whether it describes the device at hand.
#include "collectors/profiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <thread>

#include "analysis/gmap.h"
#include "analysis/memory.h"
#include "analysis/network_analysis.h"
#include "analysis/policy.h"
#include "analysis/swap_policy.h"
#include "collectors/timeline_rows.h"
#include "common/batch_limit.h"
#include "common/bytes.h"
#include "common/error.h"
#include "common/format.h"
#include "common/stats.h"
#include "graph/network_json.h"
#include "perfmodel/model.h"
#include "runtime/dataset.h"
#include "runtime/host_memory.h"
#include "runtime/trainer.h"
#include "store/sqlite.h"

namespace swapscope::collect {

std::string planDeviceMismatch(const store::PlanFile& plan, const rt::Device& device) {
  return perf::planDeviceMismatch(plan.device_name, plan.backend, device.deviceName(),
                                  device.backendName());
}

Network planNetwork(const store::PlanFile& plan, const std::string& planName,
                    const std::string& otherwise, const std::string& relativeTo) {
  if (plan.source_db.empty()) {
    throwBadInput("plan '" + planName +
                  "' names no source_db to take the network from: " + otherwise);
  }
  // A relative source_db is relative to the plan file's folder, wherever `run` is started.
  const std::string db = store::sourceDbPath(plan, planName);
  try {
    store::RunReader reader(db);
    const store::NetworkInfo network = reader.network();
    store::requireNetwork(db, network, "run");
    return networkFromText(network.json, db + " (network)");
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::BadInput) throw;
    const std::string relative =
        std::filesystem::path(plan.source_db).is_relative()
            ? " (its source_db '" + plan.source_db + "' is taken from " + relativeTo + ")"
            : "";
    throwBadInput(planName + ": source_db: " + e.what() + relative +
                  " (the network is taken from there; " + otherwise + " instead)");
  }
}

namespace {

/// A fixed policy's sets are the policy's for the network: a plan with others was edited, and
/// would run one schedule reported as another's (swap-all with nothing swapped ran keep-all).
void requireFixedPolicysSets(const Network& net, const std::vector<LayerCost>& costs,
                             const store::PlanFile& plan, const std::string& planName,
                             const SwapSet& swapped, const RecomputeSet& recomputed) {
  const std::optional<Policy> policy = policyFromName(plan.policy);
  if (!policy || !policyInfo(*policy).fixed()) return;
  const FixedSets want = policyInfo(*policy).sets(net, costs);
  const auto count = [](const std::vector<bool>& v) {
    return static_cast<std::size_t>(std::count(v.begin(), v.end(), true));
  };
  const auto same = [&](const std::vector<bool>& a, const std::vector<bool>& b) {
    for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
      if ((i < a.size() && a[i]) != (i < b.size() && b[i])) return false;
    }
    return true;
  };
  const auto differ = [&](const char* field, const char* verb, std::size_t got, std::size_t n) {
    throwBadInput("plan '" + planName + "': field '" + field + "' lists " + std::to_string(got) +
                  " feature maps, but policy '" + plan.policy + "' " + verb + " " +
                  (got == n ? "others, " : "") + std::to_string(n) + " of " + net.name() +
                  "'s: the plan was edited; plan it again");
  };
  if (!same(swapped, want.swapped))
    differ("swap_set", "swaps", count(swapped), count(want.swapped));
  if (!same(recomputed, want.recomputed))
    differ("recompute", "recomputes", count(recomputed), count(want.recomputed));
}

}  // namespace

SwapSet planSwapSet(const Network& net, const store::PlanFile& plan, const std::string& planName,
                    const std::string& otherwise) {
  if (net.structureHash() != plan.structure_hash) {
    // The same name with another structure: the same zoo model or file built another way.
    // Another name: how to give the plan's network, where the caller says.
    const std::string hint =
        plan.network_name == net.name()
            ? "; the name is the same, so the network was built otherwise than for the plan ("
              "another --input or --classes, or another file): give the options the plan was "
              "made with"
        : otherwise.empty() ? ""
                            : ": " + otherwise;
    throwBadInput("plan '" + planName + "' was made for network " + plan.network_name +
                  " (structure " + plan.structure_hash + "), not " + net.name() + " (structure " +
                  net.structureHash() + ")" + hint);
  }
  std::vector<std::string> names;
  for (const store::PlanSwap& w : plan.swap_set)
    names.push_back(w.fm);
  const auto costs = computeLayerCosts(net);
  SwapSet swapped = swapSetFromNames(net, costs, names, planName + ": swap_set", ".fm");
  const RecomputeSet recomputed = planRecomputeSet(net, plan, planName);
  requireFixedPolicysSets(net, costs, plan, planName, swapped, recomputed);
  Gmap g;
  try {
    g = buildGmap(net, costs, swapped, recomputed);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::BadInput) throw;
    throwBadInput(planName + ": recompute: " + e.what());
  }
  // A k whose bytes no 64-bit count holds is the plan's error: name the file and the field.
  try {
    (void)computeMemoryCurve(g).peak(plan.k);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::BadInput) throw;
    throwBadInput(planName + ": k: " + e.what());
  }
  return swapped;
}

RecomputeSet planRecomputeSet(const Network& net, const store::PlanFile& plan,
                              const std::string& planName) {
  std::vector<std::string> names;
  for (const store::PlanRecompute& r : plan.recompute)
    names.push_back(r.fm);
  return recomputeSetFromNames(net, computeLayerCosts(net), names, planName + ": recompute", ".fm");
}

}  // namespace swapscope::collect
