// SPDX-License-Identifier: MIT
// Hostile run databases: dropped tables and columns, impossible values, values of the wrong
// type, a file cut short, an invalid stored network, read-only storage, a reader holding the
// file while the run finishes, and a live writer's file asked to be replaced. Damaged copies are
// made in a temporary directory; sample_runs/ is only read, and checked byte for byte after.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sample_runs.h"
#include "store/chrome_trace.h"
#include "store/run_db.h"
#include "store/run_db_fixture.h"
#include "store/schema.h"
#include "store/sqlite.h"

namespace swapscope::store {
namespace {

/// Adds copies of the sample runs; every sample run it copied must be unchanged afterwards.
class RunDbDamage : public RunDbTest {
 protected:
  void TearDown() override {
    for (const auto& [path, bytes] : m_samples)
      EXPECT_EQ(readBytes(path), bytes) << path << " changed";
    RunDbTest::TearDown();
  }
  /// A copy of sample_runs/`name` in the test's directory.
  std::string copySample(const std::string& name) {
    const std::string from = swapscope::testing::sampleRun(name);
    if (!m_samples.count(from)) m_samples[from] = readBytes(from);
    const std::string to = file(name);
    fs::copy_file(from, to, fs::copy_options::overwrite_existing);
    return to;
  }
  /// A complete tiny database with rows in every table.
  std::string tinyDb(const std::string& name = "tiny.swapdb") {
    const std::string path = file(name);
    writeSample(path);
    return path;
  }
  /// A complete run of the tiny network under swap-all with the one iteration `rows` (k = 8).
  std::string tinySwapAllRun(const std::string& name, const IterationRows& rows) {
    const Network net = testing::tinyNetwork();
    const auto costs = computeLayerCosts(net);
    const MemoryPlan plan = planMemory(net, costs, makeSwapSet(Policy::SwapAll, net, costs));
    const std::string path = file(name);
    RunWriter w(path, sampleMeta());
    w.writeNetwork(net, costs, plan.gmap);
    w.addIteration(rows);
    w.addBatch({8, "swap-all", 1, 2000, 2000, 0, 0});
    w.finish(RunStatus::Complete);
    return path;
  }
  /// Expects the constructor itself (opening) to refuse `path` with BadInput and `reason`.
  static void expectRefusedOnOpen(const std::string& path, const std::string& reason) {
    try {
      RunReader r(path);
      FAIL() << path << " was opened";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
      EXPECT_NE(std::string(e.what()).find("'" + path + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  }
  /// The message load() refuses `path` with (BadInput, naming the file), or "" if accepted.
  static std::string loadError(const std::string& path) {
    try {
      RunReader(path).load();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      return e.what();
    }
    return "";
  }
  /// Re-creates `table` without STRICT, column types or constraints, so that any value of any
  /// type can be stored in it and is stored as given.
  static void loosen(const std::string& path, const std::string& table) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1) ORDER BY cid", -1, &st, nullptr);
    sqlite3_bind_text(st, 1, table.c_str(), -1, SQLITE_TRANSIENT);
    std::string columns;
    while (sqlite3_step(st) == SQLITE_ROW)
      columns += (columns.empty() ? "" : ", ") +
                 std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    sqlite3_finalize(st);
    sqlite3_close(db);
    const std::string sql = "CREATE TABLE loose(" + columns +
                            "); INSERT INTO loose SELECT * FROM " + table + "; DROP TABLE " +
                            table + "; ALTER TABLE loose RENAME TO " + table + ";";
    execSql(path, sql.c_str());
  }

 private:
  std::map<std::string, std::string> m_samples;
};

std::vector<std::string> schemaTableNames() {
  std::vector<std::string> names;
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  sqlite3_exec(db, kSchemaSql, nullptr, nullptr, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema WHERE type = 'table'", -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW)
    names.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return names;
}

TEST_F(RunDbDamage, TheSampleRunsPassEveryCheck) {
  for (const char* name : {"resnet56-32x32-cpu-profile.swapdb", "fmnist-cnn-cpu-profile.swapdb"}) {
    const std::string path = copySample(name);
    RunData d;
    ASSERT_NO_THROW(d = RunReader(path).load()) << name;
    EXPECT_GT(d.samples.size(), 500u);
    EXPECT_EQ(d.meta.status, RunStatus::Complete);
  }
}

// --- 9: a missing table or column is named when the file is opened -------------------------

TEST_F(RunDbDamage, EveryDroppedTableIsNamedOnOpen) {
  const std::vector<std::string> tables = schemaTableNames();
  ASSERT_EQ(tables.size(), 13u);  // recomputes: schema version 3
  const std::string original = tinyDb();
  for (const std::string& table : tables) {
    const std::string path = file("no-" + table + ".swapdb");
    fs::copy_file(original, path);
    execSql(path, ("DROP TABLE " + table).c_str());
    expectRefusedOnOpen(path, "is damaged: table '" + table + "' is missing");
  }
}

TEST_F(RunDbDamage, ADroppedColumnIsNamedOnOpen) {
  const std::string path = tinyDb();
  execSql(path, "ALTER TABLE batches DROP COLUMN policy");
  expectRefusedOnOpen(path, "is damaged: table 'batches' has no column 'policy'");
}

TEST_F(RunDbDamage, ATableReplacedByAViewIsNamedOnOpen) {
  const std::string path = tinyDb();
  execSql(path,
          "CREATE TABLE m2 AS SELECT * FROM memory; DROP TABLE memory; "
          "CREATE VIEW memory AS SELECT * FROM m2;");
  expectRefusedOnOpen(path, "'memory' is a 'view', not a table");
}

// --- 10: impossible values, values of the wrong type --------------------------------------

struct BadValue {
  const char* name;
  const char* sql;       ///< run on a copy of the tiny database
  const char* loosen;    ///< a table to re-create without types first, or nullptr
  const char* expected;  ///< in the message
};

TEST_F(RunDbDamage, ImpossibleValuesAreRefusedNamingTableRowAndValue) {
  const BadValue cases[] = {
      {"negative duration", "UPDATE iterations SET duration_ns = -10800000 WHERE rowid = 2",
       nullptr, "table 'iterations' row 2: duration_ns is -10800000; it must be 1 or more"},
      {"negative step time", "UPDATE samples SET time_ns = -5 WHERE rowid = 3", nullptr,
       "table 'samples' row 3: time_ns is -5; it cannot be negative"},
      {"negative transfer bytes", "UPDATE transfers SET bytes = -4096 WHERE rowid = 2", nullptr,
       "table 'transfers' row 2: bytes is -4096; it cannot be negative"},
      {"sample of a layer that does not exist", "UPDATE samples SET layer = 999 WHERE rowid = 1",
       nullptr, "table 'samples' row 1: layer is 999, but table 'layers' has layers 0.."},
      {"sample of a step that does not exist", "UPDATE samples SET step = 999 WHERE rowid = 1",
       nullptr, "table 'samples' row 1: step is 999, but table 'steps' has steps 1.."},
      {"sample whose layer is not its step's", "UPDATE samples SET layer = 2 WHERE rowid = 1",
       nullptr, "table 'samples' row 1: layer 2 fwd does not match step 1 (layer 1 fwd)"},
      {"sample of an iteration that does not exist",
       "UPDATE samples SET iteration = 7 WHERE rowid = 1", nullptr,
       "table 'samples' row 1: k 8 iteration 7 has no row in table 'iterations'"},
      {"transfer of a tensor that does not exist",
       "UPDATE transfers SET tensor = 100000 WHERE rowid = 1", nullptr,
       "table 'transfers' row 1: tensor is 100000, but table 'tensors' has tensors 0.."},
      {"transfer that ends before it starts",
       "UPDATE transfers SET end_ns = start_ns - 1 WHERE rowid = 2", nullptr,
       "table 'transfers' row 2: end_ns is 59; it must be 60 or more"},
      {"offload going host to device", "UPDATE transfers SET direction = 'h2d' WHERE rowid = 2",
       nullptr, "table 'transfers' row 2: direction is 'h2d', but an offload goes d2h"},
      {"zero minibatch", "UPDATE batches SET k = 0 WHERE k = 8", nullptr,
       "table 'batches' row 0: k is 0, outside 1..16777216"},
      {"minibatch beyond any run's", "UPDATE batches SET k = 1099511627776 WHERE k = 8", nullptr,
       "k is 1099511627776, outside 1..16777216"},
      {"iteration of no time", "UPDATE iterations SET duration_ns = 0 WHERE rowid = 2", nullptr,
       "table 'iterations' row 2: duration_ns is 0; it must be 1 or more"},
      {"step longer than its iteration",
       "UPDATE samples SET time_ns = 4611686018427387904 WHERE rowid = 3", nullptr,
       "table 'samples' row 3: time_ns is 4611686018427387904, longer than its iteration ("},
      {"negative budget", "UPDATE meta SET value = '-1' WHERE key = 'budget'", nullptr,
       "meta 'budget' is '-1', not an integer of 0 or more"},
      {"negative fit error", "UPDATE fits SET rmse = -0.5 WHERE id = 1", nullptr,
       "table 'fits' row 1: rmse is -0.5; it cannot be negative"},
      {"fit parameters that are not JSON", "UPDATE fits SET params = '{\"a\": ' WHERE id = 1",
       nullptr, "table 'fits' row 1: params is not valid JSON"},
      {"fit of an unknown scope", "UPDATE fits SET scope = 'kernel' WHERE id = 1", nullptr,
       "table 'fits' row 1: scope is 'kernel', not type, layer, pcie, dispatch or contention"},
      {"fit of an unknown direction", "UPDATE fits SET direction = 'forward' WHERE id = 1", nullptr,
       "table 'fits' row 1: direction is 'forward', not fwd, bwd, update, h2d, d2h or -"},
      {"fit of an unknown form", "UPDATE fits SET form = 'cubic' WHERE id = 1", nullptr,
       "table 'fits' row 1: form is 'cubic', not affine, saturating, loglog, "
       "mean-of-step-medians, proportional, line, mean or median"},
      {"plan that is not JSON", "UPDATE plans SET json = 'plan' WHERE id = 1", nullptr,
       "table 'plans' row 1: json is not valid JSON"},
      {"text in an integer column", "UPDATE iterations SET duration_ns = 'abc' WHERE rowid = 1",
       "iterations", "table 'iterations' row 1: duration_ns holds text 'abc', not an integer"},
      {"a number as text in an integer column",
       "UPDATE iterations SET stall_ns = CAST(stall_ns AS TEXT) WHERE rowid = 1", "iterations",
       "table 'iterations' row 1: stall_ns holds text '10', not an integer"},
      {"blob in an integer column", "UPDATE samples SET flops = x'0102' WHERE rowid = 2", "samples",
       "flops holds a blob of 2 bytes, not an integer"},
      {"real in an integer column", "UPDATE memory SET in_use = 1.5 WHERE rowid = 1", "memory",
       "in_use holds real 1.5, not an integer"},
      {"NULL in an integer column", "UPDATE transfers SET start_ns = NULL WHERE rowid = 1",
       "transfers", "start_ns holds NULL, not an integer"},
      {"blob in a text column", "UPDATE layers SET name = x'00ff' WHERE id = 1", "layers",
       "name holds a blob of 2 bytes, not text"},
      {"text in a real column", "UPDATE iterations SET loss = 'low' WHERE rowid = 1", "iterations",
       "loss holds text 'low', not a number"},
      {"integer beyond int in an int field",
       "UPDATE iterations SET iteration = 4294967296 WHERE rowid = 1", nullptr,
       "iteration is 4294967296, outside 0..2147483647"},
  };
  const std::string original = tinyDb();
  int n = 0;
  for (const BadValue& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = file("bad-" + std::to_string(n++) + ".swapdb");
    fs::copy_file(original, path);
    if (c.loosen) loosen(path, c.loosen);
    execSql(path, c.sql);
    const std::string message = loadError(path);
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
  }
}

// --- 10b: an iteration with rows missing, or rows that are not its own ---------------------

// Each case edits a copy of the tiny database (two whole iterations at k = 8). The rows of an
// iteration are committed with it, so a missing one is damage; the fits, plans and views would
// otherwise read what is left as the whole iteration.
TEST_F(RunDbDamage, AnIterationWithRowsMissingIsRefusedNamingWhat) {
  const Network net = testing::tinyNetwork();
  const auto costs = computeLayerCosts(net);
  int weighted = 0;
  for (const LayerCost& c : costs)
    weighted += c.params > 0 ? 1 : 0;
  const std::string conv1 = std::to_string(costs[1].fwd_flops);
  struct Missing {
    const char* name;
    const char* sql;       ///< run on a copy of the tiny database
    std::string expected;  ///< in the message
  };
  const Missing cases[] = {
      {"a deleted step sample", "DELETE FROM samples WHERE rowid = 5",
       "table 'samples' has 0 of step 5 in k 8 iteration 0, but 1 of step 1 (every step runs "
       "once per pass)"},
      {"the first step's sample deleted", "DELETE FROM samples WHERE rowid = 1",
       "table 'samples' has 0 of step 1 in k 8 iteration 0, but every step runs at least once"},
      {"a step sampled twice",
       "INSERT INTO samples SELECT k, iteration, step, layer, direction, flops, start_ns + 1, "
       "time_ns, 0, ready_ns, copy_overlap_ns FROM samples WHERE rowid = 3",
       "table 'samples' has 2 of step 3 in k 8 iteration 0, but 1 of step 1"},
      {"a sample's FLOPs that are not its layer's on k samples",
       "UPDATE samples SET flops = flops + 1 WHERE rowid = 1",
       "table 'samples': step 1 of k 8 iteration 0 has flops " +
           std::to_string(8 * costs[1].fwd_flops + 1) + ", but 8 samples of it take " +
           std::to_string(8 * costs[1].fwd_flops)},
      {"one layer's update deleted",
       "DELETE FROM samples WHERE rowid = (SELECT min(rowid) FROM samples WHERE direction = "
       "'update')",
       "table 'samples' has updates of " + std::to_string(weighted - 1) +
           " layers in k 8 iteration 0, but " + std::to_string(weighted) + " layers have weights"},
      {"an update's FLOPs that are not its weights'",
       "UPDATE samples SET flops = 1 WHERE rowid = (SELECT min(rowid) FROM samples WHERE "
       "direction = 'update')",
       "has flops 1, but"},
      {"a sample's stall that is not the iteration's",
       "UPDATE samples SET stall_ns = 11 WHERE rowid = 1",
       "table 'iterations': k 8 iteration 0 has stall_ns 10, but its samples' stalls add up to "
       "11"},
      {"a deleted offload", "DELETE FROM transfers WHERE rowid = 2",
       "table 'iterations': k 8 iteration 0 has offload_bytes 4096, but its offload transfers "
       "move 0 bytes"},
      {"a deleted load", "DELETE FROM transfers WHERE kind = 'load' AND iteration = 1",
       "k 8 iteration 1 has load_bytes 512, but its load transfers move 0 bytes"},
      {"the pool samples of a k's first iteration deleted",
       "DELETE FROM memory WHERE iteration = 0",
       "table 'memory' has no row of k 8 iteration 0 (the first iteration of each k records the "
       "pool)"},
      {"a whole iteration deleted",
       "DELETE FROM samples WHERE iteration = 0; DELETE FROM transfers WHERE iteration = 0; "
       "DELETE FROM memory WHERE iteration = 0; DELETE FROM iterations WHERE iteration = 0",
       "table 'iterations' has k 8 iteration 1 but no iteration 0 (each k's iterations are "
       "numbered 0, 1, 2, ... as recorded)"},
      {"a complete run without a k's batches row", "DELETE FROM batches",
       "table 'batches' has no row of k 8, whose iterations table 'iterations' records (a "
       "complete run has one per k)"},
      {"a batches row of a k never recorded",
       "INSERT INTO batches SELECT 4, policy, warmup, predicted_peak, measured_peak, reuse_delay, "
       "hoisted_prefetches, dispatch_ns FROM batches",
       "table 'batches' has k 4, but table 'iterations' records no iteration of it"},
      {"a measured peak above the pool's size",
       "UPDATE batches SET measured_peak = 67108865 WHERE k = 8",
       "table 'batches' row 8: measured_peak is 67108865, above the run's budget (meta 'budget' "
       "67108864), which is its pool's size"},
      {"a budget of 0 under a pool that peaked above it",
       "UPDATE meta SET value = '0' WHERE key = 'budget'",
       "table 'batches' row 8: measured_peak is 2000, above the run's budget (meta 'budget' 0)"},
      {"a recorded plan's k column edited", "UPDATE plans SET k = 99",
       "table 'plans' row 1: k is 99, but its plan (column 'json') says 48"},
      {"a recorded plan's predicted time column edited",
       "UPDATE plans SET predicted_iter_ns = predicted_iter_ns * 2",
       "table 'plans' row 1: predicted_iter_ns is 246912, but its plan (column 'json') says "
       "123456"},
      {"a recorded plan of another network",
       "UPDATE plans SET json = json_replace(json, '$.network.structure_hash', "
       "'deadbeefdeadbeef')",
       "table 'plans' row 1: its plan is for structure deadbeefdeadbeef, but the run's network "
       "(table 'network') has structure "},
      {"a step's FLOPs per sample that are not its layer's",
       "UPDATE steps SET flops_per_sample = 7 WHERE step = 1",
       "table 'steps' row 1: flops_per_sample is 7, but layer 'conv1' fwd takes " + conv1 +
           " per sample"},
  };
  const std::string original = tinyDb();
  ASSERT_EQ(loadError(original), "");
  int n = 0;
  for (const Missing& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = file("missing-" + std::to_string(n++) + ".swapdb");
    fs::copy_file(original, path);
    execSql(path, c.sql);
    const std::string message = loadError(path);
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
  }
}

// What a run records without fault is not damage: no update samples where one multi-tensor
// update ran them all, and no batches row of the k a run stopped within.
TEST_F(RunDbDamage, WhatARunLeavesOutByDesignIsNotDamage) {
  const std::string noUpdates = tinyDb("no-updates.swapdb");
  execSql(noUpdates, "DELETE FROM samples WHERE direction = 'update'");
  EXPECT_EQ(loadError(noUpdates), "");
  // A run writes a k's row once its iterations at k end, interrupted or not; one that failed
  // (or was killed) within a k has none of it.
  const std::string failed = tinyDb("failed.swapdb");
  execSql(failed, "DELETE FROM batches; UPDATE meta SET value = 'failed' WHERE key = 'status'");
  EXPECT_EQ(loadError(failed), "");
}

// A sub-batched minibatch runs every step once per pass, each pass's row with its own stall; in
// files written before that rule every pass's row of a step held the step's stall summed over
// the passes. Both read; a pass's row missing does not.
TEST_F(RunDbDamage, ASubBatchedIterationIsWholeWithARowPerPassInEitherStallLayout) {
  IterationRows rows = wholeIteration(8, 0, 0, 10, 2);
  const std::string now = tinySwapAllRun("passes.swapdb", rows);
  EXPECT_EQ(loadError(now), "");
  EXPECT_EQ(RunReader(now).load().samples.size(), rows.samples.size());
  // The earlier layout: the step's 10 ns of stall on both passes' rows.
  IterationRows summed = rows;
  for (SampleRow& x : summed.samples)
    if (x.step == 1) x.stall_ns = 10;
  EXPECT_EQ(loadError(tinySwapAllRun("summed.swapdb", summed)), "");
  // Neither layout: stalls that differ between the passes and do not add up.
  IterationRows neither = summed;
  neither.samples[0].stall_ns = 7;
  EXPECT_NE(loadError(tinySwapAllRun("neither.swapdb", neither))
                .find("k 8 iteration 0 has stall_ns 10, but its samples' stalls add up to 17"),
            std::string::npos);
  // A pass's row of a step deleted.
  const std::string missing = tinySwapAllRun("missing.swapdb", rows);
  execSql(missing.c_str(),
          "DELETE FROM samples WHERE step = 5 AND rowid = (SELECT max(rowid) "
          "FROM samples WHERE step = 5)");
  EXPECT_NE(loadError(missing).find(
                "table 'samples' has 1 of step 5 in k 8 iteration 0, but 2 of step 1"),
            std::string::npos)
      << loadError(missing);
  // A pass's FLOPs are k / passes samples' (4 of the 8).
  const auto costs = computeLayerCosts(testing::tinyNetwork());
  const std::string flops = tinySwapAllRun("flops.swapdb", rows);
  execSql(flops.c_str(), "UPDATE samples SET flops = flops * 2 WHERE step = 2");
  EXPECT_NE(loadError(flops).find(
                "step 2 of k 8 iteration 0 has flops " + std::to_string(8 * costs[2].fwd_flops) +
                ", but 4 samples of it take " + std::to_string(4 * costs[2].fwd_flops)),
            std::string::npos)
      << loadError(flops);
}

// A stall is the compute stream's idle time before a step, measured from the later of its
// iteration's start and the end of the task before it, on the clock that times both: it never
// reaches past the iteration's start. An iteration whose samples were shifted before its start
// (or whose start was moved after them) is damage, named by table, row and values; `trace` drew
// its stall before the run began, at a negative timestamp. A step timed before its iteration's
// start without a stall is not (a GPU's events are tied to the host clock by a calibration).
TEST_F(RunDbDamage, AStallReachingPastItsIterationsStartIsRefusedNamingTheRow) {
  struct Case {
    const char* name;
    const char* sql;       ///< run on a copy of the tiny database
    std::string expected;  ///< in the message; "" accepted
  };
  const Case cases[] = {
      {"the iteration's start moved after its first step's stall began",
       "UPDATE iterations SET start_ns = 5 WHERE iteration = 0",
       "table 'samples': step 1 of k 8 iteration 0 has stall_ns 10, but it starts 6 ns after its "
       "iteration's start (start_ns 11; table 'iterations' has 5): a stall is the compute "
       "stream's idle time before the step, within its iteration"},
      {"the samples shifted to the iteration's start",
       "UPDATE samples SET start_ns = start_ns - 11 WHERE iteration = 0",
       "table 'samples': step 1 of k 8 iteration 0 has stall_ns 10, but it starts at its "
       "iteration's start "
       "(start_ns 0; table 'iterations' has 0)"},
      {"the samples shifted before the iteration",
       "UPDATE samples SET start_ns = start_ns - 20 WHERE iteration = 1",
       "table 'samples': step 1 of k 8 iteration 1 has stall_ns 10, but it starts 9 ns before "
       "its iteration's "
       "start (start_ns 991; table 'iterations' has 1000)"},
      {"a step timed before its iteration's start, without a stall",
       "UPDATE iterations SET start_ns = 1050, stall_ns = 0 WHERE iteration = 1; "
       "UPDATE samples SET stall_ns = 0 WHERE iteration = 1",
       ""},
      {"as recorded: each stall after its iteration's start", "", ""},
  };
  const std::string original = tinyDb();
  int n = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = file("stall-" + std::to_string(n++) + ".swapdb");
    fs::copy_file(original, path);
    if (*c.sql) execSql(path, c.sql);
    const std::string message = loadError(path);
    if (c.expected.empty()) {
      EXPECT_EQ(message, "");
    } else {
      EXPECT_NE(message.find("'" + path + "' is damaged: " + c.expected), std::string::npos)
          << message;
    }
  }

  // A sub-batched iteration: each pass's row holds its own stall, within the iteration. In the
  // layout of files written before that, every pass's row of a step holds the step's stall
  // summed over the passes, which lies before the step's last pass only: that file reads, and
  // its trace cuts the sum laid before the first pass at the iteration's start.
  IterationRows own = wholeIteration(8, 0, 0, 30, 2);
  own.samples[0].start_ns = 5;  // the first pass's step 1 starts 5 ns in, with a stall of 30
  const std::string ownPath = tinySwapAllRun("own.swapdb", own);
  EXPECT_NE(loadError(ownPath).find("table 'samples': step 1 (pass 1 of 2) of k 8 iteration 0 "
                                    "has stall_ns 30, but it starts 5 ns after its iteration's "
                                    "start"),
            std::string::npos)
      << loadError(ownPath);
  IterationRows summed = own;
  for (SampleRow& x : summed.samples)
    if (x.step == 1) x.stall_ns = 30;  // the step's 30 ns, on both passes' rows
  summed.iteration.stall_ns = 30;
  const std::string summedPath = tinySwapAllRun("summed.swapdb", summed);
  ASSERT_EQ(loadError(summedPath), "");
  const RunData run = RunReader(summedPath).load();
  const auto trace = chromeTrace(run, 8, 0);
  double stall = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (!e.contains("ts")) continue;
    EXPECT_GE(e["ts"].get<double>(), 0.0) << e.dump();
    if (e["name"] == "stall") stall += e["dur"].get<double>();
  }
  EXPECT_DOUBLE_EQ(stall, 0.035);  // 5 ns cut before the first pass, 30 before the second
  // The last pass's row bounds the sum: past it, the file is damaged.
  IterationRows past = summed;
  for (SampleRow& x : past.samples)
    if (x.step == 1 && x.start_ns > 5) x.start_ns = 25;
  const std::string pastPath = tinySwapAllRun("past.swapdb", past);
  EXPECT_NE(loadError(pastPath).find("step 1 (pass 2 of 2) of k 8 iteration 0 has stall_ns 30, "
                                     "but it starts 25 ns after its iteration's start"),
            std::string::npos)
      << loadError(pastPath);
}

// The edit that moved `plan`'s minibatch without a word: one step sample of one iteration of
// the resnet56 sample run deleted.
TEST_F(RunDbDamage, ASampleRunWithOneStepSampleDeletedIsDamaged) {
  const std::string path = copySample("resnet56-32x32-cpu-profile.swapdb");
  execSql(path, "DELETE FROM samples WHERE k = 32 AND iteration = 2 AND step = 7");
  const std::string message = loadError(path);
  EXPECT_NE(message.find("table 'samples' has 0 of step 7 in k 32 iteration 2, but 1 of step 1"),
            std::string::npos)
      << message;
}

TEST_F(RunDbDamage, AHugeWrongValueIsQuotedBounded) {
  const std::string path = tinyDb();
  loosen(path, "memory");
  execSql(path, "UPDATE memory SET time_ns = 'start' || printf('%.*c', 1000000, 'x') || 'end'");
  const std::string message = loadError(path);
  EXPECT_NE(message.find("time_ns holds text 'startxxx"), std::string::npos) << message;
  EXPECT_NE(message.find("(1000008 bytes)"), std::string::npos) << message;
  EXPECT_LT(message.size(), 400u) << message;
}

// Every pool aligns and pads to a power of two of bytes: meta 'pool_alignment', 'pool_padding'
// and 'workspace_padding' of anything else are damage, refused by the reader that every verb
// reads through (`info` and `trace` as `plan` and `compare`), never read as a size.
TEST_F(RunDbDamage, APoolAlignmentOrPaddingThatIsNoPowerOfTwoIsRefusedOnRead) {
  const std::string original = tinyDb();
  int n = 0;
  for (const std::string key : {"pool_alignment", "pool_padding", "workspace_padding"}) {
    for (const std::string bad : {"0", "-64", "3", "96", "256abc", " 64", "+64", "", "2147483648",
                                  "1e3", "99999999999999999999999", "\x1b[2J"}) {
      SCOPED_TRACE(key + " '" + bad + "'");
      const std::string path = file("pool-" + std::to_string(n++) + ".swapdb");
      fs::copy_file(original, path);
      sqlite3* h = nullptr;
      ASSERT_EQ(sqlite3_open(path.c_str(), &h), SQLITE_OK);
      sqlite3_stmt* st = nullptr;
      ASSERT_EQ(sqlite3_prepare_v2(h, "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)", -1,
                                   &st, nullptr),
                SQLITE_OK);
      sqlite3_bind_text(st, 1, key.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(st, 2, bad.c_str(), -1, SQLITE_TRANSIENT);
      EXPECT_EQ(sqlite3_step(st), SQLITE_DONE);
      sqlite3_finalize(st);
      sqlite3_close(h);
      const std::string message = loadError(path);
      EXPECT_NE(message.find("'" + path + "' is damaged: meta '" + key + "' is '"),
                std::string::npos)
          << message;
      EXPECT_NE(message.find(", not a power of two of bytes up to 1 GiB"), std::string::npos)
          << message;
      EXPECT_EQ(message.find('\x1b'), std::string::npos) << message;  // escaped, as \x1b
      // meta() alone (the app's run job reads it) refuses it too.
      EXPECT_THROW(RunReader(path).meta(), Error);
    }
    for (const std::string good : {"1", "64", "256", "1073741824"}) {
      SCOPED_TRACE(key + " '" + good + "'");
      const std::string path = file("pool-" + std::to_string(n++) + ".swapdb");
      fs::copy_file(original, path);
      execSql(path,
              ("INSERT OR REPLACE INTO meta(key, value) VALUES ('" + key + "', '" + good + "')")
                  .c_str());
      EXPECT_EQ(loadError(path), "");
      EXPECT_EQ(RunReader(path).meta().extra.at(key), good);
    }
  }
}

// --- 11: a file cut short ------------------------------------------------------------------

TEST_F(RunDbDamage, ASampleRunCutByOneByteIsDamaged) {
  const std::string path = copySample("resnet56-32x32-cpu-profile.swapdb");
  const std::uintmax_t size = fs::file_size(path);  // whole pages
  ASSERT_EQ(size % 4096, 0u);
  fs::resize_file(path, size - 1);
  expectRefusedOnOpen(path, "is damaged: it is " + std::to_string(size - 1) +
                                " bytes long, not a whole number of 4096-byte pages: it was cut "
                                "short");
}

TEST_F(RunDbDamage, ASampleRunCutByOnePageIsDamaged) {
  const std::string path = copySample("resnet56-32x32-cpu-profile.swapdb");
  const std::uintmax_t size = fs::file_size(path);
  ASSERT_EQ(size % 4096, 0u);
  fs::resize_file(path, size - 4096);
  expectRefusedOnOpen(path, "its header counts " + std::to_string(size / 4096) +
                                " pages of 4096 bytes (" + std::to_string(size) +
                                " bytes), but it is " + std::to_string(size - 4096) +
                                " bytes long: it was cut short");
}

TEST_F(RunDbDamage, BytesAppendedToAFileAreDamage) {
  const std::string path = tinyDb();
  std::ofstream(path, std::ios::binary | std::ios::app) << "x";
  expectRefusedOnOpen(path, "not a whole number of 4096-byte pages");
}

// --- 12: the stored network ----------------------------------------------------------------

TEST_F(RunDbDamage, AnInvalidNetworkJsonIsNamedAndBounded) {
  const std::string path = tinyDb();
  execSql(path, "UPDATE network SET json = '{\"format\": \"' || printf('%.*c', 1000000, 'a')");
  const std::string message = loadError(path);
  EXPECT_NE(message.find("table 'network' row 1: json is not valid JSON"), std::string::npos)
      << message.substr(0, 1000);
  EXPECT_LT(message.size(), 400u) << message.substr(0, 1000);
  // network() alone (what `run --plan` reads) checks it too.
  EXPECT_THROW(RunReader(path).network(), Error);
}

TEST_F(RunDbDamage, DeeplyNestedMetaVersionsAreRefusedNotRecursedInto) {
  const std::string path = tinyDb();
  execSql(path,
          "UPDATE meta SET value = '{\"a\": ' || printf('%.*c', 100000, '[') || "
          "printf('%.*c', 100000, ']') || '}' WHERE key = 'versions'");
  const std::string message = loadError(path);
  EXPECT_NE(message.find("meta 'versions' is"), std::string::npos) << message.substr(0, 500);
  EXPECT_LT(message.size(), 400u) << message.substr(0, 500);
}

TEST_F(RunDbDamage, ARecordedPlanThatIsNoPlanIsNamed) {
  const std::string path = tinyDb();
  // What `compare` reads as the run's predictions: t_iter_s must be a number.
  ASSERT_NO_THROW(RunReader(path).load());
  execSql(path,
          "UPDATE plans SET json = json_set(json, '$.predictions.t_iter_s', json('[1]')) "
          "WHERE id = 1");
  const std::string message = loadError(path);
  EXPECT_NE(message.find("is damaged: table 'plans' row 1: "), std::string::npos) << message;
}

TEST_F(RunDbDamage, ANetworkJsonThatIsNoNetworkIsNamed) {
  const std::string path = tinyDb();
  execSql(path, "UPDATE network SET json = '{\"format\": \"something else\"}'");
  const std::string message = loadError(path);
  EXPECT_NE(message.find(path + " (network): field 'format'"), std::string::npos) << message;
}

TEST_F(RunDbDamage, ANetworkThatDoesNotMatchItsHashOrLayersIsNamed) {
  const std::string hash = tinyDb("hash.swapdb");
  execSql(hash, "UPDATE network SET structure_hash = 'feedface'");
  EXPECT_NE(loadError(hash).find("not the stored structure_hash 'feedface'"), std::string::npos);

  const std::string layers = tinyDb("layers.swapdb");
  execSql(layers, "UPDATE layers SET name = 'other' WHERE id = 2");
  EXPECT_NE(loadError(layers).find("table 'layers' row 2: name is 'other', but layer 2 of the "
                                   "stored network is 'bn1'"),
            std::string::npos);
}

TEST_F(RunDbDamage, ALayerColumnThatIsNotTheStoredNetworksIsNamed) {
  // The FLOPs, parameters, FM bytes, kind, inputs and shape of a layer are its network's: an
  // edited one would move the fits (and the plans) while the network's hash still matched.
  struct Edit {
    const char* sql;
    const char* expected;
  };
  const Edit edits[] = {
      {"UPDATE layers SET fwd_flops = fwd_flops * 1000 WHERE id = 1",
       "table 'layers' row 1: fwd_flops is "},
      {"UPDATE layers SET fm_per_sample = fm_per_sample / 100 WHERE id = 2",
       "table 'layers' row 2: fm_per_sample is "},
      {"UPDATE layers SET params = params + 1 WHERE id = 1", "table 'layers' row 1: params is "},
      {"UPDATE layers SET bwd_data_flops = bwd_data_flops + 1 WHERE id = 2",
       "table 'layers' row 2: bwd_data_flops is "},
      {"UPDATE layers SET kind = 'relu' WHERE id = 1", "table 'layers' row 1: kind is 'relu'"},
      {"UPDATE layers SET out_shape = '[1, 2, 3]' WHERE id = 1",
       "table 'layers' row 1: out_shape is not the stored network's shape"},
      {"UPDATE layers SET inputs = '[0]' WHERE id = 2",
       "table 'layers' row 2: inputs is not the stored network's inputs"},
  };
  int n = 0;
  for (const Edit& e : edits) {
    SCOPED_TRACE(e.sql);
    const std::string path = tinyDb("edit-" + std::to_string(n++) + ".swapdb");
    execSql(path, e.sql);
    const std::string message = loadError(path);
    EXPECT_NE(message.find(e.expected), std::string::npos) << message;
    EXPECT_NE(message.find("of the stored network gives another value"), std::string::npos)
        << message;
  }
  // Untouched, it loads.
  EXPECT_NO_THROW(RunReader(tinyDb("untouched.swapdb")).load());
}

// --- 13: read-only storage, and a reader holding the file as the run finishes --------------

/// Runs `body` in a child process as an unprivileged user when this process is root (root
/// ignores file permissions, so a read-only directory would not be read-only to it), with
/// TMPDIR set to `tmp`; the child exits 0 when `body` returns.
template <typename Body>
void asUnprivilegedUser(const std::string& tmp, Body body) {
  if (geteuid() == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) {
      std::fprintf(stderr, "cannot drop root\n");
      std::_Exit(3);
    }
  }
  setenv("TMPDIR", tmp.c_str(), 1);
  body();
  std::fflush(stderr);
  std::_Exit(0);
}

/// Writes a run with two iterations and leaves it as a killed writer does (status running,
/// the iterations in the -wal) while the returned writer lives.
std::unique_ptr<RunWriter> startRun(const std::string& path) {
  RunMeta meta;
  meta.kind = "profile";
  meta.budget = 64 << 20;
  const Network net = testing::tinyNetwork();
  const auto costs = computeLayerCosts(net);
  const MemoryPlan plan = planMemory(net, costs, makeSwapSet(Policy::SwapAll, net, costs));
  auto writer = std::make_unique<RunWriter>(path, meta);
  writer->writeNetwork(net, costs, plan.gmap);
  writer->addBatch({8, "swap-all", 1, 2000, 2000, 0, 0});
  for (int it = 0; it < 2; ++it)
    writer->addIteration(wholeIteration(8, it, 1000 * it));
  return writer;
}

/// A read-only directory holding copies of `files` (read-only too).
std::string readOnlyCopy(const fs::path& dir, const std::vector<std::string>& files) {
  fs::create_directories(dir);
  for (const std::string& f : files) {
    const fs::path to = dir / fs::path(f).filename();
    fs::copy_file(f, to);
    fs::permissions(to, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  }
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                           fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  return (dir / fs::path(files.front()).filename()).string();
}

class RunDbReadOnly : public RunDbDamage {
 protected:
  void SetUp() override {
    RunDbDamage::SetUp();
    fs::permissions(m_dir, fs::perms::all);  // the unprivileged child reads from it
    m_tmp = file("tmp");
    fs::create_directories(m_tmp);
    fs::permissions(m_tmp, fs::perms::all);
  }
  void TearDown() override {
    for (const auto& e : fs::recursive_directory_iterator(m_dir)) {
      std::error_code ec;
      if (e.is_directory(ec)) fs::permissions(e.path(), fs::perms::all, ec);
    }
    RunDbDamage::TearDown();
  }
  std::string m_tmp;
};

TEST_F(RunDbReadOnly, AKilledRunWithItsWalInAReadOnlyDirectoryIsReadInFull) {
  const std::string live = file("killed.swapdb");
  const auto writer = startRun(live);
  ASSERT_GT(fs::file_size(live + "-wal"), 0u);  // the iterations are in the -wal
  // Copied without its -shm, which SQLite cannot create in a read-only directory.
  const std::string path = readOnlyCopy(m_dir / "ro", {live, live + "-wal"});
  EXPECT_EXIT(asUnprivilegedUser(m_tmp,
                                 [&] {
                                   RunReader r(path);
                                   const RunData d = r.load();
                                   std::fprintf(stderr, "iterations %zu samples %zu\n",
                                                d.iterations.size(), d.samples.size());
                                 }),
              ::testing::ExitedWithCode(0),
              "iterations 2 samples " + std::to_string(2 * wholeIteration(8, 0, 0).samples.size()));
  // The private copy it read through is gone.
  EXPECT_TRUE(fs::is_empty(m_tmp));
  EXPECT_FALSE(fs::exists(m_dir / "ro" / "killed.swapdb-shm"));
}

TEST_F(RunDbReadOnly, AWalModeFileWithoutItsWalInAReadOnlyDirectoryIsRead) {
  const std::string live = file("killed.swapdb");
  const auto writer = startRun(live);
  execSql(live, "PRAGMA wal_checkpoint(TRUNCATE)");  // everything in the main file
  const std::string path = readOnlyCopy(m_dir / "ro", {live});
  EXPECT_EXIT(asUnprivilegedUser(m_tmp,
                                 [&] {
                                   const RunData d = RunReader(path).load();
                                   std::fprintf(stderr, "iterations %zu\n", d.iterations.size());
                                 }),
              ::testing::ExitedWithCode(0), "iterations 2");
}

/// The names in `dir`, sorted.
std::vector<std::string> namesIn(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// Sets TMPDIR (where a reader makes its private copies) for the test's life.
class TmpDirFor {
 public:
  explicit TmpDirFor(const std::string& dir) {
    if (const char* v = std::getenv("TMPDIR")) m_old = v;
    setenv("TMPDIR", dir.c_str(), 1);
  }
  ~TmpDirFor() {
    if (m_old) {
      setenv("TMPDIR", m_old->c_str(), 1);
    } else {
      unsetenv("TMPDIR");
    }
  }
  TmpDirFor(const TmpDirFor&) = delete;
  TmpDirFor& operator=(const TmpDirFor&) = delete;

 private:
  std::optional<std::string> m_old;
};

// A reader never creates files beside the user's database, in a folder it could write to too:
// SQLite would create the -wal and -shm of a WAL-mode file copied without them, and a read-only
// connection cannot remove them again.
TEST_F(RunDbDamage, AWalModeFileCopiedWithoutItsWalIsReadAndNothingIsCreatedBesideIt) {
  const std::string live = file("live.swapdb");
  const auto writer = startRun(live);
  execSql(live, "PRAGMA wal_checkpoint(TRUNCATE)");  // everything in the main file
  const fs::path copies = m_dir / "copies";
  fs::create_directories(copies);
  const std::string path = (copies / "copied.swapdb").string();
  fs::copy_file(live, path);
  const std::string bytes = readBytes(path);
  {
    RunReader reader(path);
    EXPECT_EQ(reader.load().iterations.size(), 2u);
    EXPECT_EQ(namesIn(copies), std::vector<std::string>{"copied.swapdb"});  // while open too
  }
  EXPECT_EQ(namesIn(copies), std::vector<std::string>{"copied.swapdb"});
  EXPECT_EQ(readBytes(path), bytes);
}

// Copied with its -wal but not its -shm (the -wal holds committed iterations the main file does
// not): every row is read, through a private copy that is gone after, and nothing is created
// beside the file.
TEST_F(RunDbDamage, AWalModeFileCopiedWithItsWalIsReadInFullAndNothingIsCreatedBesideIt) {
  const std::string live = file("killed.swapdb");
  const auto writer = startRun(live);
  ASSERT_GT(fs::file_size(live + "-wal"), 0u);  // the iterations are in the -wal
  const fs::path copies = m_dir / "copies";
  const fs::path tmp = m_dir / "tmp";
  fs::create_directories(copies);
  fs::create_directories(tmp);
  const std::string path = (copies / "killed.swapdb").string();
  fs::copy_file(live, path);
  fs::copy_file(live + "-wal", path + "-wal");
  const std::string bytes = readBytes(path), wal = readBytes(path + "-wal");
  const std::vector<std::string> both{"killed.swapdb", "killed.swapdb-wal"};
  const TmpDirFor tmpDir(tmp.string());
  {
    RunReader reader(path);
    const RunData d = reader.load();
    EXPECT_EQ(d.iterations.size(), 2u);
    EXPECT_EQ(d.samples.size(), 2 * wholeIteration(8, 0, 0).samples.size());
    EXPECT_EQ(namesIn(copies), both);
  }
  EXPECT_EQ(namesIn(copies), both);
  EXPECT_EQ(readBytes(path), bytes);
  EXPECT_EQ(readBytes(path + "-wal"), wal);
  EXPECT_TRUE(fs::is_empty(tmp));  // the private copy went with the reader
}

// With its -wal and -shm beside it (a live run), the file is read in place: what the writer
// commits after the reader opened it is seen by the next read, and nothing else is created.
TEST_F(RunDbDamage, ALiveRunsFileIsReadInPlaceThroughItsWalAndShm) {
  const std::string live = file("live.swapdb");
  const auto writer = startRun(live);
  ASSERT_TRUE(fs::exists(live + "-shm"));
  const std::vector<std::string> names = namesIn(m_dir);
  RunReader reader(live);
  EXPECT_EQ(reader.counts().iterations, 2);
  writer->addIteration(wholeIteration(8, 2, 2000));
  EXPECT_EQ(reader.counts().iterations, 3);
  EXPECT_EQ(namesIn(m_dir), names);
}

TEST_F(RunDbReadOnly, AnUnreadableFileSaysWhy) {
  const std::string path = tinyDb();
  fs::permissions(path, fs::perms::none);
  EXPECT_EXIT(asUnprivilegedUser(m_tmp,
                                 [&] {
                                   try {
                                     RunReader r(path);
                                   } catch (const Error& e) {
                                     std::fprintf(stderr, "%s\n", e.what());
                                   }
                                 }),
              ::testing::ExitedWithCode(0), "cannot open '.*': Permission denied");
}

TEST_F(RunDbDamage, CreatingInAMissingDirectorySaysWhy) {
  const std::string path = file("no/such/dir/run.swapdb");
  try {
    RunWriter w(path, RunMeta{});
    FAIL() << "created " << path;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    EXPECT_NE(
        std::string(e.what()).find("the directory '" + file("no/such/dir") + "' does not exist"),
        std::string::npos)
        << e.what();
  }
}

TEST_F(RunDbDamage, FinishingWhileAReaderHoldsTheFileKeepsWalAndSucceeds) {
  const std::string path = file("held.swapdb");
  const auto writer = startRun(path);
  {
    RunReader reader(path);  // holds the file open, as the app or a slow `info` does
    EXPECT_EQ(reader.counts().iterations, 2);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_NO_THROW(writer->finish(RunStatus::Complete));
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4));
    EXPECT_TRUE(fs::exists(path + "-wal"));  // still in WAL mode
    const RunData d = RunReader(path).load();
    EXPECT_EQ(d.meta.status, RunStatus::Complete);
    EXPECT_EQ(d.iterations.size(), 2u);
  }
  const RunData d = RunReader(path).load();
  EXPECT_EQ(d.meta.status, RunStatus::Complete);
  EXPECT_EQ(d.samples.size(), 2 * wholeIteration(8, 0, 0).samples.size());
}

// --- 3: a live writer's file is not replaced -----------------------------------------------

TEST_F(RunDbDamage, ALiveWritersFileIsNotReplaced) {
  const std::string path = file("live.swapdb");
  const auto writer = startRun(path);
  const auto w = liveWriter(path);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->pid, getpid());
  EXPECT_EQ(w->kind, "profile");
  EXPECT_FALSE(w->started.empty());
  try {
    RunWriter again(path, RunMeta{}, /*overwrite=*/true);
    FAIL() << "a live writer's file was replaced";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("still being written by a running swapscope profile "
                                         "(pid " +
                                         std::to_string(getpid())),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(", started " + w->started), std::string::npos) << e.what();
  }
  EXPECT_EQ(RunReader(path).counts().iterations, 2);  // untouched
  writer->finish(RunStatus::Complete);
  EXPECT_FALSE(liveWriter(path).has_value());
  RunWriter replaced(path, RunMeta{}, /*overwrite=*/true);
  replaced.finish(RunStatus::Complete);
  EXPECT_EQ(RunReader(path).counts().iterations, 0);
}

TEST_F(RunDbDamage, AReusedPidIsNotTheWriter) {
  const std::string path = tinyDb();
  // A file whose writer pid is this live process, but recorded with another start time: the
  // pid was reused, the writer is gone.
  execSql(path, ("UPDATE meta SET value = 'running' WHERE key = 'status';"
                 "UPDATE meta SET value = '" +
                 std::to_string(getpid()) +
                 "' WHERE key = 'writer_pid';"
                 "UPDATE meta SET value = 'another-boot/12345' WHERE key = 'writer_start';")
                    .c_str());
  EXPECT_FALSE(liveWriter(path).has_value());
  EXPECT_EQ(RunReader(path).meta().status, RunStatus::Incomplete);
}

}  // namespace
}  // namespace swapscope::store
