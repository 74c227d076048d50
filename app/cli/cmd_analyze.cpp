// SPDX-License-Identifier: MIT
/// @brief `swapscope analyze`: the static analysis of a network at minibatch k.
#include <algorithm>
#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "analysis/network_analysis.h"
#include "cli/commands.h"
#include "cli/sub_batch_options.h"
#include "common/batch_limit.h"
#include "common/bytes.h"
#include "common/error.h"
#include "common/format.h"
#include "graph/json_guard.h"
#include "graph/network_json.h"
#include "options/args.h"
#include "options/file_options.h"
#include "options/network_options.h"
#include "options/table.h"
#include "runtime/device.h"
#include "runtime/executor.h"
#include "runtime/host_memory.h"

namespace swapscope::cli {
namespace {

using json = nlohmann::ordered_json;

/// A name for the text report: control characters escaped (a NUL or a newline in a layer's
/// name would cut or break the table), never cut (names hold at most 256 bytes).
std::string shown(const std::string& name) {
  return echoText(name, 1024);
}

std::string stepLabel(const Network& net, const Gmap& gmap, int step) {
  if (step <= 0 || step > gmap.steps()) return "setup";
  const std::string dir = gmap.isBackwardStep(step) ? "backward" : "forward";
  return "step " + std::to_string(step) + ", " + dir + " of " +
         shown(net.layer(gmap.step_layer[step]).name);
}

/// A label padded to the text output's value column.
std::string padded(std::string label) {
  label.resize(std::max<std::size_t>(label.size() + 1, 20), ' ');
  return label;
}

/// A policy's key in the JSON output: its name with '_' for '-' ("vdnn_conv").
std::string jsonKey(Policy p) {
  std::string key(policyName(p));
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

std::string si(std::int64_t v) {
  return formatSi(static_cast<double>(v));
}

/// The analysis with every plan's GMAP padded as `shape` pads its buffers and its curve counted
/// from that: the sizes and peaks the pool holds.
NetworkAnalysis paddedAnalysis(const NetworkAnalysis& a, const rt::PoolShape& shape) {
  NetworkAnalysis padded = a;
  auto pad = [&](MemoryPlan& p) {
    p.gmap = padGmap(p.gmap, shape.padding);
    p.curve = computeMemoryCurve(p.gmap);
  };
  pad(padded.keep_all);
  pad(padded.swap_all);
  for (auto& [policy, plan] : padded.other_fixed)
    pad(plan);
  return padded;
}

struct Context {
  const Network& net;
  const NetworkAnalysis& a;  ///< the analysis: the network's own sizes
  /// The memory as the pool holds it: `a` itself, or with --device cuda `a` padded as the CUDA
  /// pool pads (the peaks, the curve and the GMAP's bytes).
  const NetworkAnalysis& pool;
  const MemoryPlan& chosen;  ///< pool's plan of the policy
  Policy policy;
  std::int64_t k;
  std::optional<std::int64_t> budget;
  bool with_gmap;
  std::int64_t sub_batches = 1;  ///< S: the memory, the GMAP and k_max are one sub-batch's
  /// --device cuda: the CUDA pool's shape, which k_max and the memory count; none on the CPU.
  std::optional<rt::PoolShape> shape;
  /// The samples the memory is counted at: one sub-batch's, k / S (k itself without
  /// sub-batches).
  std::int64_t passSamples() const { return k / sub_batches; }
  /// What the memory is counted at, in the text: "k = 64", or "16 samples" in sub-batches.
  std::string countedAt() const {
    return sub_batches > 1 ? std::to_string(passSamples()) + " samples"
                           : "k = " + std::to_string(k);
  }
  /// The largest sub-batch, at most `limit`, whose plan `p` (of `a`) fits `bytes`: its peak, or
  /// with a pool shape its padded peak and the packing of its buffers (rt::poolKMax: the
  /// executor's placement).
  std::int64_t subBatchKMax(const MemoryPlan& p, std::int64_t bytes, std::int64_t limit) const {
    if (shape) return rt::poolKMax(p.gmap, bytes, *shape, limit);
    return p.curve.kMax(bytes, limit);
  }
  /// The largest minibatch whose sub-batch fits `bytes` under `p` (a plan of `a`): S times the
  /// largest sub-batch, and no more than the minibatch limit of every verb
  /// (common/batch_limit.h), which `plan` and `run` would refuse above.
  std::int64_t kMax(const MemoryPlan& p, std::int64_t bytes) const {
    const std::int64_t one = subBatchKMax(p, bytes, kMaxBatch);
    return one > kMaxBatch / sub_batches ? kMaxBatch : one * sub_batches;
  }
  /// kMax, with " (the minibatch limit; more would fit)" where the limit is what bounds it.
  std::string kMaxText(const MemoryPlan& p, std::int64_t bytes) const {
    const std::int64_t most = kMax(p, bytes);
    const bool limited =
        most == kMaxBatch && subBatchKMax(p, bytes, kMaxBatch + 1) > kMaxBatch / sub_batches;
    return std::to_string(most) + (limited ? " (the minibatch limit; more would fit)" : "");
  }
};

json gmapJson(const Context& c) {
  const Gmap& g = c.chosen.gmap;
  json ops = json::array();
  for (const GmapOp& op : g.ops) {
    json o{{"step", op.step}, {"op", gmapOpKindName(op.kind)}};
    if (op.buffer >= 0) {
      const GmapBuffer& b = g.buffers[op.buffer];
      o["buffer"] = b.name;
      o["kind"] = bufferKindName(b.kind);
      o["bytes"] = b.size.at(c.passSamples());
    }
    ops.push_back(std::move(o));
  }
  return ops;
}

void printGmapText(const Context& c, std::ostream& out) {
  const Gmap& g = c.chosen.gmap;
  out << "\nGMAP under " << policyName(c.policy) << " at " << c.countedAt()
      << (c.sub_batches > 1 ? " (one of " + std::to_string(c.sub_batches) + " sub-batches)" : "")
      << " (" << g.ops.size() << " operations)\n";
  TextTable t;
  t.column("step", TextTable::Align::Right);
  t.column("op");
  t.column("buffer");
  t.column("kind");
  t.column("bytes", TextTable::Align::Right);
  for (const GmapOp& op : g.ops) {
    if (op.buffer < 0) {
      t.row({std::to_string(op.step), std::string(gmapOpKindName(op.kind)),
             stepLabel(c.net, g, op.step)});
      continue;
    }
    const GmapBuffer& b = g.buffers[op.buffer];
    t.row({std::to_string(op.step), std::string(gmapOpKindName(op.kind)), shown(b.name),
           std::string(bufferKindName(b.kind)), formatBytes(b.size.at(c.passSamples()))});
  }
  t.print(out);
}

json memoryJson(const Context& c) {
  auto peakJson = [&](const MemoryPlan& p) {
    const int step = p.curve.peakStep(c.passSamples());
    return json{{"bytes", p.curve.peak(c.passSamples())},
                {"step", step},
                {"layer", step > 0 ? c.net.layer(p.gmap.step_layer[step]).name : ""}};
  };
  json curve = json::array();
  for (int s = 1; s <= c.chosen.gmap.steps(); ++s) {
    curve.push_back({{"step", s},
                     {"layer", c.net.layer(c.chosen.gmap.step_layer[s]).name},
                     {"phase", c.chosen.gmap.isBackwardStep(s) ? "backward" : "forward"},
                     {"bytes", c.chosen.curve.resident[s].at(c.passSamples())}});
  }
  return json{{"sub_batch", c.passSamples()},
              {"persistent_bytes", c.pool.keep_all.curve.persistent.at(c.passSamples())},
              {"keep_all_peak", peakJson(c.pool.keep_all)},
              {"swap_all_peak", peakJson(c.pool.swap_all)},
              {"lower_bound_k1", c.a.lower_bound},
              {"lower_bound_recompute_k1", c.a.lower_bound_recompute},
              {"policy", policyName(c.policy)},
              {"policy_peak", peakJson(c.chosen)},
              {"curve", std::move(curve)}};
}

json kMaxJson(const Context& c) {
  if (!c.budget) return nullptr;
  const auto kMax = [&](const MemoryPlan& p) { return c.kMax(p, *c.budget); };
  json j{{"budget", *c.budget},
         {"sub_batches", c.sub_batches},
         {"keep_all", kMax(c.a.keep_all)},
         {"swap_all", kMax(c.a.swap_all)}};
  if (!isBaselinePolicy(c.policy)) j[jsonKey(c.policy)] = kMax(c.a.plan(c.policy));
  return j;
}

/// The host memory a run of the policy's plan at k holds with its pool in device memory
/// (rt::hostMemoryNeed without the caller's data): the swapped FMs' host copies, the staged
/// minibatch, a host copy of the weights.
json hostMemoryJson(const Context& c) {
  rt::HostMemoryOptions o;
  o.staged_batch = c.k;
  const rt::HostMemoryNeed need =
      rt::hostMemoryNeed(c.net, c.a.plan(c.policy).gmap, c.passSamples(), o);
  json parts = json::array();
  for (const rt::HostMemoryItem& i : need.items)
    parts.push_back({{"what", i.what}, {"bytes", i.bytes}});
  return json{{"batch", c.k}, {"bytes", need.total()}, {"parts", std::move(parts)}};
}

void printJson(const Context& c, std::ostream& out) {
  const std::int64_t k = c.k;
  json layers = json::array();
  for (int i = 0; i < c.net.size(); ++i) {
    const Layer& l = c.net.layer(i);
    const LayerCost& lc = c.a.costs[i];
    layers.push_back({{"name", l.name},
                      {"type", layerKindName(l.kind)},
                      {"inputs", l.inputs},
                      {"output", c.net.outputShape(i).dims},
                      {"params", lc.params},
                      {"forward_macs", lc.fwd_macs * k},
                      {"forward_flops", lc.fwd_flops * k},
                      {"backward_data_flops", lc.bwd_data_flops * k},
                      {"backward_weight_flops", lc.bwd_weight_flops * k},
                      {"fm_bytes", lc.fm.at(c.passSamples())},
                      {"swapped", static_cast<bool>(c.chosen.gmap.swapped[i])}});
    if (policyInfo(c.policy).uses(kFmRecompute))
      layers.back()["recomputed"] = static_cast<bool>(c.chosen.gmap.recomputed[i]);
  }
  json doc{{"network",
            {{"name", c.net.name()},
             {"structure_hash", c.net.structureHash()},
             {"input", c.net.sampleShape().dims},
             {"classes", c.net.classes()},
             {"layers", c.net.size()}}},
           {"batch", k},
           {"sub_batches", c.sub_batches},
           {"params", c.a.totals.params},
           {"forward_macs", c.a.totals.fwd_macs * k},
           {"forward_flops", c.a.totals.fwd_flops * k},
           {"training_flops", c.a.totals.trainFlops() * k},
           {"layers", std::move(layers)},
           {"memory", memoryJson(c)},
           {"host_memory", hostMemoryJson(c)},
           {"k_max", kMaxJson(c)}};
  if (c.shape) {
    doc["pool"] = {{"device", "cuda"},
                   {"alignment", c.shape->alignment},
                   {"buffer_padding", c.shape->padding.buffer},
                   {"workspace_padding", c.shape->padding.workspace}};
  }
  if (c.with_gmap) doc["gmap"] = gmapJson(c);
  out << doc.dump(2, ' ', false, kReplaceInvalidUtf8) << '\n';
}

void printText(const Context& c, std::ostream& out) {
  const std::int64_t k = c.k;
  const Network& net = c.net;
  out << "network  " << shown(net.name()) << ": " << net.size() << " layers, input "
      << net.sampleShape().toString() << ", " << net.classes() << " classes (structure "
      << net.structureHash() << ")\n"
      << "batch    k = " << k
      << (c.sub_batches > 1 ? " in " + std::to_string(c.sub_batches) + " sub-batches of " +
                                  std::to_string(c.passSamples())
                            : std::string())
      << ", policy " << policyName(c.policy) << "\n\n";

  TextTable t;
  t.column("#", TextTable::Align::Right);
  t.column("layer");
  t.column("type");
  t.column("output");
  t.column("params", TextTable::Align::Right);
  t.column("fwd FLOPs", TextTable::Align::Right);
  t.column("bwd data", TextTable::Align::Right);
  t.column("bwd weight", TextTable::Align::Right);
  t.column("FM bytes", TextTable::Align::Right);
  t.column("swap");
  for (int i = 0; i < net.size(); ++i) {
    const LayerCost& lc = c.a.costs[i];
    t.row({std::to_string(i), shown(net.layer(i).name),
           std::string(layerKindName(net.layer(i).kind)), net.outputShape(i).toString(),
           lc.params ? formatGrouped(lc.params) : "", si(lc.fwd_flops * k),
           si(lc.bwd_data_flops * k), si(lc.bwd_weight_flops * k),
           formatBytes(lc.fm.at(c.passSamples())),
           c.chosen.gmap.swapped[i] ? "swap" : (c.chosen.gmap.recomputed[i] ? "recompute" : "")});
  }
  t.print(out);

  const CostTotals& tot = c.a.totals;
  out << "\ntotals at k = " << k << " (FLOPs = 2 x MACs for conv and linear, plus bias adds)\n"
      << "  parameters          " << formatGrouped(tot.params) << " ("
      << formatBytes(tot.params * kFloatBytes) << " fp32)\n"
      << "  forward MACs        " << si(tot.fwd_macs * k) << " (" << si(tot.fwd_macs)
      << " per sample)\n"
      << "  forward FLOPs       " << si(tot.fwd_flops * k) << '\n'
      << "  training FLOPs      " << si(tot.trainFlops() * k) << " (forward + backward)\n";

  const std::int64_t passSamples = c.passSamples();
  auto peakLine = [&](const std::string& label, const MemoryPlan& p) {
    out << "  " << label << formatBytes(p.curve.peak(passSamples)) << "  at "
        << stepLabel(net, p.gmap, p.curve.peakStep(passSamples)) << '\n';
  };
  out << "\nmemory at " << c.countedAt()
      << " (one pool: parameters, gradients, momentum, statistics,\n"
      << "minibatch, labels, feature maps and their gradients; zero workspace)\n";
  if (c.shape) {
    out << "  as the CUDA pool holds it: every buffer padded to " << c.shape->padding.buffer
        << " bytes, workspaces to " << c.shape->padding.workspace << "; its blocks aligned to "
        << c.shape->alignment << "\n";
  }
  if (c.sub_batches > 1) {
    out << "  one of " << c.sub_batches
        << " sub-batches: the parameter gradients stay allocated across them\n";
  }
  out << "  persistent          " << formatBytes(c.pool.keep_all.curve.persistent.at(passSamples))
      << '\n';
  peakLine("keep-all peak       ", c.pool.keep_all);
  peakLine("swap-all peak       ", c.pool.swap_all);
  if (!isBaselinePolicy(c.policy))
    peakLine(padded(std::string(policyName(c.policy)) + " peak"), c.chosen);
  out << "  lower bound (k=1)   " << formatBytes(c.a.lower_bound) << "  (moDNN eq. 2)\n";
  out << "  recompute LB (k=1)  " << formatBytes(c.a.lower_bound_recompute)
      << "  (eq. 2 with recompute-light's FMs re-made in backward)\n";

  if (c.budget) {
    const auto kMax = [&](const MemoryPlan& p) { return c.kMaxText(p, *c.budget); };
    out << "\nk_max for a budget of " << formatBytes(*c.budget)
        << (c.sub_batches > 1 ? " in " + std::to_string(c.sub_batches) +
                                    " sub-batches (S times the largest sub-batch)"
                              : std::string())
        << (c.shape ? " as the CUDA executor places it (padded peak, buffers packed)"
                    : std::string())
        << '\n'
        << "  keep-all            " << kMax(c.a.keep_all) << '\n'
        << "  swap-all            " << kMax(c.a.swap_all) << '\n';
    if (!isBaselinePolicy(c.policy)) {
      out << "  " << padded(std::string(policyName(c.policy))) << kMax(c.a.plan(c.policy)) << '\n';
    }
    if (c.subBatchKMax(c.a.swap_all, *c.budget, kMaxBatch) == 0) {
      const std::int64_t need = c.pool.swap_all.curve.peak(1);
      out << "  untrainable: even swap-all at k = 1 needs " << formatBytes(need)
          << (c.shape && need <= *c.budget ? ", and its buffers do not pack" : "") << '\n';
    }
  }
  if (c.with_gmap) printGmapText(c, out);
}

}  // namespace

int cmdAnalyze(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  ArgParser args(
      "swapscope analyze --model NAME | --net FILE | --onnx FILE --batch K [--budget SIZE]\n"
      "                  [--input CxHxW] [--classes N] [--policy " +
          joinPolicyNames(PolicyRows::Fixed, "|", "|") +
          "] [--json]\n"
          "                  [--sub-batches S | --sub-batch-size B] [--dump-net FILE|- [--force]]\n"
          "                  [--gmap]\n"
          "                  [--device cpu|cuda]",
      "Static analysis of a network at minibatch K: per-layer output shapes, parameters,\n"
      "FLOPs and feature-map bytes; totals; the memory peak under keep-all and swap-all; the\n"
      "memory lower bound; and, with --budget, the largest k that fits. Sizes accept 123456,\n"
      "512MiB, 6GiB, 1.5GB. With --device cuda the peaks, the curve, the GMAP's bytes and k_max\n"
      "are the CUDA executor's: buffers padded to 16 bytes, workspaces to 256, and k_max the\n"
      "largest k whose buffers also pack into the 256-byte-aligned pool (without the kernels'\n"
      "workspaces, which depend on --conv-algo). No GPU is needed.");
  addNetworkOptions(args);
  args.option("--batch", "K", "minibatch size (required)");
  args.option("--budget", "SIZE", "GPU memory budget for k_max");
  args.option("--policy", "P", "swap policy for the table and curve (default keep-all)");
  addSubBatchOptions(args);
  args.flag("--json", "print a JSON document instead of tables");
  args.option("--dump-net", "FILE",
              "also write the network as network JSON to FILE; - prints it to standard output, "
              "and the tables to standard error");
  addForceFlag(args, "the --dump-net file");
  args.flag("--gmap", "also print the GMAP (every allocate/release/offload/prefetch) for --policy");
  args.option("--device", "D",
              "cpu (default): the analyzer's count; cuda: the memory and k_max as the CUDA "
              "executor counts them");
  if (!args.parse(argv)) {
    out << args.help();
    return kExitOk;
  }
  const files::OutputRules rules = outputRules(args, {"--net", "--onnx"});
  const bool dumpToStdout =
      checkOutputOrStandardOutput(args, "--dump-net", "the network file --dump-net", rules, err);
  if (dumpToStdout && args.has("--json")) {
    throwBadInput(
        "give --dump-net - or --json, not both: each prints a JSON document to standard output");
  }
  const Network net = loadNetwork(args);
  warnForceWithoutOutput(args, "--dump-net", err);
  const std::int64_t k = batchOption(args);
  const std::int64_t subBatches = subBatchOption(args, k);
  std::optional<std::int64_t> budget;
  if (auto b = args.value("--budget")) budget = parseByteSize(*b, "--budget");
  const Policy policy = policyOption(args);
  std::optional<rt::PoolShape> shape;
  if (auto d = args.value("--device"); d && *d != "cpu") {
    if (*d != "cuda") throwBadInput("--device " + *d + ": expected cpu or cuda");
    shape = rt::kCudaPoolShape;
  }
  // With --dump-net -, standard output holds the network JSON alone (what --dump-net FILE
  // writes): the tables go to standard error.
  if (dumpToStdout) {
    out << networkToText(net);
  } else if (auto file = args.value("--dump-net")) {
    writeNetworkFile(net, *file, rules);
  }

  const NetworkAnalysis a = analyzeNetwork(net);
  // Everything printed is a per-sample count times k: refuse a k that overflows any of them.
  std::int64_t perSample = a.totals.trainFlops();
  for (const LinearBytes& r : a.keep_all.curve.resident) {
    perSample = std::max(perSample, r.per_sample);
  }
  if (perSample > (std::int64_t{1} << 62) / k) {
    throwBadInput("--batch " + std::to_string(k) + ": this network's " +
                  formatSi(static_cast<double>(perSample)) +
                  " FLOPs or bytes per sample times k do not fit in 64-bit counts");
  }
  const std::optional<NetworkAnalysis> paddedPool =
      shape ? std::optional<NetworkAnalysis>(paddedAnalysis(a, *shape)) : std::nullopt;
  const NetworkAnalysis& pool = paddedPool ? *paddedPool : a;
  const Context c{.net = net,
                  .a = a,
                  .pool = pool,
                  .chosen = pool.plan(policy),
                  .policy = policy,
                  .k = k,
                  .budget = budget,
                  .with_gmap = args.has("--gmap"),
                  .sub_batches = subBatches,
                  .shape = shape};
  if (args.has("--json")) {
    printJson(c, out);
  } else {
    printText(c, dumpToStdout ? err : out);
  }
  return kExitOk;
}

}  // namespace swapscope::cli
