// SPDX-License-Identifier: MIT
// The run database: a round trip of every table, the run status, and every kind of bad file.
#include "store/run_db.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <random>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>

#include "store/run_db_fixture.h"
#include "store/schema.h"

namespace swapscope::store {
namespace {

TEST_F(RunDbTest, EveryTableRoundTrips) {
  const std::string path = file("run.swapdb");
  const RunData written = writeSample(path);
  RunReader r(path);
  EXPECT_EQ(r.schemaVersion(), kSchemaVersion);
  const RunData read = r.load();
  // The loaded rows are the tables' (what `info` counts from the snapshot it loaded).
  const RowCounts stored = r.counts(), loaded = read.counts();
  EXPECT_EQ(std::tie(loaded.layers, loaded.steps, loaded.tensors, loaded.batches, loaded.iterations,
                     loaded.samples, loaded.transfers, loaded.memory, loaded.fits, loaded.plans,
                     loaded.recomputes),
            std::tie(stored.layers, stored.steps, stored.tensors, stored.batches, stored.iterations,
                     stored.samples, stored.transfers, stored.memory, stored.fits, stored.plans,
                     stored.recomputes));
  EXPECT_GT(stored.samples, 0);

  EXPECT_EQ(read.meta.kind, written.meta.kind);
  EXPECT_EQ(read.meta.backend, "cpu");
  EXPECT_EQ(read.meta.device, written.meta.device);
  EXPECT_EQ(read.meta.device_memory, 123456789);
  EXPECT_EQ(read.meta.versions, written.meta.versions);
  EXPECT_EQ(read.meta.command_line, written.meta.command_line);
  EXPECT_EQ(read.meta.started_utc, written.meta.started_utc);
  EXPECT_EQ(read.meta.budget, written.meta.budget);
  EXPECT_EQ(read.meta.policy, "swap-all");
  EXPECT_EQ(read.meta.host_cpu, written.meta.host_cpu);
  EXPECT_EQ(read.meta.extra, written.meta.extra);
  EXPECT_EQ(read.meta.status, RunStatus::Complete);
  EXPECT_EQ(read.meta.writer_pid, getpid());

  EXPECT_EQ(read.network.name, "tiny");
  EXPECT_EQ(read.network.structure_hash, written.network.structure_hash);
  // The stored network JSON rebuilds the same network.
  EXPECT_EQ(networkFromJson(nlohmann::ordered_json::parse(read.network.json)).structureHash(),
            written.network.structure_hash);
  EXPECT_EQ(read.layers, written.layers);

  const Network net = testing::tinyNetwork();
  const int n = net.size() - 1;  // every layer but the input has a step each way
  ASSERT_EQ(read.steps.size(), static_cast<std::size_t>(2 * n));
  EXPECT_EQ(read.steps.front().direction, Direction::Forward);
  EXPECT_EQ(read.steps.back().direction, Direction::Backward);
  EXPECT_EQ(read.steps.front().layer, 1);  // conv1 forward
  EXPECT_EQ(read.steps.back().layer, 1);   // conv1 backward, last
  EXPECT_EQ(read.steps.front().flops_per_sample, read.layers[1].fwd_flops);
  EXPECT_GT(read.tensors.size(), 10u);
  EXPECT_EQ(read.tensors.front().id, 0);

  EXPECT_EQ(read.batches, written.batches);
  EXPECT_EQ(read.iterations, written.iterations);
  EXPECT_EQ(read.samples, written.samples);
  EXPECT_EQ(read.transfers, written.transfers);
  EXPECT_EQ(read.memory, written.memory);
  EXPECT_EQ(read.fits, written.fits);
  EXPECT_EQ(read.plans, written.plans);

  const RowCounts c = r.counts();
  // Each iteration whole: a sample of every step and the update of every layer with weights.
  int weighted = 0;
  for (const LayerRow& l : read.layers)
    weighted += l.params > 0 ? 1 : 0;
  EXPECT_GT(weighted, 0);
  EXPECT_EQ(c.samples, 2 * (2 * n + weighted));
  EXPECT_EQ(c.transfers, 4);
  EXPECT_EQ(c.memory, 4);
  EXPECT_EQ(c.iterations, 2);
  EXPECT_EQ(c.fits, 1);
  EXPECT_EQ(c.plans, 1);
  EXPECT_EQ(c.layers, net.size());
}

// The fits table names a fit's scope, direction and form in text (docs/run-database.md): the
// writer stores each value by its name, and the reader takes every name back to its value.
TEST_F(RunDbTest, AFitsScopeDirectionAndFormAreStoredByName) {
  const std::string path = file("run.swapdb");
  writeSample(path);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  std::string stored;
  sqlite3_exec(
      db, "SELECT scope || ' ' || direction || ' ' || form FROM fits",
      [](void* out, int, char** values, char**) {
        *static_cast<std::string*>(out) = values[0];
        return 0;
      },
      &stored, nullptr);
  sqlite3_close(db);
  EXPECT_EQ(stored, "type fwd affine");  // the sample's fit: Type, Forward, Affine

  // One row per name, in each enumeration's order (the forms "mean" and "median": the hand-off
  // of files profiled before "mean-of-step-medians"); a shorter list repeats its last name.
  const std::vector<std::string> scopes{"type", "layer", "pcie", "dispatch", "contention"};
  const std::vector<std::string> directions{"fwd", "bwd", "update", "h2d", "d2h", "-"};
  const std::vector<std::string> forms{
      "affine",       "saturating", "loglog", "mean-of-step-medians",
      "proportional", "line",       "mean",   "median"};
  const auto nth = [](const std::vector<std::string>& names, std::size_t i) {
    return names[std::min(i, names.size() - 1)];
  };
  std::string sql = "DELETE FROM fits;";
  for (std::size_t i = 0; i < forms.size(); ++i) {
    sql +=
        "INSERT INTO fits(scope, target, direction, form, params, points, rmse, "
        "max_rel_error, chosen) VALUES ('" +
        nth(scopes, i) + "', 't', '" + nth(directions, i) + "', '" + forms[i] +
        "', '{}', 1, 0, 0, 1);";
  }
  execSql(path, sql.c_str());
  const RunData read = RunReader(path).load();
  ASSERT_EQ(read.fits.size(), forms.size());
  for (std::size_t i = 0; i < forms.size(); ++i) {
    SCOPED_TRACE(i);
    const FitRow& f = read.fits[i];
    EXPECT_EQ(f.scope, static_cast<FitScope>(std::min(i, scopes.size() - 1)));
    EXPECT_EQ(f.direction, static_cast<FitDirection>(std::min(i, directions.size() - 1)));
    EXPECT_EQ(f.form, static_cast<FitRowForm>(i));
    EXPECT_EQ(fitScopeName(f.scope), nth(scopes, i));
    EXPECT_EQ(fitDirectionName(f.direction), nth(directions, i));
    EXPECT_EQ(fitRowFormName(f.form), forms[i]);
  }
  EXPECT_FALSE(fitScopeFromName("Type").has_value());  // names are exact
  EXPECT_FALSE(fitDirectionFromName("").has_value());
  EXPECT_FALSE(fitRowFormFromName("log-log").has_value());
}

TEST_F(RunDbTest, AFinishedFileIsOneFileWithTheHeaderMarks) {
  const std::string path = file("run.swapdb");
  writeSample(path);
  EXPECT_FALSE(fs::exists(path + "-wal"));  // WAL is left when the run finishes
  const std::string bytes = readBytes(path);
  ASSERT_GE(bytes.size(), 100u);
  auto be32 = [&](std::size_t at) {
    return (std::uint32_t(std::uint8_t(bytes[at])) << 24) |
           (std::uint32_t(std::uint8_t(bytes[at + 1])) << 16) |
           (std::uint32_t(std::uint8_t(bytes[at + 2])) << 8) |
           std::uint32_t(std::uint8_t(bytes[at + 3]));
  };
  EXPECT_EQ(be32(68), static_cast<std::uint32_t>(kApplicationId));  // SQLite file format
  EXPECT_EQ(be32(60), static_cast<std::uint32_t>(kSchemaVersion));
}

TEST_F(RunDbTest, ReadingNeverWritesToTheFile) {
  const std::string path = file("run.swapdb");
  writeSample(path);
  const std::string before = readBytes(path);
  const auto mtime = fs::last_write_time(path);
  {
    RunReader r(path);
    r.load();
    r.counts();
  }
  EXPECT_EQ(readBytes(path), before);
  EXPECT_EQ(fs::last_write_time(path), mtime);
  EXPECT_FALSE(fs::exists(path + "-journal"));
  EXPECT_FALSE(fs::exists(path + "-wal"));
}

TEST_F(RunDbTest, StatusFollowsTheWriter) {
  const std::string live = file("live.swapdb");
  {
    RunWriter w(live, sampleMeta());
    // This process is the writer and is alive: the run is still running.
    EXPECT_EQ(RunReader(live).meta().status, RunStatus::Running);
  }
  // Destroyed without finish(): incomplete.
  RunMeta m = RunReader(live).meta();
  EXPECT_EQ(m.status, RunStatus::Incomplete);
  EXPECT_NE(m.status_message.find("ended before it finished"), std::string::npos);

  const std::string failed = file("failed.swapdb");
  {
    RunWriter w(failed, sampleMeta());
    w.finish(RunStatus::Failed, "allocation failed at step 7");
    EXPECT_THROW(w.addMemory({{1, 0, 0, 1}}), Error);  // nothing is written after finish
  }
  m = RunReader(failed).meta();
  EXPECT_EQ(m.status, RunStatus::Failed);
  EXPECT_EQ(m.status_message, "allocation failed at step 7");
}

TEST_F(RunDbTest, AReaderOfADatabaseBeingWrittenSeesWholeIterations) {
  // A writer commits iterations (each with its samples and transfers) while a reader loads the
  // file again and again: each load is one snapshot, so no load finds a transfer or sample of
  // an iteration it does not have (RunReader refuses that as damage), and the counts it reads
  // agree with the rows it loads.
  const std::string live = file("live.swapdb");
  const Network net = testing::tinyNetwork();
  const auto costs = computeLayerCosts(net);
  const MemoryPlan plan = planMemory(net, costs, makeSwapSet(Policy::SwapAll, net, costs));
  RunWriter w(live, sampleMeta());
  w.writeNetwork(net, costs, plan.gmap);
  const std::size_t perIteration = wholeIteration(8, 0, 0).samples.size();
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int it = 0; it < 400; ++it)
      w.addIteration(wholeIteration(8, it, 1000 * it));
    w.addBatch({8, "swap-all", 1, 2000, 2000, 1, 0});  // as a run writes it: after its k's
    done = true;
  });
  std::string failure;
  do {
    try {
      RunReader reader(live);
      const RunData d = reader.load();
      EXPECT_EQ(d.samples.size(), perIteration * d.iterations.size());
      EXPECT_EQ(d.transfers.size(), d.iterations.size());
      const RowCounts c = reader.counts();
      EXPECT_EQ(c.samples, static_cast<std::int64_t>(perIteration) * c.iterations);
      EXPECT_EQ(c.transfers, c.iterations);
    } catch (const Error& e) {
      failure = e.what();
    }
  } while (!done && failure.empty());
  writer.join();
  EXPECT_EQ(failure, "");
  w.finish(RunStatus::Complete);
}

TEST_F(RunDbTest, ARunningStatusWithoutItsWriterReadsIncomplete) {
  const std::string path = file("orphan.swapdb");
  {
    RunWriter w(path, sampleMeta());
    w.finish(RunStatus::Running);
  }
  // Pretend the writer was another process that is gone: a pid that cannot exist.
  execSql(path, "UPDATE meta SET value = '2147483647' WHERE key = 'writer_pid'");
  const RunMeta m = RunReader(path).meta();
  EXPECT_EQ(m.status, RunStatus::Incomplete);
  EXPECT_NE(m.status_message.find("pid 2147483647"), std::string::npos) << m.status_message;
}

TEST_F(RunDbTest, AnExistingFileIsOnlyReplacedWhenAsked) {
  const std::string path = file("run.swapdb");
  writeSample(path);
  const std::string before = readBytes(path);
  try {
    RunWriter w(path, sampleMeta());
    FAIL() << "an existing run database was overwritten";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos);
  }
  EXPECT_EQ(readBytes(path), before);
  {
    RunWriter w(path, sampleMeta(), /*overwrite=*/true);
    w.finish(RunStatus::Complete);
  }
  EXPECT_EQ(RunReader(path).counts().iterations, 0);
}

TEST_F(RunDbTest, MissingFileAndDirectory) {
  expectRejected(file("nope.swapdb"), "no such file");
  expectRejected(m_dir.string(), "not a regular file");
}

TEST_F(RunDbTest, APathTooLongForSqliteIsNamedAsSuch) {
  // SQLite fails a full path of 512 bytes or more as if the file were missing: said so instead.
  fs::path deep = m_dir;
  for (int i = 0; i < 3; ++i)
    deep /= std::string(200, 'e');
  fs::create_directories(deep);
  const std::string path = (deep / "x.swapdb").string();
  ASSERT_GE(path.size(), 512u);
  writeSample(file("x.swapdb"));
  fs::copy_file(file("x.swapdb"), path);
  try {
    RunReader reader(path);
    ADD_FAILURE() << "opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    const std::size_t full = fs::weakly_canonical(path).string().size();
    EXPECT_NE(
        std::string(e.what()).find("': its full path (links resolved) is " + std::to_string(full) +
                                   " bytes long, and SQLite opens databases whose full "
                                   "path is at most 504 bytes"),
        std::string::npos)
        << e.what();
  }
  // At the limit it opens: 504 bytes, the -journal's 8 more making SQLite's 512.
  fs::path edge = fs::weakly_canonical(m_dir);
  const std::string prefix = edge.string();
  ASSERT_LT(prefix.size() + 2 * 201 + 10, 504u);
  edge /= std::string(200, 'f');
  edge /= std::string(200, 'g');
  fs::create_directories(edge);
  const std::size_t room = 504 - edge.string().size() - 1 - std::string(".swapdb").size();
  const std::string fits = (edge / (std::string(room, 'h') + ".swapdb")).string();
  ASSERT_EQ(fits.size(), 504u);
  fs::copy_file(file("x.swapdb"), fits);
  EXPECT_EQ(RunReader(fits).load().iterations.size(), 2u);
}

TEST_F(RunDbTest, ANameWithoutRoomForSqlitesSideFilesIsRefusedAndNothingIsLeft) {
  // A file name holds 255 bytes; SQLite's -journal beside a 248-byte name would not fit.
  const std::string name = std::string(241, 'n') + ".swapdb";
  ASSERT_EQ(name.size(), 248u);
  try {
    RunWriter w(file(name), sampleMeta());
    ADD_FAILURE() << "created";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("its file name is 248 bytes long, and SQLite's side "
                                         "files beside it (-journal, -wal) need 8 bytes more"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::is_empty(m_dir));
  // 247 bytes: written.
  writeSample(file(name.substr(1)));
  EXPECT_EQ(RunReader(file(name.substr(1))).load().iterations.size(), 2u);
}

TEST_F(RunDbTest, AHotRollbackJournalIsNamedWithWhatToDo) {
  // Another tool (in rollback-journal mode) was killed inside a write: the file's -journal is
  // hot, and a reader, which never writes, cannot roll it back. The message says so.
  const std::string path = file("journal.swapdb");
  writeSample(path);
  execSql(path, "PRAGMA journal_mode = DELETE");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    sqlite3* db = nullptr;
    sqlite3_open(path.c_str(), &db);
    sqlite3_exec(db,
                 "PRAGMA cache_size = 1; BEGIN; "
                 "UPDATE meta SET value = value || '.'; UPDATE samples SET flops = flops + 1;",
                 nullptr, nullptr, nullptr);
    std::_Exit(0);  // killed before the commit: the journal stays
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(fs::exists(path + "-journal"));
  try {
    RunReader reader(path);
    reader.load();
    ADD_FAILURE() << "read without rolling the journal back";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(
        std::string(e.what()).find("a write to it was interrupted and left '" + path + "-journal'"),
        std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::exists(path + "-journal"));  // left as it was
}

TEST_F(RunDbTest, EmptyFile) {
  const std::string path = file("empty.swapdb");
  writeBytes(path, "");
  expectRejected(path, "empty (0 bytes)");
}

TEST_F(RunDbTest, NotAnSqliteFile) {
  const std::string path = file("text.swapdb");
  writeBytes(path, "k,time\n1,2\n3,4\n this is a CSV file, not a database at all\n");
  expectRejected(path, "not an SQLite file");
  const std::string tiny = file("tiny.swapdb");
  writeBytes(tiny, "SQL");
  expectRejected(tiny, "not an SQLite file");
}

TEST_F(RunDbTest, AnotherApplicationsDatabase) {
  const std::string path = file("other.db");
  execSql(path, "PRAGMA application_id = 1196445778; CREATE TABLE t(x);");
  expectRejected(path, "another application (SQLite application id 0x47505052)");

  const std::string plain = file("plain.db");
  execSql(plain, "CREATE TABLE meta(key, value);");
  expectRejected(plain, "not a Swapscope run database");
}

TEST_F(RunDbTest, ANewerSchemaVersion) {
  const std::string path = file("newer.swapdb");
  writeSample(path);
  execSql(path, "PRAGMA user_version = 7");
  expectRejected(path, "schema version 7, newer than this Swapscope reads (" +
                           std::to_string(kSchemaVersion) + ")");
}

TEST_F(RunDbTest, ADamagedFile) {
  const std::string path = file("damaged.swapdb");
  writeSample(path);
  std::string bytes = readBytes(path);
  // Keep the 100-byte header and page 1 (the schema); overwrite every later page with noise.
  const std::size_t page = 4096;
  ASSERT_GT(bytes.size(), 3 * page);
  std::mt19937 rng(7);
  for (std::size_t i = page; i < bytes.size(); ++i)
    bytes[i] = static_cast<char>(rng() & 0xff);
  writeBytes(path, bytes);
  expectRejected(path, "is damaged");
}

TEST_F(RunDbTest, ATruncatedFile) {
  const std::string path = file("truncated.swapdb");
  writeSample(path);
  std::string bytes = readBytes(path);
  bytes.resize(bytes.size() / 2);
  writeBytes(path, bytes);
  expectRejected(path, "is damaged");
}

TEST_F(RunDbTest, ADamagedMetaValue) {
  const std::string path = file("meta.swapdb");
  writeSample(path);
  execSql(path, "UPDATE meta SET value = 'lots' WHERE key = 'budget'");
  expectRejected(path, "meta 'budget' is 'lots', not an integer");
}

TEST_F(RunDbTest, NewColumnsRoundTrip) {
  const std::string path = file("v2.swapdb");
  RunData written = writeSample(path);
  // writeSample leaves them unrecorded; a second file records them.
  const std::string path2 = file("v2b.swapdb");
  {
    const Network net = testing::tinyNetwork();
    const auto costs = computeLayerCosts(net);
    const MemoryPlan plan = planMemory(net, costs, makeSwapSet(Policy::SwapAll, net, costs));
    RunWriter w(path2, sampleMeta());
    w.writeNetwork(net, costs, plan.gmap);
    w.addBatch({4, "swap-all", 1, 1000, 1000, 4, 2, 15000});
    IterationRows rows = wholeIteration(4, 0, 0);
    rows.samples[0].ready_ns = 17;
    rows.samples[0].copy_overlap_ns = 4;
    w.addIteration(rows);
    w.finish(RunStatus::Complete);
  }
  const RunData read = RunReader(path2).load();
  EXPECT_EQ(read.schema_version, kSchemaVersion);
  ASSERT_EQ(read.batches.size(), 1u);
  EXPECT_EQ(read.batches[0].dispatch_ns, 15000);
  ASSERT_EQ(read.samples.size(), wholeIteration(4, 0, 0).samples.size());
  EXPECT_EQ(read.samples[0].ready_ns, 17);
  EXPECT_EQ(read.samples[0].copy_overlap_ns, 4);
  // Unrecorded values read back as unrecorded.
  EXPECT_EQ(RunReader(path).load().samples, written.samples);
}

/// A file with one recorded iteration of the tiny network at k = 4 (wholeIteration: its steps
/// start at 11, 12, ..., step 15 at 25) and a recompute of relu1 (layer 3) in conv2's backward
/// step (15).
RunData writeWithRecompute(const std::string& path, const RunMeta& meta,
                           const RecomputeRow& recompute) {
  const Network net = testing::tinyNetwork();
  const auto costs = computeLayerCosts(net);
  const MemoryPlan plan = planMemory(net, costs, makeSwapSet(Policy::SwapAll, net, costs));
  RunWriter w(path, meta);
  w.writeNetwork(net, costs, plan.gmap);
  w.addBatch({4, "recompute-light", 1, 1000, 1000, 4, 2, 15000});
  IterationRows rows = wholeIteration(4, 0, 0);
  rows.recomputes = {recompute};
  w.addIteration(rows);
  w.finish(RunStatus::Complete);
  RunData d;
  d.samples = rows.samples;
  d.recomputes = rows.recomputes;
  return d;
}

TEST_F(RunDbTest, RecomputeTasksAreRecordedApartFromTheSteps) {
  const std::string path = file("recompute.swapdb");
  const RunData written = writeWithRecompute(path, sampleMeta(), {4, 0, 15, 3, 64, 18, 5});
  RunReader r(path);
  const RunData read = r.load();
  EXPECT_EQ(read.samples, written.samples) << "a recompute is not a step's sample";
  ASSERT_EQ(read.recomputes.size(), 1u);
  EXPECT_EQ(read.recomputes, written.recomputes);
  EXPECT_EQ(r.counts().recomputes, 1);
  EXPECT_EQ(r.counts().samples, static_cast<std::int64_t>(written.samples.size()));
}

TEST_F(RunDbTest, ARecomputeOutsideABackwardStepIsDamage) {
  const std::string path = file("recompute-fwd.swapdb");
  writeWithRecompute(path, sampleMeta(), {4, 0, 2, 3, 64, 18, 5});  // step 2 is bn1's forward
  expectRejected(path, "table 'recomputes' row 1: step is 2, not a backward step");
  const std::string path2 = file("recompute-layer.swapdb");
  writeWithRecompute(path2, sampleMeta(), {4, 0, 15, 99, 64, 18, 5});
  expectRejected(path2, "layer is 99, but table 'layers' has layers 0..9");
}

// A recompute runs on the compute stream inside its backward step, before the step's kernels and
// after every forward step, on the clock that times them all: one that starts before its
// iteration's first step (and so before the iteration, whose first step starts at 11 here) or
// ends after its step starts is an edit, refused naming the row; the trace and the Timeline drew
// it outside the iteration or over the step's kernels.
TEST_F(RunDbTest, ARecomputeOutsideItsStepOrBeforeItsIterationIsDamage) {
  struct Case {
    RecomputeRow row;
    std::string expected;  ///< "" accepted
  };
  const Case cases[] = {
      {{4, 0, 15, 3, 64, 18, 5}, ""},  // 18 .. 23, before step 15 at 25
      {{4, 0, 15, 3, 64, 20, 5}, ""},  // ends as the step starts
      {{4, 0, 15, 3, 64, 11, 5}, ""},  // as early as the first step (a GPU's calibration)
      {{4, 0, 15, 3, 64, 0, 5},
       "table 'recomputes': the recompute of layer 3 in step 15 of k 4 iteration 0 starts at "
       "start_ns 0, 11 ns before its iteration's first step (start_ns 11 in table 'samples'; table "
       "'iterations' has start_ns 0): a recompute runs inside a backward step, after every "
       "forward step"},
      {{4, 0, 15, 3, 64, 22, 5},
       "table 'recomputes': the recompute of layer 3 in step 15 of k 4 iteration 0 runs from "
       "start_ns 22 for time_ns 5, past the start of step 15 (start_ns 25 in table 'samples'): a "
       "recompute runs before its step's kernels"},
      {{4, 0, 15, 3, 64, 500, 5},
       "table 'recomputes': the recompute of layer 3 in step 15 of k 4 iteration 0 runs from "
       "start_ns 500 for time_ns 5, past the start of step 15 (start_ns 25 in table 'samples'): a "
       "recompute runs before its step's kernels"},
  };
  int n = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.row.start_ns);
    const std::string path = file("recompute-" + std::to_string(n++) + ".swapdb");
    writeWithRecompute(path, sampleMeta(), c.row);
    if (c.expected.empty()) {
      EXPECT_NO_THROW(RunReader(path).load());
    } else {
      expectRejected(path, "'" + path + "' is damaged: " + c.expected);
    }
  }
}

// A step runs within its iteration, which lasts until every stream drained: a step row that
// starts after its iteration's end is an edit, refused naming the row and both times.
TEST_F(RunDbTest, AStepThatStartsAfterItsIterationEndsIsDamage) {
  const std::string path = file("late.swapdb");
  writeSample(path);  // iterations 0 and 1 at 0 and 1000, each 900 ns long
  execSql(path, "UPDATE samples SET start_ns = 950 WHERE iteration = 0 AND step = 3");
  expectRejected(path,
                 "'" + path +
                     "' is damaged: table 'samples': step 3 of k 8 iteration 0 starts at start_ns "
                     "950, after its iteration's end (table 'iterations' has start_ns 0 and "
                     "duration_ns 900, so it ends 50 ns earlier): an iteration lasts until every "
                     "stream drained");
  // At the end itself it reads (a step whose start and end the clock does not tell apart).
  const std::string atEnd = file("at-end.swapdb");
  writeSample(atEnd);
  execSql(atEnd, "UPDATE samples SET start_ns = 900 WHERE iteration = 0 AND step = 3");
  EXPECT_NO_THROW(RunReader(atEnd).load());
  // The update's rows too.
  const std::string update = file("update.swapdb");
  writeSample(update);
  execSql(update,
          "UPDATE samples SET start_ns = 1901 WHERE iteration = 1 AND direction = 'update' AND "
          "layer = (SELECT max(layer) FROM samples WHERE direction = 'update')");
  expectRejected(update, "the update of layer ");
  expectRejected(update, " of k 8 iteration 1 starts at start_ns 1901, after its iteration's end");
}

TEST_F(RunDbTest, AVersion2FileHasNoRecomputeTableAndReadsNone) {
  const std::string path = file("v2.swapdb");
  const RunData written = writeSample(path);
  execSql(path, "DROP TABLE recomputes; PRAGMA user_version = 2");
  RunReader r(path);
  EXPECT_EQ(r.schemaVersion(), 2);
  const RunData read = r.load();
  EXPECT_TRUE(read.recomputes.empty());
  EXPECT_EQ(read.samples, written.samples);
  EXPECT_EQ(r.counts().recomputes, 0);
  // The same file claiming version 3 lacks the table, and says so.
  execSql(path, "PRAGMA user_version = 3");
  expectRejected(path, "table 'recomputes' is missing");
}

TEST_F(RunDbTest, AVersion1FileOpensWithTheNewColumnsAbsent) {
  // A version-1 file is this schema without the columns version 2 added.
  const std::string path = file("v1.swapdb");
  const RunData written = writeSample(path);
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    for (const auto& [table, column] : kVersion2Columns) {
      const std::string sql =
          "ALTER TABLE " + std::string(table) + " DROP COLUMN " + std::string(column);
      ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
          << sqlite3_errmsg(db);
    }
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 1", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  RunReader r(path);
  EXPECT_EQ(r.schemaVersion(), 1);
  const RunData read = r.load();
  EXPECT_EQ(read.schema_version, 1);
  ASSERT_EQ(read.samples.size(), written.samples.size());
  for (const SampleRow& s : read.samples) {
    EXPECT_EQ(s.ready_ns, -1);
    EXPECT_EQ(s.copy_overlap_ns, -1);
  }
  for (const BatchRow& b : read.batches)
    EXPECT_EQ(b.dispatch_ns, -1);
  EXPECT_EQ(read.iterations, written.iterations);
  EXPECT_EQ(read.transfers, written.transfers);
  // The same file claiming version 2 lacks a column, and says which.
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 2", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  try {
    RunReader bad(path);
    FAIL() << "a version-2 file without the version-2 columns opened";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no column 'dispatch_ns'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace swapscope::store
