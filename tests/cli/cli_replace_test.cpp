// SPDX-License-Identifier: MIT
// `profile --force` and `run --db F --force` onto an existing database, with the real binary
// killed at several moments or stopped by a file-size limit: at every moment the earlier run is
// under its name, or the new complete one is; an unfinished run stays under the recording name
// the verb printed at its start.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "run_cli.h"
#include "sample_runs.h"
#include "spawn_cli.h"
#include "store/run_db.h"

namespace swapscope::cli {
namespace {

namespace fs = std::filesystem;
using testing::run;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Waits up to 60 s until `file` contains `text`.
bool waitForText(const std::string& file, const std::string& text) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (slurp(file).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

/// A folder per test holding a copy of one earlier profile (4 iterations, k = 1 and 2) as
/// `run.swapdb`.
class CliReplace : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    s_earlier = (fs::temp_directory_path() /
                 ("swapscope-replace-" + std::to_string(getpid()) + "-earlier.swapdb"))
                    .string();
    fs::remove(s_earlier);
    s_made = run({"profile", "--model", "fmnist-cnn", "--budget", "16MiB", "--max-batch", "2",
                  "--iters", "2", "--warmup", "0", "--db", s_earlier});
    if (s_made.code == 0) s_started = store::RunReader(s_earlier).meta().started_utc;
  }
  static void TearDownTestSuite() { fs::remove(s_earlier); }
  void SetUp() override {
    ASSERT_EQ(s_made.code, 0) << s_made.err;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_dir = fs::temp_directory_path() /
            ("swapscope-replace-" + std::to_string(getpid()) + "-" + info->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
    m_db = (m_dir / "run.swapdb").string();
    m_recording = (m_dir / "run.recording.swapdb").string();
    fs::copy_file(s_earlier, m_db);
  }
  void TearDown() override { fs::remove_all(m_dir); }
  std::string path(const std::string& name) const { return (m_dir / name).string(); }

  /// Whether `m_db` still holds the earlier profile, whole.
  ::testing::AssertionResult holdsEarlier() const {
    try {
      const store::RunData d = store::RunReader(m_db).load();
      if (d.meta.started_utc == s_started && d.iterations.size() == 4u &&
          d.meta.status == store::RunStatus::Complete)
        return ::testing::AssertionSuccess();
      return ::testing::AssertionFailure()
             << m_db << " holds a run started " << d.meta.started_utc << " with "
             << d.iterations.size() << " iterations, status " << runStatusName(d.meta.status);
    } catch (const Error& e) {
      return ::testing::AssertionFailure() << e.what();
    }
  }
  std::string announced() const {
    return "recording into '" + m_recording + "'; it replaces '" + m_db +
           "' once the run completes";
  }
  std::string kept() const {
    return "'" + m_db + "' still holds the earlier run; this run is in '" + m_recording + "'";
  }

  static inline std::string s_earlier, s_started;
  static inline testing::Result s_made;
  fs::path m_dir;
  std::string m_db, m_recording;
};

/// Kills the profile at three moments with each of the three signals.
TEST_F(CliReplace, AProfileStoppedAtAnyMomentLeavesTheEarlierDatabaseUnderItsName) {
  struct Moment {
    const char* name;
    std::int64_t iterations;  ///< recorded by the new run before the signal
    std::vector<std::string> limits;
  };
  const Moment moments[] = {
      {"at the start", 0, {"--max-batch", "8", "--iters", "1000"}},
      {"mid-run", 3, {"--max-batch", "8", "--iters", "1000"}},
      // The last of its 6 iterations, or its fits, may be running: it may also have finished.
      {"near the end", 5, {"--max-batch", "2", "--iters", "3"}},
  };
  for (const Moment& m : moments) {
    for (const int sig : {SIGKILL, SIGINT, SIGTERM}) {
      SCOPED_TRACE(std::string(m.name) + ", signal " + std::to_string(sig));
      std::vector<std::string> args = {"profile",  "--model", "fmnist-cnn", "--budget", "16MiB",
                                       "--warmup", "0",       "--db",       m_db,       "--force"};
      args.insert(args.end(), m.limits.begin(), m.limits.end());
      const std::string printed = path("out.txt");
      const pid_t pid = testing::startCli(args, printed);
      ASSERT_GT(pid, 0);
      ASSERT_TRUE(waitForText(printed, announced())) << slurp(printed);
      // While the new run is recorded, the earlier one is under its name.
      EXPECT_TRUE(holdsEarlier());
      if (m.iterations > 0) {
        // The recording exists once the run is announced: gone, the run finished and its file
        // replaced the database (what follows the signal tells the cases apart).
        EXPECT_TRUE(testing::waitForIterations(m_recording, m.iterations, true));
      }
      kill(pid, sig);
      int status = 0;
      waitpid(pid, &status, 0);
      const std::string out = slurp(printed);
      if (!fs::exists(m_recording)) {
        // It finished before the signal: the new complete run replaced the earlier one.
        ASSERT_STREQ(m.name, "near the end") << out;
        const store::RunData d = store::RunReader(m_db).load();
        EXPECT_EQ(d.meta.status, store::RunStatus::Complete);
        EXPECT_EQ(d.iterations.size(), 6u);
      } else if (const store::RunData d = store::RunReader(m_recording).load();
                 d.meta.status == store::RunStatus::Complete) {
        // It finished while this test's poll (waitForIterations) still read the recording: a
        // run replaces the earlier file only as one self-contained file, so it stays beside it,
        // complete, and says why; the earlier run keeps its name.
        ASSERT_STREQ(m.name, "near the end") << out;
        EXPECT_TRUE(holdsEarlier());
        EXPECT_EQ(d.iterations.size(), 6u);
        if (WIFSIGNALED(status)) {
          // The signal came as the finished run was saying so: it stopped the process then,
          // with nothing left to record.
          EXPECT_EQ(WTERMSIG(status), sig) << out;
        } else {
          // The database was not replaced: an error, for a script that would read it next.
          ASSERT_TRUE(WIFEXITED(status)) << out;
          EXPECT_EQ(WEXITSTATUS(status), 1) << out;
          EXPECT_NE(out.find("another process held it open as the run ended"), std::string::npos)
              << out;
        }
      } else {
        EXPECT_TRUE(holdsEarlier());
        EXPECT_EQ(d.meta.status, store::RunStatus::Incomplete);
        EXPECT_GE(d.iterations.size(), static_cast<std::size_t>(m.iterations));
        if (sig == SIGKILL) {
          EXPECT_TRUE(WIFSIGNALED(status));
        } else {
          ASSERT_TRUE(WIFEXITED(status)) << out;
          EXPECT_EQ(WEXITSTATUS(status), 1) << out;
          EXPECT_NE(out.find(kept()), std::string::npos) << out;
        }
      }
      for (const char* suffix : {"", "-wal", "-shm"})
        fs::remove(m_recording + suffix);
      fs::copy_file(s_earlier, m_db, fs::copy_options::overwrite_existing);
    }
  }
}

TEST_F(CliReplace, AProfileThatCompletesReplacesTheDatabaseInOneMove) {
  const auto r = run({"profile", "--model", "fmnist-cnn", "--budget", "16MiB", "--max-batch", "1",
                      "--iters", "1", "--warmup", "0", "--db", m_db, "--force"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(announced()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wrote " + m_db + " (complete)"), std::string::npos) << r.out;
  const store::RunData d = store::RunReader(m_db).load();
  EXPECT_EQ(d.meta.status, store::RunStatus::Complete);
  EXPECT_EQ(d.iterations.size(), 1u);
  EXPECT_FALSE(fs::exists(m_recording));
  for (const char* side : {"-wal", "-shm", "-journal"})
    EXPECT_FALSE(fs::exists(m_db + side)) << side;
}

/// The test holds the recording open as the profile ends, as the app watching a live run does:
/// the run cannot move over the database as one self-contained file, so it stays beside it,
/// complete, and the earlier run keeps its name. The exit code and an error say that the
/// database was not replaced, so that a script does not go on with the earlier run.
TEST_F(CliReplace, ARunThatCompletesButCannotReplaceTheDatabaseEndsWithAnError) {
  const std::string printed = path("out.txt"), errors = path("err.txt");
  const std::string script = "exec '" SWAPSCOPE_CLI_BINARY
                             "' profile --model fmnist-cnn --budget 16MiB --max-batch 2 "
                             "--warmup 0 --iters 300 --db '" +
                             m_db + "' --force 2>'" + errors + "'";
  const pid_t pid = testing::startProgram({"/bin/bash", "-c", script}, printed);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(testing::waitForIterations(m_recording, 1));
  int status = 0;
  {
    store::RunReader reader(m_recording);  // open until the run has ended
    ASSERT_GE(reader.counts().iterations, 1);
    waitpid(pid, &status, 0);
  }
  const std::string out = slurp(printed), err = slurp(errors);
  ASSERT_TRUE(WIFEXITED(status)) << out << err;
  EXPECT_EQ(WEXITSTATUS(status), 1) << out << err;
  EXPECT_NE(err.find("error: the run completed but did not replace the database: " + kept()),
            std::string::npos)
      << err;
  EXPECT_TRUE(holdsEarlier());
  const store::RunData d = store::RunReader(m_recording).load();
  EXPECT_EQ(d.meta.status, store::RunStatus::Complete);
  for (const char* suffix : {"", "-wal", "-shm"})
    fs::remove(m_recording + suffix);
}

/// `ulimit -f` in a child shell: the recording outgrows the limit. The program ignores SIGXFSZ
/// whether its caller did or not, so the write fails (EFBIG) and the run ends failed, saying
/// where it is.
TEST_F(CliReplace, AFileSizeLimitLeavesTheEarlierDatabaseAndSaysWhereTheRunIs) {
  for (const bool ignored : {false, true}) {
    SCOPED_TRACE(ignored ? "SIGXFSZ ignored" : "SIGXFSZ at its default");
    const std::string printed = path("out.txt"), errors = path("err.txt");
    const std::string script = std::string(ignored ? "trap '' XFSZ; " : "") +
                               "ulimit -f 128; exec '" SWAPSCOPE_CLI_BINARY
                               "' profile --model fmnist-cnn --budget 16MiB --max-batch 8 "
                               "--warmup 0 --iters 1000 --db '" +
                               m_db + "' --force 2>'" + errors + "'";
    const pid_t pid = testing::startProgram({"/bin/bash", "-c", script}, printed);
    ASSERT_GT(pid, 0);
    int status = 0;
    waitpid(pid, &status, 0);
    const std::string out = slurp(printed), err = slurp(errors);
    EXPECT_NE(out.find(announced()), std::string::npos) << out;
    ASSERT_TRUE(WIFEXITED(status)) << out << err;
    EXPECT_EQ(WEXITSTATUS(status), 1) << out << err;
    EXPECT_NE(err.find(kept()), std::string::npos) << err;
    EXPECT_TRUE(holdsEarlier());
    // What the new run committed before the limit is readable under the recording's name.
    const store::RunData d = store::RunReader(m_recording).load();
    EXPECT_NE(d.meta.status, store::RunStatus::Complete);
    EXPECT_GE(d.iterations.size(), 1u);
    for (const char* suffix : {"", "-wal", "-shm"})
      fs::remove(m_recording + suffix);
  }
}

TEST_F(CliReplace, ARunStoppedMidwayLeavesTheEarlierDatabaseAndOneThatCompletesReplacesIt) {
  const std::string plan = path("plan.json");
  ASSERT_EQ(testing::writeFmnistPlan(swapscope::testing::sampleRunsDir(), plan).code, 0);
  const std::string printed = path("out.txt");
  bool started = false;
  const int status = testing::signalWhenRecorded(
      testing::startCli(
          {"run", "--plan", plan, "--iters", "100000", "--warmup", "0", "--db", m_db, "--force"},
          printed),
      m_recording, 2, SIGTERM, started);
  ASSERT_TRUE(started);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  const std::string out = slurp(printed);
  EXPECT_NE(out.find(announced()), std::string::npos) << out;
  EXPECT_NE(out.find(kept() + " (it did not complete)"), std::string::npos) << out;
  EXPECT_TRUE(holdsEarlier());
  {
    const store::RunData d = store::RunReader(m_recording).load();
    EXPECT_EQ(d.meta.kind, "run");
    EXPECT_EQ(d.meta.status, store::RunStatus::Incomplete);
    EXPECT_GE(d.iterations.size(), 2u);
  }
  fs::remove(m_recording);
  const auto done =
      run({"run", "--plan", plan, "--iters", "1", "--warmup", "0", "--db", m_db, "--force"});
  ASSERT_EQ(done.code, 0) << done.err;
  const store::RunData d = store::RunReader(m_db).load();
  EXPECT_EQ(d.meta.kind, "run");
  EXPECT_EQ(d.meta.status, store::RunStatus::Complete);
  EXPECT_FALSE(fs::exists(m_recording));
}

}  // namespace
}  // namespace swapscope::cli
