// SPDX-License-Identifier: MIT
// A run stopped inside an iteration of many passes; a prime minibatch's split into passes of one
// sample, said; a database whose run ended before its network was recorded, named as such by
// every verb; a plan's relative source_db read from the plan file's folder; and a profile's
// stability, printed, and warned about where the machine was busy.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "edit_db.h"
#include "perfmodel/stability.h"
#include "run_cli.h"
#include "sample_runs.h"
#include "spawn_cli.h"
#include "store/run_db.h"

namespace swapscope::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::run;

const std::string kSample = swapscope::testing::fmnistRun();

class CliDbSafety : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_dir = fs::temp_directory_path() /
            ("swapscope-dbsafety-" + std::to_string(getpid()) + "-" + info->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  void TearDown() override {
    fs::current_path(m_cwd);
    fs::remove_all(m_dir);
  }
  std::string path(const std::string& name) const { return (m_dir / name).string(); }
  static void execSql(const std::string& db, const std::string& sql) {
    ASSERT_GE(testing::editDb(db, sql), 0);
  }
  fs::path m_dir;
  fs::path m_cwd = fs::current_path();
};

// --- Ctrl-C inside an iteration of 20,011 passes -----------------------------------------------

TEST_F(CliDbSafety, APrimeMinibatchSplitIntoPassesOfOneSampleIsSaid) {
  const std::string plan = path("prime.json");
  const auto r = run({"plan", "--db", kSample, "--budget", "16MiB", "--policy", "swap-all",
                      "--batch", "20011", "--allow-sub-batches", "--out", plan});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("k                 20011 in 20011 sub-batches of 1"), std::string::npos)
      << r.out;
  const std::string note =
      "each of the 20011 passes holds one sample: k = 20011 is prime, so one sample per pass is "
      "its only split";
  EXPECT_NE(r.out.find("  note: " + note), std::string::npos) << r.out;
  const auto j = run({"plan", "--db", kSample, "--budget", "16MiB", "--policy", "swap-all",
                      "--batch", "20011", "--allow-sub-batches", "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  const json doc = json::parse(j.out);
  ASSERT_TRUE(doc.contains("notes")) << j.out;
  EXPECT_EQ(doc["notes"][0].get<std::string>().rfind(note, 0), 0u) << j.out;
  // 20012 = 4 x 5003 splits into larger passes: no note.
  const auto even = run({"plan", "--db", kSample, "--budget", "16MiB", "--policy", "swap-all",
                         "--batch", "20012", "--allow-sub-batches"});
  ASSERT_EQ(even.code, 0) << even.err;
  EXPECT_EQ(even.out.find("holds one sample"), std::string::npos) << even.out;
}

TEST_F(CliDbSafety, SigintStopsARunWithinAnIterationOfTwentyThousandPasses) {
  const std::string plan = path("prime.json"), db = path("prime.swapdb");
  ASSERT_EQ(run({"plan", "--db", kSample, "--budget", "16MiB", "--policy", "swap-all", "--batch",
                 "20011", "--allow-sub-batches", "--out", plan})
                .code,
            0);
  const std::string printed = path("out.txt");
  const pid_t pid = testing::startCli(
      {"run", "--plan", plan, "--warmup", "0", "--iters", "3", "--db", db}, printed);
  ASSERT_GT(pid, 0);
  // The iteration has begun once the plan is recorded (its first pass needs milliseconds, all
  // of them minutes).
  bool recorded = false;
  for (int i = 0; i < 6000 && !recorded; ++i) {
    try {
      recorded = store::RunReader(db).counts().plans == 1;
    } catch (const Error&) {
    }
    if (!recorded) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(recorded);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(pid, SIGINT);
  // A hang, not a time: the run ends within a pass, so long before 60 s.
  int status = 0;
  bool ended = false;
  for (int i = 0; i < 600 && !ended; ++i) {
    ended = waitpid(pid, &status, WNOHANG) == pid;
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!ended) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  ASSERT_TRUE(ended) << "run still running 60 s after SIGINT";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  const store::RunData d = store::RunReader(db).load();
  EXPECT_EQ(d.meta.status, store::RunStatus::Incomplete);
  EXPECT_EQ(d.meta.status_message,
            "interrupted after " + std::to_string(d.iterations.size()) + " measured iterations");
}

// --- a run that ended before its network was recorded ------------------------------------------

TEST_F(CliDbSafety, EveryVerbSaysTheRunEndedBeforeItsNetworkWasRecorded) {
  const std::string db = path("early.swapdb");
  {
    store::RunMeta meta;
    meta.kind = "profile";
    store::RunWriter w(db, meta);  // killed before writeNetwork: no network, no iterations
  }
  const std::string said = db + ": the run ended before its network was recorded; nothing to ";
  auto r = run({"plan", "--db", db, "--budget", "16MiB"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(said + "plan"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;
  for (const auto& args : {std::vector<std::string>{"compare", db, kSample},
                           std::vector<std::string>{"compare", kSample, db}}) {
    r = run(args);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.err.find(said + "compare"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("networks differ"), std::string::npos) << r.out;
  }
  // A plan whose source_db is such a file.
  const std::string plan = path("plan.json");
  ASSERT_EQ(testing::writeFmnistPlan(swapscope::testing::sampleRunsDir(), plan).code, 0);
  json p = json::parse(std::ifstream(plan));
  p["source_db"] = db;
  std::ofstream(plan) << p.dump(2);
  r = run({"run", "--plan", plan, "--iters", "1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(said + "run"), std::string::npos) << r.err;
}

// A pool alignment that no pool has (edited or damaged meta) was refused by plan and compare
// but read by info and trace: every verb that reads a run database refuses it alike, naming
// the file, the field and the value, before any output is written.
TEST_F(CliDbSafety, EveryVerbRefusesAPoolAlignmentThatIsNoPowerOfTwoAlike) {
  const std::string db = path("edited.swapdb");
  const std::string trace = path("trace.json");
  for (const std::string bad : {"0", "-64", "48", "2147483648", "lots"}) {
    SCOPED_TRACE(bad);
    fs::copy_file(kSample, db, fs::copy_options::overwrite_existing);
    execSql(db, "UPDATE meta SET value = '" + bad + "' WHERE key = 'pool_alignment'");
    const std::string said = "error: '" + db + "' is damaged: meta 'pool_alignment' is '" + bad +
                             "', not a power of two of bytes up to 1 GiB";
    for (const auto& args : {std::vector<std::string>{"info", "--db", db},
                             std::vector<std::string>{"info", "--db", db, "--json"},
                             std::vector<std::string>{"trace", "--db", db, "--out", trace},
                             std::vector<std::string>{"trace", "--db", db, "--out", "-"},
                             std::vector<std::string>{"plan", "--db", db, "--budget", "16MiB"},
                             std::vector<std::string>{"compare", db, kSample},
                             std::vector<std::string>{"compare", kSample, db}}) {
      SCOPED_TRACE(args.front());
      const testing::Result r = run(args);
      EXPECT_EQ(r.code, 2) << r.out;
      EXPECT_NE(r.err.find(said), std::string::npos) << r.err;
      EXPECT_EQ(r.out, "");
      EXPECT_FALSE(fs::exists(trace));
    }
  }
}

// --- a relative source_db --------------------------------------------------------------------

TEST_F(CliDbSafety, ARelativeSourceDbIsReadFromThePlanFilesFolder) {
  fs::create_directories(m_dir / "runs");
  fs::create_directories(m_dir / "plans");
  fs::create_directories(m_dir / "elsewhere");
  fs::copy_file(kSample, m_dir / "runs" / "fmnist.swapdb");
  fs::current_path(m_dir);
  auto r = run({"plan", "--db", "runs/fmnist.swapdb", "--budget", "16MiB", "--batch", "8", "--out",
                "plans/p.json"});
  ASSERT_EQ(r.code, 0) << r.err;
  // Written relative to the plan's folder, where `run` looks for it.
  EXPECT_EQ(json::parse(std::ifstream(m_dir / "plans" / "p.json"))["source_db"],
            "../runs/fmnist.swapdb");
  fs::current_path(m_dir / "elsewhere");
  r = run({"run", "--plan", "../plans/p.json", "--iters", "1", "--warmup", "0"});
  EXPECT_EQ(r.code, 0) << r.err;
  // Missing: the error names the path it tried, and how it got there.
  fs::remove(m_dir / "runs" / "fmnist.swapdb");
  r = run({"run", "--plan", "../plans/p.json", "--iters", "1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("../plans/p.json: source_db: cannot open '../runs/fmnist.swapdb': no such "
                       "file (its source_db '../runs/fmnist.swapdb' is taken from the plan "
                       "file's folder)"),
            std::string::npos)
      << r.err;
}

// --- a profile's stability ---------------------------------------------------------------------

TEST_F(CliDbSafety, AProfilePrintsAndStoresItsStability) {
  const std::string db = path("p.swapdb");
  const auto r = run({"profile", "--model", "fmnist-cnn", "--budget", "16MiB", "--max-batch", "4",
                      "--iters", "3", "--warmup", "0", "--db", db});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("stability     iterations spread "), std::string::npos) << r.out;
  const store::RunData d = store::RunReader(db).load();
  const auto s = perf::readStability(d);
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->per_k.size(), 4u);  // k = 1, 2, 3, 4
  for (const perf::KStability& k : s->per_k)
    EXPECT_EQ(k.iterations, 3);
  EXPECT_GE(s->preempted_compute, 0);
  const auto info = run({"info", "--db", db, "--json"});
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_EQ(json::parse(info.out)["stability"]["per_k"].size(), 4u);
  // A profile made before stability was measured.
  const auto old = run({"info", "--db", kSample});
  EXPECT_NE(old.out.find("stability     not measured"), std::string::npos) << old.out;
}

TEST_F(CliDbSafety, AnUnsteadyProfileIsWarnedAboutByInfoAndPlan) {
  const std::string db = path("busy.swapdb");
  fs::copy_file(kSample, db);
  perf::ProfileStability s;
  s.per_k = {{16, 3, 40000000, 0.61}};
  s.spread = s.largest = 0.61;
  s.worst_k = 16;
  s.preempted_compute = 7;
  s.preempted_waits = 2;
  std::string value = perf::stabilityToMeta(s);
  execSql(db, "INSERT INTO meta(key, value) VALUES ('stability', '" + value + "')");
  const std::string warning =
      "the machine was busy while it was profiled: its iteration times spread 61 % ((p90 - p10) / "
      "median at each k, the median over its minibatches)";
  auto r = run({"info", "--db", db});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("warning       " + warning), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("7 compute and 2 start-wait samples left out as preempted"),
            std::string::npos)
      << r.out;
  r = run({"plan", "--db", db, "--budget", "16MiB", "--batch", "8"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("  warning           " + db + ": " + warning), std::string::npos) << r.out;
  r = run({"plan", "--db", db, "--budget", "16MiB", "--batch", "8", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["notes"][0].get<std::string>().rfind(warning, 0), 0u) << r.out;
  // A steady profile: no warning.
  s.spread = s.largest = s.per_k[0].spread = 0.05;
  value = perf::stabilityToMeta(s);
  execSql(db, "UPDATE meta SET value = '" + value + "' WHERE key = 'stability'");
  r = run({"plan", "--db", db, "--budget", "16MiB", "--batch", "8"});
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
  // A damaged value is named.
  execSql(db, "UPDATE meta SET value = '[1, 2]' WHERE key = 'stability'");
  r = run({"info", "--db", db});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("is damaged: meta 'stability' is not the stability of a profile"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace swapscope::cli

namespace swapscope::cli {
namespace {

TEST_F(CliDbSafety, InfoNamesTheCapOnlyWhereItStoppedTheProfile) {
  const std::string db = path("cap.swapdb");
  fs::copy_file(kSample, db);
  // Its profile stopped at k_max, below the cap of 128.
  execSql(db, "UPDATE meta SET value = '94' WHERE key = 'k_max'");
  auto r = run({"info", "--db", db});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(" 94 under swap-all"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("the cap"), std::string::npos) << r.out;
  execSql(db, "UPDATE meta SET value = '16' WHERE key = 'max_batch'");
  r = run({"info", "--db", db});
  EXPECT_NE(r.out.find(" 94 (profiled up to the cap, k = 16) under swap-all"), std::string::npos)
      << r.out;
}

TEST_F(CliDbSafety, PlanWarnsOfAProfileThatDidNotFinish) {
  const std::string db = path("stopped.swapdb");
  fs::copy_file(kSample, db);
  auto r = run({"plan", "--db", db, "--budget", "16MiB", "--batch", "8"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;  // complete
  execSql(db,
          "UPDATE meta SET value = 'incomplete' WHERE key = 'status'; "
          "UPDATE meta SET value = 'interrupted after 6 recorded iterations' "
          "WHERE key = 'status_message'");
  const std::string warning =
      "the profile is incomplete (interrupted after 6 recorded iterations): the model is fitted "
      "to what it recorded before it stopped";
  r = run({"plan", "--db", db, "--budget", "16MiB", "--batch", "8"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("  warning           " + db + ": " + warning), std::string::npos) << r.out;
  r = run({"plan", "--db", db, "--budget", "16MiB", "--batch", "8", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["notes"][0].get<std::string>().rfind(warning, 0), 0u) << r.out;
}

}  // namespace
}  // namespace swapscope::cli
