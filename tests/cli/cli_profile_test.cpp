// SPDX-License-Identifier: MIT
// `swapscope profile | info | trace`, in-process; and the real binary killed mid-profile or
// mid-run.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "common/error.h"
#include "edit_db.h"
#include "run_cli.h"
#include "sample_runs.h"
#include "spawn_cli.h"
#include "store/run_db.h"

namespace swapscope::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::run;
using testing::signalWhenRecorded;
using testing::startCli;
using testing::startLongProfile;
using testing::waitForIterations;

fs::path scratch(const std::string& name) {
  return fs::temp_directory_path() / ("swapscope-cli-" + std::to_string(getpid()) + "-" + name);
}

/// One small profile shared by the tests that only read it.
class CliProfile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    s_db = scratch("shared.swapdb").string();
    fs::remove(s_db);
    s_result = run({"profile", "--model", "fmnist-cnn", "--budget", "16MiB", "--max-batch", "4",
                    "--iters", "2", "--warmup", "0", "--db", s_db, "--json"});
  }
  static void TearDownTestSuite() { fs::remove(s_db); }
  static inline std::string s_db;
  static inline testing::Result s_result;
};

TEST_F(CliProfile, ProfilesFourDistinctMinibatchesUpToTheCap) {
  ASSERT_EQ(s_result.code, 0) << s_result.err;
  const json j = json::parse(s_result.out);
  EXPECT_EQ(j["status"], "complete");
  EXPECT_EQ(j["max_batch"], 4);
  // 4/8 and 4/4 both round to 1; 4/2 = 2; 2/3 * 4 = 2.67 -> 3; 4.
  std::vector<int> ks;
  for (const auto& b : j["batches"]) {
    ks.push_back(b["k"].get<int>());
    EXPECT_EQ(b["iterations"], 2);
    EXPECT_EQ(b["measured_peak"], b["predicted_peak"]);
  }
  EXPECT_EQ(ks, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(j["rows"]["iterations"], 8);
}

TEST_F(CliProfile, InfoSummarisesTheDatabase) {
  ASSERT_EQ(s_result.code, 0) << s_result.err;
  const auto r = run({"info", "--db", s_db, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["status"], "complete");
  EXPECT_EQ(j["kind"], "profile");
  EXPECT_EQ(j["backend"], "cpu");
  EXPECT_EQ(j["network"]["name"], "fmnist-cnn");
  EXPECT_EQ(j["budget"], 16 << 20);
  EXPECT_EQ(j["batches"].size(), 4u);
  EXPECT_EQ(j["rows"]["iterations"], 8);
  EXPECT_EQ(j["rows"]["steps"], j["network"]["steps"]);
  EXPECT_NE(j["command_line"].get<std::string>().find("--max-batch 4"), std::string::npos);
  EXPECT_TRUE(j["versions"].contains("oneDNN"));

  const auto text = run({"info", "--db", s_db});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("status        complete"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("fmnist-cnn"), std::string::npos);
}

TEST_F(CliProfile, TraceWritesOneIterationForPerfetto) {
  ASSERT_EQ(s_result.code, 0) << s_result.err;
  const std::string out = scratch("trace.json").string();
  const auto r = run({"trace", "--db", s_db, "--out", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("at k = 4"), std::string::npos) << r.out;  // the largest by default
  std::ifstream in(out);
  const json j = json::parse(in);
  fs::remove(out);
  std::set<std::string> threads;
  int counters = 0, slices = 0;
  std::set<int> tids;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") threads.insert(e["args"]["name"]);
    if (e["ph"] == "C") {
      ++counters;
      EXPECT_TRUE(e["args"].contains("in use"));
    }
    if (e["ph"] == "X") {
      ++slices;
      tids.insert(e["tid"].get<int>());
      EXPECT_GE(e["ts"].get<double>(), 0.0);
      EXPECT_GE(e["dur"].get<double>(), 0.0);
    }
  }
  EXPECT_EQ(threads, (std::set<std::string>{"compute", "swap-out (device to host)",
                                            "swap-in (host to device)"}));
  EXPECT_EQ(tids, (std::set<int>{1, 2, 3}));  // swap-all moves data both ways
  // One counter sample per pool sample recorded for that iteration.
  store::RunReader reader(s_db);
  const store::RunData d = reader.load();
  int memory = 0;
  for (const auto& m : d.memory)
    memory += m.k == 4 && m.iteration == 0;
  EXPECT_EQ(counters, memory);
  EXPECT_GT(slices, 2 * static_cast<int>(d.steps.size()) - 1);

  const auto missing = run({"trace", "--db", s_db, "--k", "5", "--out", out});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("recorded k: 1, 2, 3, 4"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(CliProfile, AnExistingDatabaseIsKeptWithoutForce) {
  ASSERT_EQ(s_result.code, 0) << s_result.err;
  const auto before = fs::file_size(s_db);
  const auto r = run({"profile", "--model", "fmnist-cnn", "--budget", "16MiB", "--db", s_db});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
  EXPECT_EQ(fs::file_size(s_db), before);
  EXPECT_EQ(run({"info", "--db", s_db}).code, 0);
}

TEST(CliProfileErrors, ABudgetBelowKOneCreatesNoFile) {
  const std::string db = scratch("small.swapdb").string();
  fs::remove(db);
  const auto r = run({"profile", "--model", "fmnist-cnn", "--budget", "1MiB", "--db", db});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("cannot hold fmnist-cnn at k = 1"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(db));
}

TEST(CliProfileErrors, InfoOnFilesThatAreNotRunDatabases) {
  const std::string text = scratch("notes.txt").string();
  std::ofstream(text) << "not a database\n";
  auto r = run({"info", "--db", text});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not an SQLite file"), std::string::npos) << r.err;
  fs::remove(text);
  r = run({"info", "--db", text});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no such file"), std::string::npos) << r.err;
  r = run({"info"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--db"), std::string::npos) << r.err;
}

/// Starts a long profile into `db`, sends `sig` once it recorded `iterations`, and returns its
/// wait status; `started` says whether it got that far within 60 s.
int signalProfile(const std::string& db, std::int64_t iterations, int sig, bool& started) {
  fs::remove(db);
  return signalWhenRecorded(startLongProfile(db), db, iterations, sig, started);
}

TEST(CliProfileKilled, AKilledProfileLeavesAReadableIncompleteDatabase) {
  const std::string db = scratch("killed.swapdb").string();
  bool started = false;
  const int status = signalProfile(db, 3, SIGKILL, started);
  ASSERT_TRUE(started) << "the profile recorded no iterations within 60 s";
  ASSERT_TRUE(WIFSIGNALED(status));

  {
    store::RunReader reader(db);
    const store::RunData d = reader.load();
    EXPECT_EQ(d.meta.status, store::RunStatus::Incomplete);
    EXPECT_NE(d.meta.status_message.find("ended without finishing"), std::string::npos)
        << d.meta.status_message;
    EXPECT_GE(d.iterations.size(), 3u);
    EXPECT_EQ(d.network.name, "fmnist-cnn");
    // Every recorded iteration is whole: all its steps are there (committed together).
    for (const auto& it : d.iterations) {
      std::size_t steps = 0;
      for (const auto& s : d.samples) {
        steps +=
            s.k == it.k && s.iteration == it.iteration && s.direction != store::Direction::Update;
      }
      EXPECT_EQ(steps, d.steps.size()) << "k " << it.k << " iteration " << it.iteration;
    }
  }
  const auto r = run({"info", "--db", db});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("status        incomplete"), std::string::npos) << r.out;
  for (const char* suffix : {"", "-wal", "-shm"})
    fs::remove(db + suffix);
}

TEST(CliProfileKilled, SigtermStopsAfterTheIterationAndMarksTheDatabase) {
  const std::string db = scratch("term.swapdb").string();
  bool started = false;
  const int status = signalProfile(db, 2, SIGTERM, started);
  ASSERT_TRUE(started) << "the profile recorded no iterations within 60 s";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_FALSE(fs::exists(db + "-wal"));  // finished properly: one file
  store::RunReader reader(db);
  const store::RunMeta m = reader.meta();
  EXPECT_EQ(m.status, store::RunStatus::Incomplete);
  EXPECT_NE(m.status_message.find("interrupted after"), std::string::npos) << m.status_message;
  EXPECT_GE(reader.counts().iterations, 2);
  fs::remove(db);
}

TEST(CliRunKilled, SigtermStopsAfterTheIterationAndMarksTheDatabase) {
  const std::string plan = scratch("term-plan.json").string();
  const std::string db = scratch("term-run.swapdb").string();
  const std::string printed = scratch("term-run.out").string();
  fs::remove(db);
  {
    const auto made = cli::testing::writeFmnistPlan(swapscope::testing::sampleRunsDir(), plan);
    ASSERT_EQ(made.code, 0) << made.err;
  }
  bool started = false;
  const int status = signalWhenRecorded(
      startCli({"run", "--plan", plan, "--iters", "100000", "--warmup", "0", "--db", db}, printed),
      db, 2, SIGTERM, started);
  ASSERT_TRUE(started) << "the run recorded no iterations within 60 s";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);      // as an interrupted profile
  EXPECT_FALSE(fs::exists(db + "-wal"));  // finished properly: one file
  {
    store::RunReader reader(db);
    const store::RunData d = reader.load();
    EXPECT_EQ(d.meta.status, store::RunStatus::Incomplete);
    EXPECT_EQ(d.meta.status_message,
              "interrupted after " + std::to_string(d.iterations.size()) + " measured iterations");
    EXPECT_GE(d.iterations.size(), 2u);
    EXPECT_EQ(d.batches.size(), 1u);
    EXPECT_EQ(d.plans.size(), 1u);
  }
  // The comparison of the iterations it measured, then what stopped it.
  std::ifstream in(printed);
  const std::string out{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_NE(out.find("  t_iter  "), std::string::npos) << out;
  EXPECT_NE(out.find("interrupted (SIGTERM) after "), std::string::npos) << out;
  EXPECT_NE(out.find("the database is marked incomplete"), std::string::npos) << out;
  for (const std::string& f : {plan, db, printed})
    fs::remove(f);
}

TEST(CliRunKilled, WithJsonTheInterruptionIsAFieldOfTheReport) {
  const std::string plan = scratch("term-json-plan.json");
  const std::string db = scratch("term-json-run.swapdb");
  const std::string printed = scratch("term-json-run.out");
  fs::remove(db);
  {
    const auto made = cli::testing::writeFmnistPlan(swapscope::testing::sampleRunsDir(), plan);
    ASSERT_EQ(made.code, 0) << made.err;
  }
  bool started = false;
  const int status = signalWhenRecorded(
      startCli({"run", "--plan", plan, "--iters", "100000", "--warmup", "0", "--db", db, "--json"},
               printed),
      db, 2, SIGTERM, started);
  ASSERT_TRUE(started) << "the run recorded no iterations within 60 s";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);  // as in text: the run did not finish (it exited 0)
  std::ifstream in(printed);
  const json j = json::parse(in);
  EXPECT_EQ(j["interrupted"], "SIGTERM");
  EXPECT_EQ(j["iterations"].get<std::size_t>(), store::RunReader(db).load().iterations.size());
  EXPECT_EQ(store::RunReader(db).meta().status, store::RunStatus::Incomplete);
  for (const std::string& f : {plan, db, printed})
    fs::remove(f);
}

// A shell starts a background job with SIGINT ignored, so that the terminal's Ctrl-C leaves it
// running: the profile keeps it ignored (it used to catch it and stop), and stops at SIGTERM.
TEST(CliProfileKilled, ASigintIgnoredAtStartStaysIgnored) {
  const std::string db = scratch("background.swapdb").string();
  for (const char* suffix : {"", "-wal", "-shm"})
    fs::remove(db + suffix);
  void (*before)(int) = std::signal(SIGINT, SIG_IGN);  // inherited across exec, as a shell does
  const pid_t pid = startLongProfile(db);
  std::signal(SIGINT, before);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(waitForIterations(db, 1)) << "the profile recorded no iterations within 60 s";
  kill(pid, SIGINT);
  const std::int64_t after = store::RunReader(db).counts().iterations;
  // Still recording well after the SIGINT.
  EXPECT_TRUE(waitForIterations(db, after + 3));
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, WNOHANG), 0) << "the ignored SIGINT ended it";
  kill(pid, SIGTERM);
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_EQ(store::RunReader(db).meta().status, store::RunStatus::Incomplete);
  for (const char* suffix : {"", "-wal", "-shm"})
    fs::remove(db + suffix);
}

// A terminal's Ctrl-C and `timeout -s INT` signal the process and its group: one SIGINT can
// arrive twice within a millisecond. That is one interruption (the second used to kill the
// profile mid-write, leaving its database unfinished), and the profile stops as for one.
TEST(CliProfileKilled, TwoSigintsTogetherAreOneInterruption) {
  const std::string db = scratch("two-sigints.swapdb").string();
  for (const char* suffix : {"", "-wal", "-shm"})
    fs::remove(db + suffix);
  const pid_t pid = startLongProfile(db);
  ASSERT_GT(pid, 0);
  const bool started = waitForIterations(db, 1);
  kill(pid, started ? SIGINT : SIGKILL);
  if (started) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    kill(pid, SIGINT);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(started) << "the profile recorded no iterations within 60 s";
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_EQ(store::RunReader(db).meta().status, store::RunStatus::Incomplete);
  EXPECT_FALSE(fs::exists(db + "-wal"));
  for (const char* suffix : {"", "-wal", "-shm"})
    fs::remove(db + suffix);
}

TEST(CliProfileKilled, ForceDoesNotReplaceTheDatabaseOfALiveProfile) {
  const std::string db = scratch("live.swapdb").string();
  for (const char* suffix : {"", "-wal", "-shm"})
    fs::remove(db + suffix);
  const pid_t pid = startLongProfile(db);
  ASSERT_GT(pid, 0);
  const bool started = waitForIterations(db, 1);
  const std::vector<std::string> again = {
      "profile", "--model",  "fmnist-cnn", "--budget", "16MiB", "--max-batch", "2", "--iters",
      "1",       "--warmup", "0",          "--db",     db,      "--force"};
  const auto refused = run(again);
  const auto iterations = store::RunReader(db).counts().iterations;
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(started) << "the profile recorded no iterations within 60 s";
  EXPECT_EQ(refused.code, 2) << refused.out << refused.err;
  std::array<char, 256> host{};
  gethostname(host.data(), host.size() - 1);
  EXPECT_NE(refused.err.find("still being written by a running swapscope profile (pid " +
                             std::to_string(pid) + " on " + host.data() + ", started "),
            std::string::npos)
      << refused.err;
  EXPECT_GE(iterations, 1);  // the live run's database was left alone
  // Once that process is gone, --force replaces its database.
  const auto replaced = run(again);
  EXPECT_EQ(replaced.code, 0) << replaced.err;
  EXPECT_EQ(store::RunReader(db).meta().status, store::RunStatus::Complete);
  for (const char* suffix : {"", "-wal", "-shm"})
    fs::remove(db + suffix);
}

std::string fileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(CliRunDbDamage, EveryReadingVerbRefusesADamagedDatabaseWithExitTwo) {
  const std::string sample = swapscope::testing::fmnistRun();
  const std::string before = fileBytes(sample);
  struct Damage {
    const char* sql;  ///< nullptr: cut the file by one byte instead
    std::string expected;
  };
  const Damage damages[] = {
      {"DROP TABLE batches", "is damaged: table 'batches' is missing"},
      {"UPDATE iterations SET duration_ns = -10800000 WHERE rowid = 1",
       "is damaged: table 'iterations' row 1: duration_ns is -10800000; it must be 1 or more"},
      {"UPDATE samples SET layer = 99 WHERE rowid = 5",
       "is damaged: table 'samples' row 5: layer is 99, but table 'layers' has layers 0..14"},
      {nullptr, "is damaged: it is " + std::to_string(fs::file_size(sample) - 1) +
                    " bytes long, not a whole number of 4096-byte pages"},
      {"UPDATE network SET json = substr(json, 1, 100)",
       "is damaged: table 'network' row 1: json is not valid JSON"},
  };
  const std::string trace = scratch("damaged-trace.json").string();
  int n = 0;
  for (const Damage& d : damages) {
    SCOPED_TRACE(d.expected);
    const std::string db = scratch("damaged-" + std::to_string(n++) + ".swapdb").string();
    fs::copy_file(sample, db, fs::copy_options::overwrite_existing);
    if (d.sql) {
      EXPECT_GE(testing::editDb(db, d.sql), 0);
    } else {
      fs::resize_file(db, fs::file_size(db) - 1);
    }
    for (const std::vector<std::string>& verb : {std::vector<std::string>{"info", "--db", db},
                                                 {"trace", "--db", db, "--out", trace},
                                                 {"plan", "--db", db, "--budget", "16MiB"},
                                                 {"compare", db, sample}}) {
      const auto r = run(verb);
      EXPECT_EQ(r.code, 2) << verb[0] << ": " << r.err;
      EXPECT_NE(r.err.find("'" + db + "' " + d.expected), std::string::npos)
          << verb[0] << ": " << r.err;
      EXPECT_LT(r.err.size(), 400u) << verb[0];
    }
    EXPECT_FALSE(fs::exists(trace));
    fs::remove(db);
  }
  EXPECT_EQ(fileBytes(sample), before);  // sample_runs/ is only read
}

// A stall is the compute stream's idle time before a step within its iteration. An iteration
// whose samples were shifted to before its start (an edit) is damage, named by table, row and
// values, for every verb; `trace` used to write its first stall at a negative timestamp.
TEST(CliRunDbDamage, AStallBeforeItsIterationIsDamageAndNoTraceStartsBeforeTheRun) {
  const std::string sample = swapscope::testing::fmnistRun();
  const auto traced = run({"trace", "--db", sample, "--out", "-"});
  ASSERT_EQ(traced.code, 0) << traced.err;
  const json doc = json::parse(traced.out);
  int stalls = 0;
  for (const json& e : doc["traceEvents"]) {
    if (!e.contains("ts")) continue;
    EXPECT_GE(e["ts"].get<double>(), 0.0) << e.dump();
    stalls += e["name"] == "stall" ? 1 : 0;
  }
  EXPECT_GT(stalls, 0);
  // k 94 iteration 0 starts at 1387488719 ns, its step 1 at 1387703198 after a stall of
  // 214479 ns: its samples moved 1387588719 ns earlier put step 1 at 114479 ns, its stall
  // beginning 100 us before the run.
  const std::string db = scratch("stall-before-its-iteration.swapdb").string();
  fs::copy_file(sample, db, fs::copy_options::overwrite_existing);
  ASSERT_GT(testing::editDb(db,
                            "UPDATE samples SET start_ns = start_ns - 1387588719 "
                            "WHERE k = 94 AND iteration = 0"),
            0);
  const std::string trace = scratch("stall-before-its-iteration.json").string();
  fs::remove(trace);
  const std::string expected =
      "'" + db +
      "' is damaged: table 'samples': step 1 of k 94 iteration 0 has stall_ns 214479, but it "
      "starts 1387374240 ns before its iteration's start (start_ns 114479; table 'iterations' "
      "has 1387488719): a stall is the compute stream's idle time before the step, within its "
      "iteration";
  for (const std::vector<std::string>& verb : {std::vector<std::string>{"info", "--db", db},
                                               {"trace", "--db", db, "--out", trace},
                                               {"trace", "--db", db, "--out", "-"},
                                               {"plan", "--db", db, "--budget", "16MiB"},
                                               {"compare", db, sample}}) {
    const auto r = run(verb);
    EXPECT_EQ(r.code, 2) << verb[0] << ": " << r.err;
    EXPECT_EQ(r.out, "") << verb[0];
    EXPECT_NE(r.err.find(expected), std::string::npos) << verb[0] << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(trace));
  fs::remove(db);
}

// A step row moved past its iteration's end (k 94 iteration 0 runs from 1387488719 ns for
// 85707491 ns) is damage, which every reading verb refuses naming the row; `trace` drew the step
// after the iteration had ended.
TEST(CliRunDbDamage, AStepAfterItsIterationsEndIsDamage) {
  const std::string sample = swapscope::testing::fmnistRun();
  const std::string db = scratch("step-after-its-iteration.swapdb").string();
  fs::copy_file(sample, db, fs::copy_options::overwrite_existing);
  ASSERT_EQ(testing::editDb(db,
                            "UPDATE samples SET start_ns = 1473196211 "
                            "WHERE k = 94 AND iteration = 0 AND step = 3"),
            1);
  const std::string expected =
      "'" + db +
      "' is damaged: table 'samples': step 3 of k 94 iteration 0 starts at start_ns 1473196211, "
      "after its iteration's end (table 'iterations' has start_ns 1387488719 and duration_ns "
      "85707491, so it ends 1 ns earlier): an iteration lasts until every stream drained";
  for (const std::vector<std::string>& verb : {std::vector<std::string>{"info", "--db", db},
                                               {"trace", "--db", db, "--out", "-"},
                                               {"plan", "--db", db, "--budget", "16MiB"},
                                               {"compare", db, sample}}) {
    const auto r = run(verb);
    EXPECT_EQ(r.code, 2) << verb[0] << ": " << r.err;
    EXPECT_EQ(r.out, "") << verb[0];
    EXPECT_NE(r.err.find(expected), std::string::npos) << verb[0] << ": " << r.err;
  }
  fs::remove(db);
}

}  // namespace
}  // namespace swapscope::cli

namespace swapscope::cli {
namespace {

TEST(CliProfileErrors, ABudgetBeyondTheHostMemoryIsRefusedBeforeAnyFileIsCreated) {
  const std::string db = scratch("huge-budget.swapdb").string();
  fs::remove(db);
  const auto r =
      run({"profile", "--model", "fmnist-cnn", "--budget", "9223372036854775807", "--db", db});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("of host memory ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the pool, in host memory on this device: 8388608 TiB"), std::string::npos)
      << r.err;
  // The largest profiling minibatch, the CPU backend's cap of 128: its synthetic data.
  EXPECT_NE(r.err.find("the synthetic data set (128 samples): 392 KiB"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(" available: "), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(db));
  EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace
}  // namespace swapscope::cli
