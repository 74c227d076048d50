// SPDX-License-Identifier: MIT
// The run database: a round trip of every table, the run status, and every kind of bad file.
#include "store/run_db.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include <nlohmann/json.hpp>

#include "analysis/network_analysis.h"
#include "common/error.h"
#include "graph/network_json.h"
#include "store/tiny_network.h"

namespace swapscope::store {
namespace {

namespace fs = std::filesystem;

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
    const MemoryPlan plan = planMemory(net, costs, makeSwapSet(SwapPolicy::SwapAll, net, costs));
    RunWriter w(path, d.meta);
    w.writeNetwork(net, costs, plan.gmap);
    d.batches = {{4, "swap-all", 1, 1000, 1000, 4, 2}, {8, "swap-all", 1, 2000, 2000, 1, 0}};
    for (const auto& b : d.batches)
      w.addBatch(b);
    for (int it = 0; it < 2; ++it) {
      IterationRows rows;
      rows.iteration = {8, it, 1000 * it, 900, 2.25 - 0.5 * it, 10, 4096, 4000, 512};
      rows.samples = {{8, it, 1, 1, Direction::Forward, 1 << 20, 1000 * it + 1, 50, 1},
                      {8, it, 2 * plan.gmap.forward_steps + 1, 1, Direction::Update, 600,
                       1000 * it + 800, 7, 0}};
      // In time order: the reader returns rows of an iteration by start time.
      rows.transfers = {
          {8, it, TransferKind::Load, false, 0, 1, 512, 1000 * it, 1000 * it + 1, true, 0},
          {8, it, TransferKind::Offload, true, 3, 1, 4096, 1000 * it + 60, 1000 * it + 90, false,
           25}};
      rows.memory = {{8, it, 1000 * it + 1, 777}, {8, it, 1000 * it + 900, 555}};
      w.addIteration(rows);
      d.iterations.push_back(rows.iteration);
      d.samples.insert(d.samples.end(), rows.samples.begin(), rows.samples.end());
      d.transfers.insert(d.transfers.end(), rows.transfers.begin(), rows.transfers.end());
      d.memory.insert(d.memory.end(), rows.memory.begin(), rows.memory.end());
    }
    FitRow fit{0, "type", "conv", "fwd", "affine", R"({"a":1e-5,"P":2e12})", 5, 1e-6, 0.04, true};
    fit.id = w.addFit(fit);
    d.fits = {fit};
    PlanRow plan1{0, "2026-11-21T10:01:00Z", "accudnn", "argmin", 1 << 30, 48, 123456, "{}"};
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

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// Runs `sql` on the file with SQLite itself, bypassing Swapscope's writer.
void execSql(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

/// Expects opening `path` to fail with BadInput and a message naming the file and `reason`.
void expectRejected(const std::string& path, const std::string& reason) {
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

TEST_F(RunDbTest, EveryTableRoundTrips) {
  const std::string path = file("run.swapdb");
  const RunData written = writeSample(path);
  RunReader r(path);
  EXPECT_EQ(r.schemaVersion(), kSchemaVersion);
  const RunData read = r.load();

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
  EXPECT_EQ(c.samples, 4);
  EXPECT_EQ(c.transfers, 4);
  EXPECT_EQ(c.memory, 4);
  EXPECT_EQ(c.iterations, 2);
  EXPECT_EQ(c.fits, 1);
  EXPECT_EQ(c.plans, 1);
  EXPECT_EQ(c.layers, net.size());
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
  expectRejected(path, "schema version 7, newer than this Swapscope reads (1)");
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

}  // namespace
}  // namespace swapscope::store
