// SPDX-License-Identifier: MIT
/// @brief RunReader: opens a run database read-only, checks it and loads it table by table.
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>

#include "analysis/layer_cost.h"
#include "common/error.h"
#include "graph/json_guard.h"
#include "graph/network_json.h"
#include "store/file_checks.h"
#include "store/plan_file.h"
#include "store/process_identity.h"
#include "store/run_db.h"
#include "store/schema.h"
#include "store/sqlite.h"
#include "store/table_rows.h"

namespace swapscope::store {
using json = nlohmann::json;

namespace {

RunStatus statusFromName(const std::string& path, const std::string& s) {
  for (RunStatus v :
       {RunStatus::Running, RunStatus::Complete, RunStatus::Incomplete, RunStatus::Failed}) {
    if (s == runStatusName(v)) return v;
  }
  damaged(path,
          "meta 'status' is " + quoteBounded(s) + ", not running, complete, incomplete or failed");
}

/// The meta keys under which a run records how its pool aligns and pads buffers
/// (collectors/run_meta.cpp). Where present, each is a power of two of bytes up to 1 GiB, as
/// every pool aligns and pads; the reader, which every verb and the app read through, refuses
/// anything else, so `info` and `trace` say what `plan` and `compare` say.
constexpr const char* kPoolPowerOfTwoKeys[] = {"pool_alignment", "pool_padding",
                                               "workspace_padding"};
constexpr std::int64_t kMaxPoolPowerOfTwo = std::int64_t{1} << 30;

void checkPoolPowersOfTwo(const std::string& path, const std::map<std::string, std::string>& kv) {
  for (const char* key : kPoolPowerOfTwoKeys) {
    const auto it = kv.find(key);
    if (it == kv.end()) continue;
    const std::string& v = it->second;
    std::int64_t a = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), a);
    if (ec != std::errc() || end != v.data() + v.size() || a < 1 || a > kMaxPoolPowerOfTwo ||
        (a & (a - 1)) != 0) {
      damaged(path, std::string("meta '") + key + "' is " + quoteBounded(v) +
                        ", not a power of two of bytes up to 1 GiB");
    }
  }
}

/// What the loaders of later tables check their rows against.
/// "k 8 iteration 2", as messages name an iteration.
std::string iterationName(std::int64_t k, int iteration) {
  return "k " + std::to_string(k) + " iteration " + std::to_string(iteration);
}

struct LoadState {
  Database& db;
  RunData& d;
  bool v2 = false;                      ///< the columns of kVersion2Columns
  std::vector<LayerRow> networkLayers;  ///< the rows the stored network gives
  std::int64_t layerCount = 0;
  /// The SGD update of every layer is one step past the last compute step.
  std::int64_t updateStep = 0;
  std::set<std::pair<std::int64_t, int>> recorded;                  // (k, iteration)
  std::map<std::pair<std::int64_t, int>, std::int64_t> durationOf;  // (k, iteration) -> ns
  std::pair<std::int64_t, int> lastFound{0, -1};

  /// Rows of an iteration are written in one transaction with its iterations row.
  /// Rows come ordered by (k, iteration): one lookup per iteration, not per row.
  void requireIteration(const TableRows& rows, std::int64_t k, int iteration) {
    if (std::pair{k, iteration} == lastFound) return;
    if (recorded.count({k, iteration})) {
      lastFound = {k, iteration};
    } else {
      rows.badRow(iterationName(k, iteration) + " has no row in table 'iterations'");
    }
  }
};

/// Table layers: ids 0, 1, 2, ... naming the stored network's layers in order.
void loadLayers(LoadState& s) {
  RunData& d = s.d;
  const auto& networkLayers = s.networkLayers;
  TableRows rows(s.db, "layers",
                 {"id", "name", "kind", "inputs", "out_shape", "params", "fwd_flops",
                  "bwd_data_flops", "bwd_weight_flops", "fm_fixed", "fm_per_sample"},
                 "id");
  while (rows.next()) {
    LayerRow r;
    const auto expected = static_cast<std::int64_t>(d.layers.size());
    r.id = rows.int32(0);
    if (r.id != expected) {
      rows.bad(0, "is " + std::to_string(r.id) + "; layer ids run 0, 1, 2, ... without gaps, so " +
                      std::to_string(expected) + " comes first");
    }
    r.name = rows.text(1);
    r.kind = rows.text(2);
    r.inputs = parseArray<int>(rows, 3);
    for (const int in : r.inputs) {
      if (in < 0 || in >= r.id) {
        rows.bad(3, "names layer " + std::to_string(in) + ", which is not an earlier layer");
      }
    }
    r.out_shape = parseArray<std::int64_t>(rows, 4);
    for (const std::int64_t dim : r.out_shape) {
      if (dim <= 0) rows.bad(4, "has a dimension of " + std::to_string(dim));
    }
    r.params = rows.nonNegative(5);
    r.fwd_flops = rows.nonNegative(6);
    r.bwd_data_flops = rows.nonNegative(7);
    r.bwd_weight_flops = rows.nonNegative(8);
    r.fm = {rows.nonNegative(9), rows.nonNegative(10)};
    if (!networkLayers.empty()) {
      if (d.layers.size() >= networkLayers.size()) {
        rows.badRow("the stored network has only " + std::to_string(networkLayers.size()) +
                    " layers");
      }
      const LayerRow& want = networkLayers[d.layers.size()];
      if (r.name != want.name) {
        rows.bad(1, "is " + quoteBounded(r.name) + ", but layer " + std::to_string(r.id) +
                        " of the stored network is " + quoteBounded(want.name));
      }
      // The other columns are the stored network's too: an edited one would change the fits
      // (FLOPs are the curves' x, FM bytes the copies') while the hash still matched.
      const auto differs = [&](int column, const auto& got, const auto& given,
                               const std::string& shown) {
        if (got != given) {
          rows.bad(column, "is " + shown + ", but layer " + quoteBounded(want.name) +
                               " of the stored network gives another value");
        }
      };
      differs(2, r.kind, want.kind, quoteBounded(r.kind));
      differs(3, r.inputs, want.inputs, "not the stored network's inputs");
      differs(4, r.out_shape, want.out_shape, "not the stored network's shape");
      differs(5, r.params, want.params, std::to_string(r.params));
      differs(6, r.fwd_flops, want.fwd_flops, std::to_string(r.fwd_flops));
      differs(7, r.bwd_data_flops, want.bwd_data_flops, std::to_string(r.bwd_data_flops));
      differs(8, r.bwd_weight_flops, want.bwd_weight_flops, std::to_string(r.bwd_weight_flops));
      differs(9, r.fm.fixed, want.fm.fixed, std::to_string(r.fm.fixed));
      differs(10, r.fm.per_sample, want.fm.per_sample, std::to_string(r.fm.per_sample));
    }
    d.layers.push_back(std::move(r));
  }
  if (d.layers.size() != s.networkLayers.size()) {
    damaged(d.path, "table 'layers' has " + std::to_string(d.layers.size()) +
                        " rows, but the stored network (table 'network') has " +
                        std::to_string(s.networkLayers.size()) + " layers");
  }
}

/// Table steps: 1, 2, 3, ... each of a layer and a direction.
void loadSteps(LoadState& s) {
  RunData& d = s.d;
  const std::int64_t layerCount = s.layerCount;
  TableRows rows(s.db, "steps", {"step", "layer", "direction", "flops_per_sample"}, "step");
  while (rows.next()) {
    StepRow r;
    const auto expected = static_cast<std::int64_t>(d.steps.size()) + 1;
    r.step = rows.int32(0);
    if (r.step != expected) {
      rows.bad(0, "is " + std::to_string(r.step) + "; steps run 1, 2, 3, ... without gaps, so " +
                      std::to_string(expected) + " comes first");
    }
    r.layer = rows.int32(1, 0, layerCount - 1);
    r.direction = directionFromName(rows, 2, false);
    r.flops_per_sample = rows.nonNegative(3);
    // A step's FLOPs per sample are its layer's in its direction (the samples' FLOPs are k
    // times them).
    const LayerRow& layer = d.layers[static_cast<std::size_t>(r.layer)];
    const std::int64_t want = r.direction == Direction::Forward
                                  ? layer.fwd_flops
                                  : layer.bwd_data_flops + layer.bwd_weight_flops;
    if (r.flops_per_sample != want) {
      rows.bad(3, "is " + std::to_string(r.flops_per_sample) + ", but layer " +
                      quoteBounded(layer.name) + " " + std::string(directionName(r.direction)) +
                      " takes " + std::to_string(want) + " per sample");
    }
    d.steps.push_back(r);
  }
}

/// Table tensors: ids 0, 1, 2, ... of a layer or none.
void loadTensors(LoadState& s) {
  RunData& d = s.d;
  const std::int64_t layerCount = s.layerCount;
  TableRows rows(s.db, "tensors", {"id", "name", "kind", "layer", "size_fixed", "size_per_sample"},
                 "id");
  while (rows.next()) {
    TensorRow r;
    const auto expected = static_cast<std::int64_t>(d.tensors.size());
    r.id = rows.int32(0);
    if (r.id != expected) {
      rows.bad(0, "is " + std::to_string(r.id) + "; tensor ids run 0, 1, 2, ... without gaps, so " +
                      std::to_string(expected) + " comes first");
    }
    r.name = rows.text(1);
    r.kind = rows.text(2);
    r.layer = rows.int32(3, -1, layerCount - 1);  // -1: no layer (the labels)
    r.size = {rows.nonNegative(4), rows.nonNegative(5)};
    d.tensors.push_back(std::move(r));
  }
}

/// Table batches: one row per minibatch recorded.
void loadBatches(LoadState& s) {
  RunData& d = s.d;
  const bool v2 = s.v2;
  std::vector<const char*> columns{"k",
                                   "policy",
                                   "warmup",
                                   "predicted_peak",
                                   "measured_peak",
                                   "reuse_delay",
                                   "hoisted_prefetches"};
  if (v2) columns.push_back("dispatch_ns");
  TableRows rows(s.db, "batches", std::move(columns), "k");
  while (rows.next()) {
    d.batches.push_back({.k = rows.integer(0, 1, kMaxRecordedK),
                         .policy = rows.text(1),
                         .warmup = rows.int32(2),
                         .predicted_peak = rows.nonNegative(3),
                         .measured_peak = rows.nonNegative(4),
                         .reuse_delay = rows.int32(5),
                         .hoisted_prefetches = rows.int32(6),
                         .dispatch_ns = v2 ? rows.integer(7, -1) : -1});
  }
}

/// Table iterations: each (k, iteration) once, with its duration for the rows inside it.
void loadIterations(LoadState& s) {
  RunData& d = s.d;
  TableRows rows(s.db, "iterations",
                 {"k", "iteration", "start_ns", "duration_ns", "loss", "stall_ns", "offload_bytes",
                  "prefetch_bytes", "load_bytes"},
                 "k, iteration");
  while (rows.next()) {
    const IterationRow r{.k = rows.integer(0, 1, kMaxRecordedK),
                         .iteration = rows.int32(1),
                         .start_ns = rows.nonNegative(2),
                         .duration_ns = rows.integer(3, 1),
                         .loss = rows.real(4),
                         .stall_ns = rows.nonNegative(5),
                         .offload_bytes = rows.nonNegative(6),
                         .prefetch_bytes = rows.nonNegative(7),
                         .load_bytes = rows.nonNegative(8)};
    if (!s.recorded.insert({r.k, r.iteration}).second) {
      rows.badRow(iterationName(r.k, r.iteration) + " is recorded twice");
    }
    s.durationOf[{r.k, r.iteration}] = r.duration_ns;
    d.iterations.push_back(r);
  }
}

/// Table samples: each a step of a recorded iteration, at most as long as it.
void loadSamples(LoadState& s) {
  RunData& d = s.d;
  const bool v2 = s.v2;
  const std::int64_t layerCount = s.layerCount;
  const std::int64_t updateStep = s.updateStep;
  std::vector<const char*> columns{"k",     "iteration", "step",    "layer",   "direction",
                                   "flops", "start_ns",  "time_ns", "stall_ns"};
  if (v2) {
    columns.push_back("ready_ns");
    columns.push_back("copy_overlap_ns");
  }
  TableRows rows(s.db, "samples", std::move(columns), "k, iteration, start_ns, step, layer");
  while (rows.next()) {
    SampleRow r;
    r.k = rows.integer(0, 1, kMaxRecordedK);
    r.iteration = rows.int32(1);
    s.requireIteration(rows, r.k, r.iteration);
    r.step = rows.int32(2);
    r.layer = rows.int32(3);
    if (r.layer >= layerCount) {
      rows.bad(3, "is " + std::to_string(r.layer) + ", but table 'layers' has " +
                      (layerCount ? "layers 0.." + std::to_string(layerCount - 1) : "no layers"));
    }
    r.direction = directionFromName(rows, 4, true);
    if (r.direction == Direction::Update) {
      if (r.step != updateStep) {
        rows.bad(2, "is " + std::to_string(r.step) + ", but the update step is " +
                        std::to_string(updateStep));
      }
    } else {
      if (r.step < 1 || r.step >= updateStep) {
        rows.bad(2,
                 "is " + std::to_string(r.step) + ", but table 'steps' has " +
                     (updateStep > 1 ? "steps 1.." + std::to_string(updateStep - 1) : "no steps"));
      }
      const StepRow& step = d.steps[static_cast<std::size_t>(r.step - 1)];
      if (step.layer != r.layer || step.direction != r.direction) {
        rows.badRow("layer " + std::to_string(r.layer) + " " +
                    std::string(directionName(r.direction)) + " does not match step " +
                    std::to_string(r.step) + " (layer " + std::to_string(step.layer) + " " +
                    std::string(directionName(step.direction)) + ")");
      }
    }
    r.flops = rows.nonNegative(5);
    r.start_ns = rows.nonNegative(6);
    r.time_ns = rows.nonNegative(7);
    // A step runs inside its iteration: a longer one is damage, and it would drive the fits.
    if (const std::int64_t iter = s.durationOf.at({r.k, r.iteration}); r.time_ns > iter) {
      rows.bad(7, "is " + std::to_string(r.time_ns) + ", longer than its iteration (" +
                      std::to_string(iter) + " ns)");
    }
    r.stall_ns = rows.nonNegative(8);
    if (v2) {
      r.ready_ns = rows.integer(9, -1);  // -1: not recorded
      r.copy_overlap_ns = rows.integer(10, -1, r.time_ns);
    }
    d.samples.push_back(r);
  }
}

/// Table recomputes (schema 3): each inside a backward step of a recorded iteration.
void loadRecomputes(LoadState& s) {
  RunData& d = s.d;
  const std::int64_t layerCount = s.layerCount;
  const std::int64_t updateStep = s.updateStep;
  TableRows rows(s.db, "recomputes",
                 {"k", "iteration", "step", "layer", "flops", "start_ns", "time_ns"},
                 "k, iteration, start_ns, rowid");
  while (rows.next()) {
    RecomputeRow r;
    r.k = rows.integer(0, 1, kMaxRecordedK);
    r.iteration = rows.int32(1);
    s.requireIteration(rows, r.k, r.iteration);
    r.step = rows.int32(2);
    // A recompute runs inside a backward step, re-making the output of a layer.
    if (r.step < 1 || r.step >= updateStep ||
        d.steps[static_cast<std::size_t>(r.step - 1)].direction != Direction::Backward) {
      rows.bad(2, "is " + std::to_string(r.step) + ", not a backward step of table 'steps'");
    }
    r.layer = rows.int32(3);
    if (r.layer < 0 || r.layer >= layerCount) {
      rows.bad(3, "is " + std::to_string(r.layer) + ", but table 'layers' has " +
                      (layerCount ? "layers 0.." + std::to_string(layerCount - 1) : "no layers"));
    }
    r.flops = rows.nonNegative(4);
    r.start_ns = rows.nonNegative(5);
    r.time_ns = rows.nonNegative(6);
    if (const std::int64_t iter = s.durationOf.at({r.k, r.iteration}); r.time_ns > iter) {
      rows.bad(6, "is " + std::to_string(r.time_ns) + ", longer than its iteration (" +
                      std::to_string(iter) + " ns)");
    }
    d.recomputes.push_back(r);
  }
}

/// Table transfers: each of a recorded iteration, a tensor and its kind's direction.
void loadTransfers(LoadState& s) {
  RunData& d = s.d;
  const std::int64_t updateStep = s.updateStep;
  const auto tensorCount = static_cast<std::int64_t>(d.tensors.size());
  TableRows rows(s.db, "transfers",
                 {"k", "iteration", "kind", "direction", "tensor", "step", "bytes", "start_ns",
                  "end_ns", "pinned", "overlap_ns"},
                 "k, iteration, start_ns, rowid");
  while (rows.next()) {
    TransferRow r;
    r.k = rows.integer(0, 1, kMaxRecordedK);
    r.iteration = rows.int32(1);
    s.requireIteration(rows, r.k, r.iteration);
    r.kind = transferKindFromName(rows, 2);
    const std::string dir = rows.text(3);
    const bool toHost = r.kind == TransferKind::Offload || r.kind == TransferKind::Readback;
    if (dir != (toHost ? "d2h" : "h2d")) {
      rows.bad(3, "is " + quoteBounded(dir) + ", but " +
                      (r.kind == TransferKind::Offload ? "an " : "a ") +
                      std::string(transferKindName(r.kind)) + " goes " + (toHost ? "d2h" : "h2d"));
    }
    r.to_host = toHost;
    r.tensor = rows.int32(4);
    if (r.tensor >= tensorCount) {
      rows.bad(4,
               "is " + std::to_string(r.tensor) + ", but table 'tensors' has " +
                   (tensorCount ? "tensors 0.." + std::to_string(tensorCount - 1) : "no tensors"));
    }
    r.step = rows.int32(5, 0, updateStep);
    r.bytes = rows.nonNegative(6);
    r.start_ns = rows.nonNegative(7);
    r.end_ns = rows.integer(8, r.start_ns);
    r.pinned = rows.flag(9);
    r.overlap_ns = rows.integer(10, 0, r.end_ns - r.start_ns);
    d.transfers.push_back(r);
  }
}

/// Table memory: each of a recorded iteration.
void loadMemory(LoadState& s) {
  RunData& d = s.d;
  TableRows rows(s.db, "memory", {"k", "iteration", "time_ns", "in_use"},
                 "k, iteration, time_ns, rowid");
  while (rows.next()) {
    MemoryRow r{.k = rows.integer(0, 1, kMaxRecordedK),
                .iteration = rows.int32(1),
                .time_ns = rows.nonNegative(2),
                .in_use = rows.nonNegative(3)};
    s.requireIteration(rows, r.k, r.iteration);
    d.memory.push_back(r);
  }
}

/// A sum of a table's byte or time counts, which can pass 2^63 in a damaged file.
struct Sum {
  std::int64_t value = 0;
  bool over = false;  ///< past the largest int64
  void add(std::int64_t v) { over = over || __builtin_add_overflow(value, v, &value); }
  bool is(std::int64_t v) const { return !over && value == v; }
  std::string text() const {
    return over ? "more than " + std::to_string(std::numeric_limits<std::int64_t>::max())
                : std::to_string(value);
  }
};

/// a * b; none where it passes int64.
std::optional<std::int64_t> product(std::int64_t a, std::int64_t b) {
  std::int64_t p = 0;
  if (__builtin_mul_overflow(a, b, &p)) return std::nullopt;
  return p;
}

/// Each k's iterations numbered 0, 1, 2, ... as recorded, and the batches rows of those k: in a
/// complete run, one for every k with recorded iterations and none of another k (a run writes a
/// k's row once its iterations at k end, interrupted or not: a killed or failed run may lack the
/// row of the k it was at).
void checkBatches(const LoadState& s) {
  const RunData& d = s.d;
  for (std::size_t i = 0; i < d.iterations.size(); ++i) {
    const IterationRow& r = d.iterations[i];
    const bool first = i == 0 || d.iterations[i - 1].k != r.k;
    const int expected = first ? 0 : d.iterations[i - 1].iteration + 1;
    if (r.iteration != expected) {
      damaged(d.path, "table 'iterations' has " + iterationName(r.k, r.iteration) +
                          " but no iteration " + std::to_string(expected) +
                          " (each k's iterations are numbered 0, 1, 2, ... as recorded)");
    }
  }
  std::set<std::int64_t> batchKs, recordedKs;
  for (const IterationRow& r : d.iterations)
    recordedKs.insert(r.k);
  const bool complete = d.meta.status == RunStatus::Complete;
  for (const BatchRow& b : d.batches) {
    batchKs.insert(b.k);  // k is the table's key: once each
    // Files of schema version 1 wrote a k's row before its iterations: a run killed at k has
    // the row alone. A complete run recorded every k it has a row of.
    if (complete && !recordedKs.count(b.k)) {
      damaged(d.path, "table 'batches' has k " + std::to_string(b.k) +
                          ", but table 'iterations' records no iteration of it");
    }
    // The pool is the budget's size: nothing in it peaks above the budget.
    if (b.measured_peak > d.meta.budget) {
      damaged(d.path, "table 'batches' row " + std::to_string(b.k) + ": measured_peak is " +
                          std::to_string(b.measured_peak) + ", above the run's budget (meta " +
                          "'budget' " + std::to_string(d.meta.budget) +
                          "), which is its pool's size");
    }
  }
  if (!complete) return;
  for (const std::int64_t k : recordedKs) {
    if (!batchKs.count(k)) {
      damaged(d.path, "table 'batches' has no row of k " + std::to_string(k) +
                          ", whose iterations table 'iterations' records (a complete run has " +
                          "one per k)");
    }
  }
}

/// The stalls of iteration `r`'s samples, rows [first, end) of d.samples (in start order): each
/// lies between the iteration's start and its step's start. The executor measures a stall as the
/// compute stream's idle time before a task, from the later of the iteration's start and the
/// end of the compute task before it (rt::fillTimeline), and the writer stores the step's start
/// and the iteration's on the same clock, so that holds exactly on every backend: a GPU's
/// calibration between its events and the host clock moves where tasks lie, never this
/// difference (a task timed before the iteration's start has no stall). A stall that reaches
/// past the iteration's start is an edit, and the trace drew it before the run began. Where
/// every pass's row of a step held the step's stall summed over the passes (`summedPerStep`,
/// files written before each pass's row held its own), the sum lies before the step's last pass.
void checkStallsWithinIteration(const RunData& d, const IterationRow& r, std::size_t first,
                                std::size_t end, bool summedPerStep) {
  // Per step (1 .. the update step): its rows in the iteration, its last row, the rows seen.
  const std::size_t steps = d.steps.size() + 2;
  std::vector<std::size_t> rows(steps), lastRow(steps), seen(steps);
  for (std::size_t q = first; q < end; ++q) {
    const auto st = static_cast<std::size_t>(d.samples[q].step);
    ++rows[st];
    lastRow[st] = q;
  }
  for (std::size_t q = first; q < end; ++q) {
    const SampleRow& x = d.samples[q];
    const auto st = static_cast<std::size_t>(x.step);
    const std::size_t pass = ++seen[st];
    const bool update = x.direction == Direction::Update;  // a row per layer, not per pass
    const auto which = [&] {
      return update ? "the update of layer " + std::to_string(x.layer)
                    : "step " + std::to_string(x.step) +
                          (rows[st] > 1 ? " (pass " + std::to_string(pass) + " of " +
                                              std::to_string(rows[st]) + ")"
                                        : std::string());
    };
    const std::int64_t room = x.start_ns - r.start_ns;  // both 0 or more: no overflow
    // A step runs before its iteration ends: the iteration lasts until every stream drained.
    if (room > r.duration_ns) {
      damaged(d.path, "table 'samples': " + which() + " of " + iterationName(r.k, r.iteration) +
                          " starts at start_ns " + std::to_string(x.start_ns) +
                          ", after its iteration's end (table 'iterations' has start_ns " +
                          std::to_string(r.start_ns) + " and duration_ns " +
                          std::to_string(r.duration_ns) + ", so it ends " +
                          std::to_string(room - r.duration_ns) +
                          " ns earlier): an iteration lasts until every stream drained");
    }
    if (summedPerStep && !update && q != lastRow[st]) continue;
    if (x.stall_ns == 0 || x.stall_ns <= room) continue;
    const std::string when = room > 0   ? std::to_string(room) + " ns after"
                             : room < 0 ? std::to_string(-room) + " ns before"
                                        : "at";
    damaged(d.path, "table 'samples': " + which() + " of " + iterationName(r.k, r.iteration) +
                        " has stall_ns " + std::to_string(x.stall_ns) + ", but it starts " + when +
                        " its iteration's start (start_ns " + std::to_string(x.start_ns) +
                        "; table 'iterations' has " + std::to_string(r.start_ns) +
                        "): a stall is the compute stream's idle time before the step, within "
                        "its iteration");
  }
}

/// The recompute tasks of iteration `r`, rows [firstRecompute, endRecompute) of d.recomputes,
/// against its samples, rows [first, end) of d.samples (both in start order). A recompute runs
/// on the compute stream inside a backward step, before that step's own kernels, so on the
/// clock that times both:
/// - it starts at or after the start of the iteration's first step (the compute stream's first
///   task: every forward step runs before a backward one), so never before its iteration's start
///   where the steps lie within it. The reader accepts a step timed before its iteration's start
///   without a stall, as a GPU's calibration of its event clock to the host's can place one, and
///   a recompute may then lie as early as the first step, never earlier;
/// - it ends at or before the start of its step's last pass (the step's kernels of its own pass
///   run after it; which pass a recompute belongs to is not recorded).
void checkRecomputesWithinIteration(const RunData& d, const IterationRow& r, std::size_t first,
                                    std::size_t end, std::size_t firstRecompute,
                                    std::size_t endRecompute) {
  if (firstRecompute == endRecompute) return;
  std::map<int, std::int64_t> lastStart;  // per step: its last pass's start
  std::int64_t firstStart = std::numeric_limits<std::int64_t>::max();
  for (std::size_t q = first; q < end; ++q) {
    const SampleRow& x = d.samples[q];
    firstStart = std::min(firstStart, x.start_ns);
    if (x.direction != Direction::Update) {
      auto [it, fresh] = lastStart.try_emplace(x.step, x.start_ns);
      if (!fresh) it->second = std::max(it->second, x.start_ns);
    }
  }
  for (std::size_t q = firstRecompute; q < endRecompute; ++q) {
    const RecomputeRow& x = d.recomputes[q];
    const std::string which = "table 'recomputes': the recompute of layer " +
                              std::to_string(x.layer) + " in step " + std::to_string(x.step) +
                              " of " + iterationName(r.k, r.iteration);
    if (x.start_ns < firstStart) {
      damaged(d.path, which + " starts at start_ns " + std::to_string(x.start_ns) + ", " +
                          std::to_string(firstStart - x.start_ns) +
                          " ns before its iteration's first step (start_ns " +
                          std::to_string(firstStart) +
                          " in table 'samples'; table 'iterations' has start_ns " +
                          std::to_string(r.start_ns) +
                          "): a recompute runs inside a backward step, after every forward step");
    }
    const auto step = lastStart.find(x.step);  // every step has a row (checked before)
    if (step == lastStart.end()) continue;
    // Every value 0 or more: the difference does not overflow where the sum could.
    if (x.time_ns > step->second - x.start_ns) {
      damaged(d.path, which + " runs from start_ns " + std::to_string(x.start_ns) +
                          " for time_ns " + std::to_string(x.time_ns) +
                          ", past the start of step " + std::to_string(x.step) + " (start_ns " +
                          std::to_string(step->second) +
                          " in table 'samples'): a recompute runs before its step's kernels");
    }
  }
}

/// Every recorded iteration whole. An iteration's rows are committed with its iterations row
/// in one transaction, so a row missing from them is damage whatever the run's status, and the
/// fits, plans, traces and views would read the rest as the whole iteration:
/// - a sample of every step on each of its passes (the same count for every step; a
///   sub-batched minibatch runs each step once per pass), each with its layer's FLOPs on the
///   pass's k / passes samples, and an update sample of every layer with weights or of none
///   (one multi-tensor update records none);
/// - the samples' stalls add up to the iteration's stall (S times it in files written before
///   each pass's row held its own stall, where every pass's row of a step held the step's);
/// - each sample's stall lies within the iteration, before the sample
///   (checkStallsWithinIteration);
/// - its offloads, prefetches and loads move the iteration's offload, prefetch and load bytes;
/// - the first iteration of each k records the pool (at least its end).
/// The rows of every table come ordered by (k, iteration), as the iterations do: each table is
/// walked once alongside them.
void checkIterationsWhole(const LoadState& s) {
  const RunData& d = s.d;
  const std::size_t steps = d.steps.size();
  std::int64_t weighted = 0;  // layers with weights: an update sample each
  for (const LayerRow& l : d.layers)
    weighted += l.params > 0 ? 1 : 0;
  std::vector<int> passes(steps);
  std::vector<std::int64_t> stepStall(steps);  // the stall of a step's first row
  std::vector<char> updated(d.layers.size());
  std::size_t si = 0, ti = 0, mi = 0, ri = 0;
  for (const IterationRow& r : d.iterations) {
    const std::string name = iterationName(r.k, r.iteration);
    const auto mine = [&r](const auto& row) {
      return row.k == r.k && row.iteration == r.iteration;
    };
    std::fill(passes.begin(), passes.end(), 0);
    std::fill(updated.begin(), updated.end(), 0);
    std::int64_t updates = 0;
    Sum stall;
    bool passesShareStalls = true;  // every pass's row of a step holds the same stall
    const std::size_t first = si;
    for (; si < d.samples.size() && mine(d.samples[si]); ++si) {
      const SampleRow& x = d.samples[si];
      stall.add(x.stall_ns);
      if (x.direction != Direction::Update) {
        const auto st = static_cast<std::size_t>(x.step - 1);
        if (passes[st]++ == 0) {
          stepStall[st] = x.stall_ns;
        } else if (stepStall[st] != x.stall_ns) {
          passesShareStalls = false;
        }
        continue;
      }
      const std::int64_t params =
          x.layer >= 0 ? d.layers[static_cast<std::size_t>(x.layer)].params : 0;
      if (params == 0) {
        damaged(d.path, "table 'samples' has an update of " + name + " of layer " +
                            std::to_string(x.layer) + ", which has no weights to update");
      }
      if (updated[static_cast<std::size_t>(x.layer)]++) {
        damaged(d.path, "table 'samples' has the update of layer " + std::to_string(x.layer) +
                            " in " + name + " twice");
      }
      if (const auto want = product(params, kSgdFlopsPerParam); want != x.flops) {
        damaged(d.path, "table 'samples': the update of layer " + std::to_string(x.layer) + " in " +
                            name + " has flops " + std::to_string(x.flops) + ", but " +
                            std::to_string(params) + " weights take " +
                            (want ? std::to_string(*want) : "more"));
      }
      ++updates;
    }
    const int each = steps > 0 ? passes[0] : 1;  // the passes: every step's count of rows
    if (steps > 0) {
      for (std::size_t st = 0; st < steps; ++st) {
        if (passes[st] == each && each > 0) continue;
        damaged(d.path, "table 'samples' has " + std::to_string(passes[st]) + " of step " +
                            std::to_string(st + 1) + " in " + name + ", but " +
                            (st == 0 ? "every step runs at least once"
                                     : std::to_string(each) + " of step 1 (every step runs " +
                                           "once per pass)"));
      }
      const std::int64_t passSamples = r.k / each;
      for (std::size_t q = first; q < si; ++q) {
        const SampleRow& x = d.samples[q];
        if (x.direction == Direction::Update) continue;
        const std::int64_t perSample =
            d.steps[static_cast<std::size_t>(x.step - 1)].flops_per_sample;
        if (const auto want = product(passSamples, perSample); want != x.flops) {
          damaged(d.path, "table 'samples': step " + std::to_string(x.step) + " of " + name +
                              " has flops " + std::to_string(x.flops) + ", but " +
                              std::to_string(passSamples) + " samples of it take " +
                              (want ? std::to_string(*want) : "more"));
        }
      }
    }
    if (updates != 0 && updates != weighted) {
      damaged(d.path, "table 'samples' has updates of " + std::to_string(updates) + " layers in " +
                          name + ", but " + std::to_string(weighted) +
                          " layers have weights (an iteration records the update of each, or " +
                          "none where one multi-tensor update runs them all)");
    }
    // Files written before each pass's row held its own stall gave every pass's row of a step
    // the step's stall summed over the passes: S times the iteration's in all.
    const std::optional<std::int64_t> legacy = product(each, r.stall_ns);
    const bool summedPerStep = each > 1 && passesShareStalls && legacy && stall.is(*legacy);
    if (!stall.is(r.stall_ns) && !summedPerStep) {
      damaged(d.path, "table 'iterations': " + name + " has stall_ns " +
                          std::to_string(r.stall_ns) + ", but its samples' stalls add up to " +
                          stall.text());
    }
    checkStallsWithinIteration(d, r, first, si, summedPerStep);
    const std::size_t firstRecompute = ri;
    for (; ri < d.recomputes.size() && mine(d.recomputes[ri]); ++ri) {
    }
    checkRecomputesWithinIteration(d, r, first, si, firstRecompute, ri);
    Sum moved[static_cast<int>(TransferKind::Readback) + 1];  // by TransferKind
    for (; ti < d.transfers.size() && mine(d.transfers[ti]); ++ti)
      moved[static_cast<int>(d.transfers[ti].kind)].add(d.transfers[ti].bytes);
    const auto movedAs = [&](TransferKind kind, std::int64_t want, const char* column) {
      const Sum& got = moved[static_cast<int>(kind)];
      if (got.is(want)) return;
      damaged(d.path, "table 'iterations': " + name + " has " + column + " " +
                          std::to_string(want) + ", but its " +
                          std::string(transferKindName(kind)) + " transfers move " + got.text() +
                          " bytes");
    };
    movedAs(TransferKind::Offload, r.offload_bytes, "offload_bytes");
    movedAs(TransferKind::Prefetch, r.prefetch_bytes, "prefetch_bytes");
    movedAs(TransferKind::Load, r.load_bytes, "load_bytes");
    std::size_t pool = 0;
    for (; mi < d.memory.size() && mine(d.memory[mi]); ++mi)
      ++pool;
    if (r.iteration == 0 && pool == 0) {
      damaged(d.path, "table 'memory' has no row of " + name +
                          " (the first iteration of each k records the pool)");
    }
  }
}

/// Table fits.
void loadFits(LoadState& s) {
  RunData& d = s.d;
  TableRows rows(s.db, "fits",
                 {"id", "scope", "target", "direction", "form", "params", "points", "rmse",
                  "max_rel_error", "chosen"},
                 "id");
  while (rows.next()) {
    d.fits.push_back({.id = rows.integer(0),
                      .scope = fitScopeFromName(rows, 1),
                      .target = rows.text(2),
                      .direction = fitDirectionFromName(rows, 3),
                      .form = fitRowFormFromName(rows, 4),
                      .params = rows.jsonText(5),
                      .points = rows.int32(6),
                      .rmse = rows.real(7, true),
                      .max_rel_error = rows.real(8, true),
                      .chosen = rows.flag(9)});
  }
}

/// Table plans: each read as a plan file is.
void loadPlans(LoadState& s) {
  RunData& d = s.d;
  TableRows rows(
      s.db, "plans",
      {"id", "created_utc", "policy", "mode", "budget", "k", "predicted_iter_ns", "json"}, "id");
  while (rows.next()) {
    d.plans.push_back({.id = rows.integer(0),
                       .created_utc = rows.text(1),
                       .policy = rows.text(2),
                       .mode = rows.text(3),
                       .budget = rows.nonNegative(4),
                       .k = rows.integer(5, 1),
                       .predicted_iter_ns = rows.nonNegative(6),
                       .json = rows.jsonText(7)});
    // A recorded plan is read as a plan file is: compare and the app take its predictions.
    const PlanRow& row = d.plans.back();
    PlanFile plan;
    try {
      plan = planFromJson(json::parse(row.json), "plan");
    } catch (const Error& e) {
      damaged(d.path, "table 'plans' row " + std::to_string(row.id) + ": " + e.what());
    }
    // Its columns are its JSON's (as the run wrote them), and it is the stored network's plan.
    const auto differs = [&](const char* column, const std::string& got, const std::string& want) {
      damaged(d.path, "table 'plans' row " + std::to_string(row.id) + ": " + column + " is " + got +
                          ", but its plan (column 'json') says " + want);
    };
    if (row.k != plan.k) differs("k", std::to_string(row.k), std::to_string(plan.k));
    if (row.budget != plan.budget) {
      differs("budget", std::to_string(row.budget), std::to_string(plan.budget));
    }
    if (row.policy != plan.policy)
      differs("policy", quoteBounded(row.policy), "'" + plan.policy + "'");
    if (row.mode != plan.mode) differs("mode", quoteBounded(row.mode), "'" + plan.mode + "'");
    if (const auto ns = static_cast<std::int64_t>(plan.predictions.t_iter_s * 1e9);
        row.predicted_iter_ns != ns) {
      differs("predicted_iter_ns", std::to_string(row.predicted_iter_ns), std::to_string(ns));
    }
    if (!d.network.structure_hash.empty() && plan.structure_hash != d.network.structure_hash) {
      damaged(d.path, "table 'plans' row " + std::to_string(row.id) + ": its plan is for " +
                          "structure " + plan.structure_hash + ", but the run's network " +
                          "(table 'network') has structure " + d.network.structure_hash);
    }
  }
}

}  // namespace

RunReader::RunReader(const std::string& path) {
  checkRunFile(path);
  m_db = std::make_unique<Database>(path, Database::Mode::ReadOnly);
  const auto appId = m_db->queryInt("PRAGMA application_id");
  if (appId != kApplicationId) {
    if (appId == 0) {
      throwBadInput("'" + path +
                    "' is an SQLite database but not a Swapscope run database (it has no "
                    "Swapscope application id)");
    }
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%08llx",
                  static_cast<unsigned long long>(static_cast<std::uint32_t>(appId)));
    throwBadInput("'" + path + "' belongs to another application (SQLite application id " + hex +
                  "), not Swapscope");
  }
  m_version = static_cast<int>(m_db->queryInt("PRAGMA user_version"));
  if (m_version > kSchemaVersion) {
    throwBadInput("'" + path + "' has run-database schema version " + std::to_string(m_version) +
                  ", newer than this Swapscope reads (" + std::to_string(kSchemaVersion) +
                  "); use a newer Swapscope");
  }
  if (m_version < 1) {
    throwBadInput("'" + path +
                  "' has no run-database schema version; it was not finished by "
                  "Swapscope's writer");
  }
  {
    Statement check(*m_db, "PRAGMA quick_check(1)");
    if (check.step() && check.text(0) != "ok") {
      damaged(path, quoteBounded(check.text(0), 200) + " (SQLite's quick_check)");
    }
  }
  checkTables(*m_db, path, m_version);
}

RunReader::~RunReader() = default;

const std::string& RunReader::path() const {
  return m_db->path();
}

RunMeta RunReader::meta() {
  RunMeta m;
  std::map<std::string, std::string> kv;
  {
    TableRows rows(*m_db, "meta", {"key", "value"}, "key");
    while (rows.next()) {
      std::string key = rows.text(0);
      kv[std::move(key)] = rows.text(1);
    }
  }
  auto take = [&](const char* key) {
    auto it = kv.find(key);
    if (it == kv.end()) damaged(path(), std::string("meta has no '") + key + "'");
    std::string v = std::move(it->second);
    kv.erase(it);
    return v;
  };
  auto takeInt = [&](const char* key) {
    const std::string v = take(key);
    try {
      std::size_t used = 0;
      const long long n = std::stoll(v, &used);
      if (used == v.size() && n >= 0) return static_cast<std::int64_t>(n);
    } catch (const std::exception&) {
    }
    damaged(path(), std::string("meta '") + key + "' is " + quoteBounded(v) +
                        ", not an integer of 0 or more");
  };
  m.kind = take("kind");
  m.backend = take("backend");
  m.device = take("device");
  m.device_memory = takeInt("device_memory");
  {
    const std::string text = take("versions");
    // Depth first: a deeply nested value would overflow the stack when parsed or echoed.
    const json v =
        jsonTooDeepAt(text) ? json(json::value_t::discarded) : json::parse(text, nullptr, false);
    if (v.is_discarded() || !v.is_object()) {
      damaged(path(), "meta 'versions' is " + quoteBounded(text) + ", not a JSON object");
    }
    for (const auto& [name, value] : v.items()) {
      m.versions[name] = value.is_string() ? value.get<std::string>() : echoJson(value);
    }
  }
  m.command_line = take("command_line");
  m.started_utc = take("started_utc");
  m.budget = takeInt("budget");
  m.policy = take("policy");
  m.host_cpu = take("host_cpu");
  m.status = statusFromName(path(), take("status"));
  m.status_message = take("status_message");
  m.writer_pid = takeInt("writer_pid");
  m.writer_host = take("writer_host");
  if (kv.count("writer_start")) m.writer_start = take("writer_start");
  checkPoolPowersOfTwo(path(), kv);
  m.extra = std::move(kv);
  if (m.status == RunStatus::Running && !writerAlive(m.writer_pid, m.writer_host, m.writer_start)) {
    m.status = RunStatus::Incomplete;
    m.status_message = "the writing process (pid " + std::to_string(m.writer_pid) + " on " +
                       m.writer_host + ") ended without finishing the run";
  }
  return m;
}

NetworkInfo RunReader::network() {
  return readNetwork(nullptr);
}

NetworkInfo RunReader::readNetwork(std::vector<LayerRow>* layers) {
  TableRows rows(*m_db, "network", {"name", "structure_hash", "json"}, "rowid");
  NetworkInfo n;
  if (!rows.next()) return n;
  n = {rows.text(0), rows.text(1), rows.text(2)};
  if (auto why = jsonError(n.json)) rows.bad(2, *why);
  // The origin the verbs name the stored network by.
  const std::string origin = path() + " (network)";
  Network net = [&] {
    try {
      // From the text: its depth is checked before anything recursive runs (converting a
      // parsed document recurses once per level).
      return networkFromText(n.json, origin);
    } catch (const Error& e) {
      throw Error(ErrorKind::BadInput, e.what());
    } catch (const json::exception& e) {
      throwBadInput(origin + ": " + quoteBounded(e.what(), 160));
    }
  }();
  if (net.structureHash() != n.structure_hash) {
    rows.badRow("the network in column 'json' has structure hash " + net.structureHash() +
                ", not the stored structure_hash " + quoteBounded(n.structure_hash));
  }
  if (layers) {
    // As RunWriter::writeNetwork writes them.
    const std::vector<LayerCost> costs = computeLayerCosts(net);
    for (int i = 0; i < net.size(); ++i) {
      const LayerCost& c = costs[static_cast<std::size_t>(i)];
      layers->push_back({.id = i,
                         .name = net.layer(i).name,
                         .kind = std::string(layerKindName(net.layer(i).kind)),
                         .inputs = net.inputsOf(i),
                         .out_shape = net.outputShape(i).dims,
                         .params = c.params,
                         .fwd_flops = c.fwd_flops,
                         .bwd_data_flops = c.bwd_data_flops,
                         .bwd_weight_flops = c.bwd_weight_flops,
                         .fm = c.fm});
    }
  }
  return n;
}

namespace {

/// One read transaction: every table read within it sees the same committed state, so a reader
/// of a database a run still writes never sees an iteration's rows in one table and not yet in
/// another (each SELECT would otherwise see the commits made before it began).
class ReadSnapshot {
 public:
  explicit ReadSnapshot(Database& db) : m_db(db) { m_db.exec("BEGIN"); }
  ~ReadSnapshot() { m_db.tryExec("COMMIT"); }  // a read transaction: nothing to lose
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;

 private:
  Database& m_db;
};

}  // namespace

RowCounts RunReader::counts() {
  const ReadSnapshot snapshot(*m_db);
  auto count = [&](const char* sql) { return m_db->queryInt(sql); };
  RowCounts c;
  c.layers = count("SELECT count(*) FROM layers");
  c.steps = count("SELECT count(*) FROM steps");
  c.tensors = count("SELECT count(*) FROM tensors");
  c.batches = count("SELECT count(*) FROM batches");
  c.iterations = count("SELECT count(*) FROM iterations");
  c.samples = count("SELECT count(*) FROM samples");
  c.transfers = count("SELECT count(*) FROM transfers");
  c.memory = count("SELECT count(*) FROM memory");
  c.fits = count("SELECT count(*) FROM fits");
  c.plans = count("SELECT count(*) FROM plans");
  if (m_version >= 3) c.recomputes = count("SELECT count(*) FROM recomputes");
  return c;
}

RowCounts RunData::counts() const {
  const auto n = [](const auto& rows) { return static_cast<std::int64_t>(rows.size()); };
  RowCounts c;
  c.layers = n(layers);
  c.steps = n(steps);
  c.tensors = n(tensors);
  c.batches = n(batches);
  c.iterations = n(iterations);
  c.samples = n(samples);
  c.transfers = n(transfers);
  c.memory = n(memory);
  c.fits = n(fits);
  c.plans = n(plans);
  c.recomputes = n(recomputes);
  return c;
}

RunData RunReader::load() {
  const ReadSnapshot snapshot(*m_db);
  RunData d;
  d.path = path();
  d.schema_version = m_version;
  d.meta = meta();
  LoadState s{.db = *m_db,
              .d = d,
              .v2 = false,
              .networkLayers = {},
              .layerCount = 0,
              .updateStep = 0,
              .recorded = {},
              .durationOf = {},
              .lastFound = {0, -1}};
  s.v2 = m_version >= 2;
  d.network = readNetwork(&s.networkLayers);
  loadLayers(s);
  s.layerCount = static_cast<std::int64_t>(d.layers.size());
  loadSteps(s);
  s.updateStep = static_cast<std::int64_t>(d.steps.size()) + 1;
  loadTensors(s);
  loadBatches(s);
  loadIterations(s);
  loadSamples(s);
  if (m_version >= 3) loadRecomputes(s);
  loadTransfers(s);
  loadMemory(s);
  checkBatches(s);
  checkIterationsWhole(s);
  loadFits(s);
  loadPlans(s);
  return d;
}

}  // namespace swapscope::store
