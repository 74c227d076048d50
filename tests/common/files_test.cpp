// SPDX-License-Identifier: MIT
#include "common/files.h"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>
#include <filesystem>
#include <fstream>

#include "common/error.h"

namespace fs = std::filesystem;
using swapscope::Error;
using swapscope::ErrorKind;
namespace files = swapscope::files;

namespace {

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("swapscope-files-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  std::string path(const std::string& name) const { return (dir / name).string(); }
  static void put(const std::string& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
  }
  static std::string get(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  /// Names in the folder, to see that no temporary file is left behind.
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir;
};

/// The message of the Error that `f` throws, with its kind checked.
template <class F>
std::string errorOf(F&& f, ErrorKind kind) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return {};
}

TEST_F(FilesTest, InputMustBeARegularFile) {
  EXPECT_NE(errorOf([&] { files::checkInputFile(dir.string(), "the network --net"); },
                    ErrorKind::BadInput)
                .find("is a directory, not a regular file"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { files::checkInputFile(path("missing.json"), "the plan --plan"); },
                    ErrorKind::BadInput)
                .find("cannot open the plan --plan '" + path("missing.json") + "': no such file"),
            std::string::npos);
  // A FIFO with no writer would block a plain open forever; it is refused at once.
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  EXPECT_NE(errorOf([&] { files::readInputFile(path("fifo"), "the plan --plan", 1024); },
                    ErrorKind::BadInput)
                .find("is a FIFO, not a regular file"),
            std::string::npos);
}

TEST_F(FilesTest, InputSizeIsBounded) {
  put(path("big.json"), std::string(2000, ' '));
  EXPECT_EQ(files::readInputFile(path("big.json"), "the network", 2000).size(), 2000u);
  const std::string msg = errorOf(
      [&] { files::readInputFile(path("big.json"), "the network", 1999); }, ErrorKind::BadInput);
  EXPECT_NE(msg.find("more than the"), std::string::npos) << msg;
  EXPECT_EQ(files::readInputFile(path("big.json"), "the network", 0).size(), 2000u);
}

TEST_F(FilesTest, ExistingOutputNeedsForce) {
  put(path("plan.json"), "old");
  const std::string msg =
      errorOf([&] { files::writeOutputFile(path("plan.json"), "the plan --out", "new", {}); },
              ErrorKind::BadInput);
  EXPECT_NE(msg.find("exists; pass --force to replace it"), std::string::npos) << msg;
  EXPECT_EQ(get(path("plan.json")), "old");
  files::writeOutputFile(path("plan.json"), "the plan --out", "new", {.force = true});
  EXPECT_EQ(get(path("plan.json")), "new");
  files::writeOutputFile(path("fresh.json"), "the plan --out", "fresh", {});
  EXPECT_EQ(get(path("fresh.json")), "fresh");
  EXPECT_EQ(listing(), (std::vector<std::string>{"fresh.json", "plan.json"}));
}

TEST_F(FilesTest, AnInputIsNeverReplacedWhateverItsName) {
  put(path("a.swapdb"), "database");
  // A hard link and a symbolic link name the same file under other names.
  ASSERT_EQ(::link(path("a.swapdb").c_str(), path("hard.json").c_str()), 0);
  fs::create_symlink(path("a.swapdb"), path("soft.json"));
  const files::OutputRules rules{.force = true,
                                 .inputs = {{"the run database --db", path("a.swapdb")}}};
  for (const char* name : {"a.swapdb", "hard.json", "soft.json"}) {
    const std::string msg =
        errorOf([&] { files::writeOutputFile(path(name), "the plan --out", "plan", rules); },
                ErrorKind::BadInput);
    EXPECT_NE(msg.find("is the same file as the run database --db"), std::string::npos) << msg;
  }
  // The same input named through another spelling of its folder.
  const std::string dotted = (dir / "." / "a.swapdb").string();
  EXPECT_NE(errorOf([&] { files::writeOutputFile(dotted, "the plan --out", "plan", rules); },
                    ErrorKind::BadInput)
                .find("same file"),
            std::string::npos);
  EXPECT_EQ(get(path("a.swapdb")), "database");
}

TEST_F(FilesTest, AnInputThatDoesNotExistYetIsNotWrittenEither) {
  // A run database's -wal file is an input before SQLite makes it: a plan written there would
  // be read as part of the database.
  const files::OutputRules rules{
      .force = true, .inputs = {{"the run database's -wal file", path("a.swapdb-wal")}}};
  const std::string dotted = (dir / "." / "a.swapdb-wal").string();
  for (const std::string& name : {path("a.swapdb-wal"), dotted}) {
    const std::string msg =
        errorOf([&] { files::writeOutputFile(name, "the plan --out", "plan", rules); },
                ErrorKind::BadInput);
    EXPECT_NE(msg.find("is the same file as the run database's -wal file"), std::string::npos)
        << msg;
    EXPECT_FALSE(fs::exists(name));
  }
}

TEST_F(FilesTest, AnInputThatDoesNotExistYetIsNotWrittenThroughALinkedFolder) {
  // A symbolic link to the folder, and a name that goes through a link and back out of it.
  fs::create_directories(dir / "sub");
  fs::create_symlink(dir, path("folder"));
  fs::create_symlink(dir / "sub", path("down"));
  const files::OutputRules rules{
      .force = true, .inputs = {{"the run database's -wal file", path("a.swapdb-wal")}}};
  for (const std::string& name : {path("folder/a.swapdb-wal"), path("down/../a.swapdb-wal"),
                                  path("folder/folder/sub/../a.swapdb-wal")}) {
    const std::string msg =
        errorOf([&] { files::writeOutputFile(name, "the plan --out", "plan", rules); },
                ErrorKind::BadInput);
    EXPECT_NE(msg.find("is the same file as the run database's -wal file"), std::string::npos)
        << name << ": " << msg;
  }
  EXPECT_FALSE(fs::exists(path("a.swapdb-wal")));
  // A name that only looks alike is another file.
  files::writeOutputFile(path("sub/a.swapdb-wal"), "the plan --out", "plan", rules);
  EXPECT_EQ(get(path("sub/a.swapdb-wal")), "plan");
}

TEST_F(FilesTest, AnSqliteDatabasesCompanionFilesAreNeverWritten) {
  // Any SQLite database, not only the command's inputs: a live run's -wal holds its committed
  // iterations, and SQLite takes a -wal or -journal written beside a database as its own.
  const std::string header("SQLite format 3\0rest of page 1", 31);
  put(path("live.swapdb"), header);
  put(path("live.swapdb-wal"), "frames");
  fs::create_symlink(path("live.swapdb-wal"), path("link.json"));
  for (const std::string& name : {path("live.swapdb-wal"), path("live.swapdb-shm"),
                                  path("live.swapdb-journal"), path("link.json")}) {
    const std::string msg =
        errorOf([&] { files::writeOutputFile(name, "the plan --out", "plan", {.force = true}); },
                ErrorKind::BadInput);
    EXPECT_NE(msg.find("file of the SQLite database '"), std::string::npos) << name << ": " << msg;
    EXPECT_NE(msg.find("not even with --force"), std::string::npos) << msg;
  }
  EXPECT_EQ(get(path("live.swapdb-wal")), "frames");
  EXPECT_EQ(get(path("live.swapdb")), header);
  EXPECT_FALSE(fs::exists(path("live.swapdb-shm")));
  EXPECT_FALSE(fs::exists(path("live.swapdb-journal")));
  // Beside a file that is not an SQLite database, or beside none, such a name is a plain file.
  put(path("notes.txt"), "SQLite format 2, say");
  files::writeOutputFile(path("notes.txt-wal"), "the plan --out", "plan", {});
  files::writeOutputFile(path("none-wal"), "the plan --out", "plan", {});
  EXPECT_EQ(get(path("notes.txt-wal")), "plan");
  EXPECT_EQ(get(path("none-wal")), "plan");
  // Nor beside a folder or a FIFO, which is not opened (it would block).
  fs::create_directories(dir / "folder");
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  files::writeOutputFile(path("folder-wal"), "the plan --out", "plan", {});
  files::writeOutputFile(path("fifo-journal"), "the plan --out", "plan", {});
  EXPECT_EQ(get(path("fifo-journal")), "plan");
  // A file that cannot be read might be a database: refused (root reads any file).
  if (::geteuid() != 0) {
    put(path("locked"), header);
    ASSERT_EQ(::chmod(path("locked").c_str(), 0), 0);
    const std::string msg =
        errorOf([&] { files::writeOutputFile(path("locked-wal"), "the plan --out", "plan", {}); },
                ErrorKind::BadInput);
    EXPECT_NE(msg.find("cannot be read to tell whether it is an SQLite database"),
              std::string::npos)
        << msg;
    EXPECT_FALSE(fs::exists(path("locked-wal")));
  }
}

TEST_F(FilesTest, OutputOntoAFolderOrIntoAMissingFolderIsRefused) {
  fs::create_directories(dir / "sub");
  EXPECT_NE(
      errorOf([&] { files::checkOutputPath(path("sub"), "the trace --out", {.force = true}); },
              ErrorKind::BadInput)
          .find("is a directory"),
      std::string::npos);
  EXPECT_NE(errorOf([&] { files::checkOutputPath(path("nope/t.json"), "the trace --out", {}); },
                    ErrorKind::BadInput)
                .find("does not exist"),
            std::string::npos);
}

TEST_F(FilesTest, AFileThatAppearsDuringTheWriteIsNotReplacedWithoutForce) {
  files::AtomicFile out(path("race.json"), "the plan --out", /*replace=*/false);
  out.write("mine");
  put(path("race.json"), "theirs");
  const std::string msg = errorOf([&] { out.commit(); }, ErrorKind::BadInput);
  EXPECT_NE(msg.find("appeared while it was being written"), std::string::npos) << msg;
  EXPECT_EQ(get(path("race.json")), "theirs");
  EXPECT_EQ(listing(), (std::vector<std::string>{"race.json"}));
}

TEST_F(FilesTest, AnOutputWithTheLongestNameIsWrittenAndReplaced) {
  // A file name may take 255 bytes; the temporary beside it must fit in as many.
  for (const std::string& name :
       {std::string(250, 'b') + ".json",
        std::string(242, 'b') + "\u00e9.json"}) {  // the temporary's cut falls inside the é
    ASSERT_LE(name.size(), 255u);
    files::writeOutputFile(path(name), "the trace --out", "one", {});
    files::writeOutputFile(path(name), "the trace --out", "two", {.force = true});
    EXPECT_EQ(get(path(name)), "two");
    EXPECT_EQ(listing(), (std::vector<std::string>{name}));
    fs::remove(path(name));
  }
}

TEST_F(FilesTest, ALinkToAMissingFileIsAnExistingNameNotOneThatAppeared) {
  fs::create_symlink(path("nowhere.json"), path("link.json"));
  const std::string msg =
      errorOf([&] { files::writeOutputFile(path("link.json"), "the trace --out", "x", {}); },
              ErrorKind::BadInput);
  EXPECT_NE(msg.find("exists as a symbolic link to a missing file; pass --force to replace it"),
            std::string::npos)
      << msg;
  EXPECT_TRUE(fs::is_symlink(path("link.json")));
  files::writeOutputFile(path("link.json"), "the trace --out", "x", {.force = true});
  EXPECT_EQ(get(path("link.json")), "x");
  EXPECT_FALSE(fs::exists(path("nowhere.json")));
}

TEST_F(FilesTest, AnAbandonedWriteLeavesNothingBehind) {
  put(path("keep.json"), "old");
  {
    files::AtomicFile out(path("keep.json"), "the plan --out", true);
    out.write(std::string(100000, 'x'));
  }
  EXPECT_EQ(get(path("keep.json")), "old");
  EXPECT_EQ(listing(), (std::vector<std::string>{"keep.json"}));
}

TEST_F(FilesTest, ANewFileGetsTheUsualModeAndAReplacedFileKeepsItsMode) {
  files::writeOutputFile(path("new.json"), "out", "x", {});
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(fs::status(path("new.json")).permissions(), static_cast<fs::perms>(0666 & ~mask));
  put(path("old.json"), "x");
  ::chmod(path("old.json").c_str(), 0640);
  files::writeOutputFile(path("old.json"), "out", "y", {.force = true});
  EXPECT_EQ(fs::status(path("old.json")).permissions(), static_cast<fs::perms>(0640));
}

// A full disk, simulated by the file-size limit: a write past it fails with EFBIG, as a write
// onto a full disk fails with ENOSPC. The old file stays byte-identical, no temporary is left.
TEST_F(FilesTest, AFailedWriteLeavesTheOldFileByteIdentical) {
  const std::string old(10000, 'o');
  put(path("trace.json"), old);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    try {
      files::writeOutputFile(path("trace.json"), "the trace --out", std::string(200000, 'n'),
                             {.force = true});
    } catch (const Error& e) {
      const std::string msg = e.what();
      ::_exit(e.kind() == ErrorKind::Runtime && msg.find("File too large") != std::string::npos
                  ? 0
                  : 3);
    }
    ::_exit(4);  // the write did not fail
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(get(path("trace.json")), old);
  EXPECT_EQ(listing(), (std::vector<std::string>{"trace.json"}));
}

}  // namespace
