// SPDX-License-Identifier: MIT
// A run database replaced with overwrite: the earlier file stays under its name until a complete
// run is moved over it; an interrupted, failed or killed run stays under its recording name.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "run_db_fixture.h"

namespace swapscope::store {
namespace {

class RunDbReplace : public RunDbTest {
 protected:
  /// Writes one whole iteration at k = 8 to `w` (the first also writes the batches row of k = 8,
  /// which a complete run holds for each k it recorded).
  static void addOneIteration(RunWriter& w, int it) {
    if (it == 0) w.addBatch({8, "swap-all", 1, 2000, 2000, 0, 0});
    w.addIteration(wholeIteration(8, it, 1000 * it));
  }
  /// A writer of `path` (replacing it) with the network written.
  static std::unique_ptr<RunWriter> replacement(const std::string& path) {
    RunMeta meta;
    meta.kind = "profile";
    meta.started_utc = "2026-11-22T09:00:00Z";
    meta.budget = 64 << 20;
    const Network net = testing::tinyNetwork();
    const auto costs = computeLayerCosts(net);
    const MemoryPlan plan = planMemory(net, costs, makeSwapSet(Policy::SwapAll, net, costs));
    auto w = std::make_unique<RunWriter>(path, meta, /*overwrite=*/true);
    w->writeNetwork(net, costs, plan.gmap);
    return w;
  }
  /// In a child process: replaces `path` with `iterations` iterations and dies without
  /// finishing, as a SIGKILL leaves it.
  static void killedReplacement(const std::string& path, int iterations) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto w = replacement(path);
      for (int it = 0; it < iterations; ++it)
        addOneIteration(*w, it);
      std::_Exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
  }
  /// The sample (2 iterations at k = 8, started 2026-11-21T10:00:00Z) at `name`.
  std::string earlier(const std::string& name) {
    const std::string path = file(name);
    writeSample(path);
    return path;
  }
  static void expectEarlier(const std::string& path) {
    const RunData d = RunReader(path).load();
    EXPECT_EQ(d.meta.started_utc, "2026-11-21T10:00:00Z") << path;
    EXPECT_EQ(d.meta.status, RunStatus::Complete) << path;
    EXPECT_EQ(d.iterations.size(), 2u) << path;
  }
};

TEST_F(RunDbReplace, TheRunIsRecordedBesideTheEarlierFileUntilItCompletes) {
  const std::string path = earlier("run.swapdb");
  auto w = replacement(path);
  EXPECT_TRUE(w->replacing());
  EXPECT_EQ(w->path(), file("run.recording.swapdb"));
  EXPECT_EQ(w->target(), path);
  EXPECT_EQ(w->recordingNote(), "recording into '" + w->path() + "'; it replaces '" + path +
                                    "' once the run completes (until then, or if it does not "
                                    "complete, '" +
                                    path + "' keeps the earlier run)");
  addOneIteration(*w, 0);
  // While it runs: the earlier run under its name, the live one readable under the recording's.
  expectEarlier(path);
  {
    RunReader live(w->path());
    EXPECT_EQ(live.meta().status, RunStatus::Running);
    EXPECT_EQ(live.counts().iterations, 1);
    EXPECT_EQ(live.meta().extra.at("replaces"), path);
  }
  w->finish(RunStatus::Complete);
  EXPECT_EQ(w->path(), path);
  EXPECT_EQ(w->keptNote(), "");
  const RunData d = RunReader(path).load();
  EXPECT_EQ(d.meta.started_utc, "2026-11-22T09:00:00Z");
  EXPECT_EQ(d.meta.status, RunStatus::Complete);
  EXPECT_EQ(d.iterations.size(), 1u);
  EXPECT_FALSE(fs::exists(file("run.recording.swapdb")));
  for (const char* side : {"-wal", "-shm", "-journal"})
    EXPECT_FALSE(fs::exists(path + side)) << side;
}

TEST_F(RunDbReplace, AnInterruptedOrFailedRunKeepsTheEarlierFileAndSaysWhereItIs) {
  for (RunStatus status : {RunStatus::Incomplete, RunStatus::Failed}) {
    SCOPED_TRACE(std::string(runStatusName(status)));
    const std::string path = earlier("run.swapdb");
    auto w = replacement(path);
    addOneIteration(*w, 0);
    w->finish(status, "stopped");
    const std::string recording = file("run.recording.swapdb");
    EXPECT_EQ(w->path(), recording);
    EXPECT_EQ(w->keptNote(), "'" + path + "' still holds the earlier run; this run is in '" +
                                 recording + "' (it did not complete)");
    expectEarlier(path);
    const RunData d = RunReader(recording).load();
    EXPECT_EQ(d.meta.status, status);
    EXPECT_EQ(d.iterations.size(), 1u);
    fs::remove(recording);
    fs::remove(path);
  }
}

TEST_F(RunDbReplace, AWriterDestroyedUnfinishedKeepsTheEarlierFile) {
  const std::string path = earlier("run.swapdb");
  {
    auto w = replacement(path);
    addOneIteration(*w, 0);
  }  // an exception unwinding past the writer
  expectEarlier(path);
  EXPECT_EQ(RunReader(file("run.recording.swapdb")).meta().status, RunStatus::Incomplete);
}

TEST_F(RunDbReplace, AKilledRunLeavesTheEarlierFileAndItsRecordingWhichTheNextRunKeeps) {
  const std::string path = earlier("run.swapdb");
  killedReplacement(path, 3);
  expectEarlier(path);
  const std::string first = file("run.recording.swapdb");
  {
    const RunData d = RunReader(first).load();
    EXPECT_EQ(d.meta.status, RunStatus::Incomplete);  // its writer is gone
    EXPECT_EQ(d.iterations.size(), 3u);
  }
  // The next replacement records under another name and leaves the killed one's alone, and
  // says that it is there.
  auto w = replacement(path);
  EXPECT_EQ(w->path(), file("run.recording-2.swapdb"));
  EXPECT_EQ(w->recordingNote(),
            "recording into '" + w->path() + "'; it replaces '" + path +
                "' once the run completes (until then, or if it does not complete, '" + path +
                "' keeps the earlier run); '" + first +
                "' holds a run recorded earlier that did not replace it; remove it once no "
                "longer needed");
  addOneIteration(*w, 0);
  w->finish(RunStatus::Complete);
  EXPECT_EQ(RunReader(path).counts().iterations, 1);
  EXPECT_EQ(RunReader(first).counts().iterations, 3);
}

// Recordings left by earlier runs are each named up to three, then counted.
TEST_F(RunDbReplace, TheRecordingsOfEarlierRunsAreNamedSoThatTheyDoNotPileUpUnnoticed) {
  const std::string path = earlier("run.swapdb");
  for (const char* name : {"run.recording.swapdb", "run.recording-2.swapdb",
                           "run.recording-3.swapdb", "run.recording-4.swapdb"})
    writeBytes(file(name), "an earlier run");
  auto w = replacement(path);
  EXPECT_EQ(w->path(), file("run.recording-5.swapdb"));
  const std::string note = w->recordingNote();
  EXPECT_NE(note.find("; '" + file("run.recording.swapdb") + "', '" +
                      file("run.recording-2.swapdb") + "', '" + file("run.recording-3.swapdb") +
                      "' and 1 more hold runs recorded earlier that did not replace it; remove "
                      "them once no longer needed"),
            std::string::npos)
      << note;
  // Left as they were.
  EXPECT_EQ(readBytes(file("run.recording-4.swapdb")), "an earlier run");
  w.reset();
  for (const char* name :
       {"run.recording-3.swapdb", "run.recording-4.swapdb", "run.recording-5.swapdb"})
    fs::remove(file(name));
  w = replacement(path);
  EXPECT_EQ(w->path(), file("run.recording-3.swapdb"));
  EXPECT_NE(w->recordingNote().find("; '" + file("run.recording.swapdb") + "' and '" +
                                    file("run.recording-2.swapdb") + "' hold runs recorded"),
            std::string::npos)
      << w->recordingNote();
  // Those past a name since removed are named too.
  w.reset();
  fs::remove(file("run.recording-3.swapdb"));
  fs::remove(file("run.recording.swapdb"));
  w = replacement(path);
  EXPECT_EQ(w->path(), file("run.recording.swapdb"));
  EXPECT_NE(w->recordingNote().find("; '" + file("run.recording-2.swapdb") + "' holds a run"),
            std::string::npos)
      << w->recordingNote();
}

TEST_F(RunDbReplace, AFileNotNamedSwapdbGetsTheSuffixAfterItsName) {
  const std::string path = earlier("run.db");
  auto w = replacement(path);
  EXPECT_EQ(w->path(), file("run.db.recording.swapdb"));
  w->finish(RunStatus::Complete);
  EXPECT_EQ(RunReader(path).counts().iterations, 0);
}

TEST_F(RunDbReplace, AnEarlierFileWithCommittedRowsInItsWalIsReplacedWhole) {
  // The earlier run was killed: its rows are in its -wal, which SQLite would apply to any file
  // renamed to its name.
  const std::string path = file("run.swapdb");
  {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      RunMeta meta;
      meta.kind = "profile";
      RunWriter w(path, meta);
      const Network net = testing::tinyNetwork();
      const auto costs = computeLayerCosts(net);
      w.writeNetwork(net, costs,
                     planMemory(net, costs, makeSwapSet(Policy::SwapAll, net, costs)).gmap);
      for (int it = 0; it < 5; ++it)
        addOneIteration(w, it);
      std::_Exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
  }
  ASSERT_GT(fs::file_size(path + "-wal"), 0u);
  ASSERT_EQ(RunReader(path).counts().iterations, 5);
  auto w = replacement(path);
  addOneIteration(*w, 0);
  w->finish(RunStatus::Complete);
  EXPECT_EQ(w->keptNote(), "");
  EXPECT_FALSE(fs::exists(path + "-wal"));
  const RunData d = RunReader(path).load();
  EXPECT_EQ(d.meta.started_utc, "2026-11-22T09:00:00Z");
  EXPECT_EQ(d.iterations.size(), 1u);
}

TEST_F(RunDbReplace, ARecordingHeldOpenAtTheEndIsNotMovedWithoutItsWal) {
  const std::string path = earlier("run.swapdb");
  auto w = replacement(path);
  addOneIteration(*w, 0);
  const std::string recording = w->path();
  {
    RunReader reader(recording);  // the app watching the live run
    EXPECT_EQ(reader.counts().iterations, 1);
    w->finish(RunStatus::Complete);
  }
  EXPECT_EQ(w->path(), recording);
  EXPECT_EQ(w->keptNote(), "'" + path + "' still holds the earlier run; this run is in '" +
                               recording + "' (it was not moved over '" + path +
                               "': another process held it open as the run ended, so its -wal "
                               "is beside it)");
  expectEarlier(path);
  const RunData d = RunReader(recording).load();
  EXPECT_EQ(d.meta.status, RunStatus::Complete);
  EXPECT_EQ(d.iterations.size(), 1u);
}

TEST_F(RunDbReplace, ARunWhoseDatabaseAnotherRunReplacedMeanwhileIsNotMovedOverIt) {
  // Another file takes the database's name while the run is recorded, as a second run that
  // replaced it with --force and completed first would (a second replacement started after
  // this one is refused; one that raced its start is not): the run stays beside it, so that
  // neither run is lost.
  const std::string path = earlier("run.swapdb");
  auto w = replacement(path);
  addOneIteration(*w, 0);
  const std::string other = earlier("other.swapdb");
  const std::string otherBytes = readBytes(other);
  fs::rename(other, path);
  addOneIteration(*w, 1);
  addOneIteration(*w, 2);
  const std::string recording = w->path();
  w->finish(RunStatus::Complete);
  EXPECT_EQ(w->path(), recording);
  EXPECT_EQ(w->keptNote(),
            "'" + path + "' holds another file now; this run is in '" + recording +
                "' (it was not moved over '" + path +
                "': another file took its name while this run was recorded (another run that "
                "replaced it with --force, most likely); moving this run over it would lose "
                "that one)");
  EXPECT_TRUE(readBytes(path) == otherBytes);
  const RunData d = RunReader(recording).load();
  EXPECT_EQ(d.meta.status, RunStatus::Complete);
  EXPECT_EQ(d.iterations.size(), 3u);
}

/// Runs in `dir` as the working folder, and back.
class InFolder {
 public:
  explicit InFolder(const fs::path& dir) : m_back(fs::current_path()) { fs::current_path(dir); }
  ~InFolder() { fs::current_path(m_back); }
  InFolder(const InFolder&) = delete;
  InFolder& operator=(const InFolder&) = delete;

 private:
  fs::path m_back;
};

std::string bytesOf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST_F(RunDbReplace, ANameStartingWithFileIsThatFileNotAnSqliteUri) {
  // SQLite reads "file:v.swapdb" as a URI naming v.swapdb where URI names are on: the database
  // of that name must be the one written, replaced and read, and v.swapdb never touched.
  const InFolder here(file(""));
  earlier("v.swapdb");
  const std::string bystander = bytesOf("v.swapdb");
  // Written new, read back under its own name.
  writeSample("file:new.swapdb");
  EXPECT_TRUE(fs::exists("file:new.swapdb"));
  EXPECT_FALSE(fs::exists("new.swapdb"));
  EXPECT_EQ(RunReader("file:new.swapdb").load().iterations.size(), 2u);
  // Replaced: the recording beside it, then moved over it.
  writeSample("file:v.swapdb");
  auto w = replacement("file:v.swapdb");
  EXPECT_EQ(w->path(), "file:v.recording.swapdb");
  addOneIteration(*w, 0);
  expectEarlier("file:v.swapdb");
  w->finish(RunStatus::Complete);
  const RunData d = RunReader("file:v.swapdb").load();
  EXPECT_EQ(d.meta.started_utc, "2026-11-22T09:00:00Z");
  EXPECT_EQ(d.iterations.size(), 1u);
  EXPECT_FALSE(fs::exists("v.recording.swapdb"));
  EXPECT_FALSE(fs::exists("file:v.recording.swapdb"));
  EXPECT_EQ(bytesOf("v.swapdb"), bystander);
  for (const char* side : {"-wal", "-shm", "-journal"})
    EXPECT_FALSE(fs::exists(std::string("v.swapdb") + side)) << side;
}

TEST_F(RunDbReplace, ARunKilledWhileItCreatesItsFileLeavesNoneOrOneThatReads) {
  // SIGKILL at moments spread over the creation (a few milliseconds): the file under its name is
  // either absent or a run database that reads, never empty or without its application id.
  int absent = 0, readable = 0;
  for (int i = 0; i < 40; ++i) {
    const std::string path = file("new-" + std::to_string(i) + ".swapdb");
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      RunWriter w(path, sampleMeta());
      for (;;)
        ::pause();
    }
    if (i < 39) {
      std::this_thread::sleep_for(std::chrono::microseconds(250 * i));
    } else {  // the last once the file is there: it must read
      for (int wait = 0; wait < 5000 && !fs::exists(path); ++wait)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!fs::exists(path)) {
      ++absent;
      continue;
    }
    try {
      EXPECT_EQ(RunReader(path).meta().status, RunStatus::Incomplete) << i;
      ++readable;
    } catch (const Error& e) {
      ADD_FAILURE() << "killed after " << 250 * i << " us: " << e.what();
    }
  }
  EXPECT_EQ(absent + readable, 40);
  EXPECT_GT(readable, 0);  // the last kill, at least, finds it made
}

TEST_F(RunDbReplace, ANewFileIsWrittenUnderItsOwnName) {
  const std::string path = file("new.swapdb");
  auto w = replacement(path);
  EXPECT_FALSE(w->replacing());
  EXPECT_EQ(w->path(), path);
  EXPECT_EQ(w->recordingNote(), "");
  w->finish(RunStatus::Incomplete);
  EXPECT_EQ(w->keptNote(), "");
  EXPECT_EQ(RunReader(path).meta().status, RunStatus::Incomplete);
}

TEST_F(RunDbReplace, ACreationKilledLongAgoLeavesNothingTheNextCreationKeeps) {
  // What a kill during a creation leaves (its file and -wal under the creating name) goes with
  // the next creation in the folder, once its process is gone and a minute has passed; a file
  // of a live process, a fresh one, or another name stays.
  const fs::path dir = fs::path(file("x")).parent_path();
  const auto make = [&](const std::string& name, std::chrono::seconds age) {
    const fs::path p = dir / name;
    std::ofstream(p) << "x";
    fs::last_write_time(p, fs::file_time_type::clock::now() - age);
    return p;
  };
  const std::string self = std::to_string(getpid());
  const fs::path stale = make(".swapscope-creating-999999999-0", std::chrono::seconds(120));
  const fs::path staleWal = make(".swapscope-creating-999999999-0-wal", std::chrono::seconds(120));
  const fs::path fresh = make(".swapscope-creating-999999998-0", std::chrono::seconds(0));
  const fs::path live = make(".swapscope-creating-" + self + "-7", std::chrono::seconds(120));
  const fs::path other = make(".swapscope-creating-notes", std::chrono::seconds(120));
  RunWriter w(file("new.swapdb"), sampleMeta());
  w.finish(RunStatus::Incomplete);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(staleWal));
  EXPECT_TRUE(fs::exists(fresh));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other));
  EXPECT_EQ(RunReader(file("new.swapdb")).meta().status, RunStatus::Incomplete);
}

TEST_F(RunDbReplace, ALinkToAMissingFileIsReplacedByTheDatabaseOnlyWhenAsked) {
  const std::string path = file("link.swapdb");
  const fs::path missing = fs::path(file("gone")) / "target.swapdb";
  fs::create_symlink(missing, path);
  try {
    RunWriter w(path, sampleMeta());
    ADD_FAILURE() << "a dangling link was written without overwrite";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("symbolic link to a missing file"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::is_symlink(path));
  RunWriter w(path, sampleMeta(), /*overwrite=*/true);
  w.finish(RunStatus::Incomplete);
  EXPECT_FALSE(fs::is_symlink(path));  // the link itself was replaced
  EXPECT_FALSE(fs::exists(missing));   // never the missing file it pointed to
  EXPECT_EQ(RunReader(path).meta().status, RunStatus::Incomplete);
}

}  // namespace
}  // namespace swapscope::store
