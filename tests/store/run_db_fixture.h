// SPDX-License-Identifier: MIT
/// The run-database tests' fixture: a fresh directory per test, a complete sample database
/// written through RunWriter, and helpers that damage a file with SQLite itself.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "analysis/layer_cost.h"
#include "analysis/network_analysis.h"
#include "common/error.h"
#include "graph/network_json.h"
#include "store/plan_file.h"
#include "store/run_db.h"
#include "store/tiny_network.h"

namespace swapscope::store {

namespace fs = std::filesystem;

/// A whole recorded iteration of the tiny network at `k`, as the executor records one and the
/// reader checks it: on each of `passes` passes (a sub-batched minibatch) a sample of every step
/// with its layer's FLOPs on k / passes samples (`stall` on the first pass's step 1: the
/// iteration's stall, the compute stream idle from the iteration's start, so the steps start at
/// `start` + `stall` + 1), the update of every layer with weights, the minibatch's load of 512
/// bytes, and two pool samples (the writer records them on each k's first iteration; the reader
/// allows them on any). Its rows start at `start` and end by `start` + 900 (a stall up to 700).
inline IterationRows wholeIteration(std::int64_t k, int iteration, std::int64_t start,
                                    std::int64_t stall = 10, int passes = 1) {
  const Network net = testing::tinyNetwork();
  const auto costs = computeLayerCosts(net);
  const Gmap gmap = planMemory(net, costs, makeSwapSet(Policy::SwapAll, net, costs)).gmap;
  IterationRows rows;
  rows.iteration = {k, iteration, start, 900, 2.0, stall, 0, 0, 512};
  for (int pass = 0; pass < passes; ++pass) {
    for (int s = 1; s <= gmap.steps(); ++s) {
      const int layer = gmap.step_layer[static_cast<std::size_t>(s)];
      const LayerCost& c = costs[static_cast<std::size_t>(layer)];
      const bool bwd = gmap.isBackwardStep(s);
      rows.samples.push_back(
          {k, iteration, s, layer, bwd ? Direction::Backward : Direction::Forward,
           k / passes * (bwd ? c.bwd_data_flops + c.bwd_weight_flops : c.fwd_flops),
           start + stall + pass * (gmap.steps() + 1) + s, 5, s == 1 && pass == 0 ? stall : 0});
    }
  }
  for (int layer = 0; layer < net.size(); ++layer) {
    const std::int64_t params = costs[static_cast<std::size_t>(layer)].params;
    if (params > 0) {
      rows.samples.push_back({k, iteration, gmap.steps() + 1, layer, Direction::Update,
                              params * kSgdFlopsPerParam, start + 800 + layer, 7, 0});
    }
  }
  rows.transfers = {
      {k, iteration, TransferKind::Load, false, 0, 1, 512, start, start + 1, true, 0}};
  rows.memory = {{k, iteration, start + 1, 777}, {k, iteration, start + 900, 555}};
  return rows;
}

/// A fresh directory per test, removed afterwards.
class RunDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_dir = fs::temp_directory_path() /
            ("swapscope-store-" + std::to_string(getpid()) + "-" + info->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }
  std::string file(const std::string& name) const { return (m_dir / name).string(); }

  static RunMeta sampleMeta() {
    RunMeta m;
    m.kind = "profile";
    m.backend = "cpu";
    m.device = "cpu:0 test device";
    m.device_memory = 123456789;
    m.versions = {{"oneDNN", "9.9.9"}, {"SQLite", "3.x"}};
    m.command_line = "swapscope profile --model tiny --db 'a b.swapdb'";
    m.started_utc = "2026-11-21T10:00:00Z";
    m.budget = 64 << 20;
    m.policy = "swap-all";
    m.host_cpu = "test CPU, 2 logical cores";
    m.extra = {{"k_max", "94"}};
    return m;
  }

  /// A complete database with rows in every table; returns what was written.
  RunData writeSample(const std::string& path) {
    RunData d;
    d.meta = sampleMeta();
    const Network net = testing::tinyNetwork();
    const auto costs = computeLayerCosts(net);
    const MemoryPlan plan = planMemory(net, costs, makeSwapSet(Policy::SwapAll, net, costs));
    RunWriter w(path, d.meta);
    w.writeNetwork(net, costs, plan.gmap);
    d.batches = {{8, "swap-all", 1, 2000, 2000, 4, 2}};
    for (const auto& b : d.batches)
      w.addBatch(b);
    for (int it = 0; it < 2; ++it) {
      IterationRows rows = wholeIteration(8, it, 1000 * it);
      // An offload beside the load (in time order: the reader returns rows of an iteration by
      // start time).
      rows.transfers.push_back({8, it, TransferKind::Offload, true, 3, 1, 4096, 1000 * it + 60,
                                1000 * it + 90, false, 25});
      rows.iteration.offload_bytes = 4096;
      w.addIteration(rows);
      d.iterations.push_back(rows.iteration);
      d.samples.insert(d.samples.end(), rows.samples.begin(), rows.samples.end());
      d.transfers.insert(d.transfers.end(), rows.transfers.begin(), rows.transfers.end());
      d.memory.insert(d.memory.end(), rows.memory.begin(), rows.memory.end());
    }
    FitRow fit{0,
               FitScope::Type,
               "conv",
               FitDirection::Forward,
               FitRowForm::Affine,
               R"({"a":1e-5,"P":2e12})",
               5,
               1e-6,
               0.04,
               true};
    fit.id = w.addFit(fit);
    d.fits = {fit};
    // A recorded plan is a plan file's JSON: the reader checks it as one.
    PlanFile planFile;
    planFile.network_name = net.name();
    planFile.structure_hash = net.structureHash();
    planFile.device_name = d.meta.device;
    planFile.backend = d.meta.backend;
    planFile.policy = "accudnn";
    planFile.mode = "argmin";
    planFile.budget = 1 << 30;
    planFile.k = 48;
    planFile.predictions.t_iter_s = 123456e-9;
    planFile.predictions.throughput = 48 / planFile.predictions.t_iter_s;
    planFile.predictions.peak_bytes = 1 << 20;
    PlanRow plan1{0,      "2026-11-21T10:01:00Z",     "accudnn", "argmin", 1 << 30, 48,
                  123456, planToJson(planFile).dump()};
    plan1.id = w.addPlan(plan1);
    d.plans = {plan1};
    w.finish(RunStatus::Complete);
    d.network = {net.name(), net.structureHash(), networkToText(net)};
    for (int i = 0; i < net.size(); ++i) {
      const auto& c = costs[static_cast<std::size_t>(i)];
      d.layers.push_back({i, net.layer(i).name, std::string(layerKindName(net.layer(i).kind)),
                          net.inputsOf(i), net.outputShape(i).dims, c.params, c.fwd_flops,
                          c.bwd_data_flops, c.bwd_weight_flops, c.fm});
    }
    return d;
  }

  fs::path m_dir;
};

inline std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// Runs `sql` on the file with SQLite itself, bypassing Swapscope's writer.
inline void execSql(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

/// Expects opening `path` to fail with BadInput and a message naming the file and `reason`.
inline void expectRejected(const std::string& path, const std::string& reason) {
  try {
    RunReader r(path);
    r.load();
    FAIL() << path << " was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
  }
}

}  // namespace swapscope::store
