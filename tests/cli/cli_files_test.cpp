// SPDX-License-Identifier: MIT
// The user's files are never lost: every verb's outputs refuse to replace an existing file
// without --force and an input ever; a failed write leaves the old file byte-identical; every
// file input must be a regular file (a folder or a FIFO is refused at once, never read).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include <sqlite3.h>

#include "run_cli.h"
#include "sample_runs.h"
#include "spawn_cli.h"
#include "store/run_db.h"

namespace swapscope::cli {
namespace {

namespace fs = std::filesystem;
using testing::run;

const fs::path kSamples = swapscope::testing::sampleRunsDir();

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

class CliFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("swapscope-cli-files-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
    db = (dir / "a.swapdb").string();
    fs::copy_file(kSamples / "fmnist-cnn-cpu-profile.swapdb", db);
    dbBytes = slurp(db);
  }
  void TearDown() override { fs::remove_all(dir); }

  std::string path(const std::string& name) const { return (dir / name).string(); }
  void put(const std::string& name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
  }
  /// The folder's names, to see that no temporary file was left behind.
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir;
  std::string db, dbBytes;
};

/// Every verb with an output file, writing onto `target`.
std::vector<std::vector<std::string>> writers(const std::string& db, const std::string& target) {
  return {
      {"plan", "--db", db, "--budget", "32MiB", "--out", target},
      {"trace", "--db", db, "--out", target},
      {"analyze", "--model", "fmnist-cnn", "--batch", "4", "--dump-net", target},
      {"train", "--model", "fmnist-cnn", "--data", "synthetic", "--batch", "2", "--iters", "1",
       "--budget", "16MiB", "--save-weights", target},
  };
}

TEST_F(CliFiles, AnExistingOutputIsRefusedWithoutForceAndReplacedWithIt) {
  for (auto args : writers(db, path("out.file"))) {
    put("out.file", "precious");
    testing::Result r = run(args);
    EXPECT_EQ(r.code, 2) << args[0] << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("exists; pass --force to replace it"), std::string::npos)
        << args[0] << ": " << r.err;
    EXPECT_EQ(slurp(path("out.file")), "precious") << args[0];
    args.push_back("--force");
    r = run(args);
    EXPECT_EQ(r.code, 0) << args[0] << ": " << r.err;
    EXPECT_NE(slurp(path("out.file")), "precious") << args[0];
    EXPECT_EQ(listing(), (std::vector<std::string>{"a.swapdb", "out.file"})) << args[0];
  }
}

TEST_F(CliFiles, AnInputIsNeverAnOutputEvenWithForceAndUnderAnotherName) {
  ASSERT_EQ(::link(db.c_str(), path("hard.json").c_str()), 0);
  for (const std::string& target : {db, path("hard.json"), path("./a.swapdb")}) {
    for (auto args : writers(db, target)) {
      if (args[0] == "analyze" || args[0] == "train") continue;  // their inputs are below
      for (bool force : {false, true}) {
        if (force) args.push_back("--force");
        const testing::Result r = run(args);
        EXPECT_EQ(r.code, 2) << args[0] << " " << target << ": " << r.err;
        EXPECT_NE(r.err.find("is the same file as the --db file"), std::string::npos)
            << args[0] << ": " << r.err;
      }
    }
  }
  EXPECT_EQ(slurp(db), dbBytes);

  // A network file is never replaced by its own dump, its own profile or its own weights.
  ASSERT_EQ(
      run({"analyze", "--model", "fmnist-cnn", "--batch", "1", "--dump-net", path("net.json")})
          .code,
      0);
  const std::string net = slurp(path("net.json"));
  const std::vector<std::vector<std::string>> selfWriters = {
      {"analyze", "--net", path("net.json"), "--batch", "4", "--dump-net", path("net.json")},
      {"profile", "--net", path("net.json"), "--budget", "16MiB", "--max-batch", "2", "--iters",
       "1", "--db", path("net.json")},
      {"train", "--net", path("net.json"), "--data", "synthetic", "--batch", "2", "--iters", "1",
       "--budget", "16MiB", "--save-weights", path("net.json")},
  };
  for (auto args : selfWriters) {
    args.push_back("--force");
    const testing::Result r = run(args);
    EXPECT_EQ(r.code, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("is the same file as the --net file"), std::string::npos)
        << args[0] << ": " << r.err;
    EXPECT_EQ(slurp(path("net.json")), net) << args[0];
  }
  // train --save-weights onto a file of its own data set (the refusal comes before any data is
  // read, so the files need not be IDX).
  fs::create_directories(path("data"));
  for (const char* f : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                        "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte.gz"})
    std::ofstream(path("data") + "/" + f) << "precious";
  for (const char* f : {"train-images-idx3-ubyte.gz", "t10k-images-idx3-ubyte"}) {
    const std::string target = path("data") + "/" + f;
    const testing::Result r = run({"train", "--model", "fmnist-cnn", "--data", "fashion-mnist",
                                   "--data-dir", path("data"), "--batch", "2", "--iters", "1",
                                   "--budget", "16MiB", "--save-weights", target, "--force"});
    EXPECT_EQ(r.code, 2) << f << ": " << r.err;
    EXPECT_NE(r.err.find("is the same file as the data set file"), std::string::npos)
        << f << ": " << r.err;
    EXPECT_EQ(slurp(target), "precious") << f;
  }
  // run --db onto its own plan.
  ASSERT_EQ(run({"plan", "--db", db, "--budget", "32MiB", "--out", path("plan.json")}).code, 0);
  const std::string plan = slurp(path("plan.json"));
  const testing::Result r = run(
      {"run", "--plan", path("plan.json"), "--iters", "1", "--db", path("plan.json"), "--force"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("is the same file as the --plan file"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(path("plan.json")), plan);
}

/// Runs the real program with a file-size limit of `limit` bytes: writes beyond it fail with
/// EFBIG, as writes onto a full disk fail with ENOSPC. Returns the exit status.
int runWithFileSizeLimit(const std::vector<std::string>& args, rlim_t limit,
                         bool ignoreXfsz = true) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, ignoreXfsz ? SIG_IGN : SIG_DFL);
    rlimit lim{limit, limit};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, STDOUT_FILENO);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(SWAPSCOPE_CLI_BINARY));
    for (const std::string& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(SWAPSCOPE_CLI_BINARY, argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST_F(CliFiles, AFailedWriteLeavesTheOldFileByteIdenticalAndNoTemporary) {
  for (auto args : writers(db, path("out.file"))) {
    if (args[0] == "train") continue;  // its weights are 0.4 MiB: covered by the unit test
    const std::string old(8192, 'o');
    put("out.file", old);
    args.push_back("--force");
    // Every new file is larger than 512 bytes; the old one is 8 KiB, above the limit itself.
    EXPECT_EQ(runWithFileSizeLimit(args, 512), 1) << args[0];
    EXPECT_EQ(slurp(path("out.file")), old) << args[0];
    EXPECT_EQ(listing(), (std::vector<std::string>{"a.swapdb", "out.file"})) << args[0];
  }
  EXPECT_EQ(slurp(db), dbBytes);
}

TEST_F(CliFiles, EveryFileInputMustBeARegularFile) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  fs::create_directories(dir / "folder");
  ASSERT_EQ(run({"plan", "--db", db, "--budget", "32MiB", "--out", path("plan.json")}).code, 0);
  for (const std::string& bad : {path("fifo"), path("folder")}) {
    const std::vector<std::vector<std::string>> readers = {
        {"analyze", "--net", bad, "--batch", "4"},
        {"train", "--net", bad, "--data", "synthetic", "--batch", "2", "--iters", "1", "--budget",
         "16MiB"},
        {"train", "--model", "fmnist-cnn", "--data", "synthetic", "--batch", "2", "--iters", "1",
         "--budget", "16MiB", "--load-weights", bad},
        {"run", "--plan", bad, "--iters", "1"},
        {"info", "--db", bad},
        {"plan", "--db", bad, "--budget", "32MiB"},
        {"compare", db, bad},
    };
    for (const auto& args : readers) {
      const testing::Result r = run(args);
      EXPECT_EQ(r.code, 2) << args[0] << " " << bad << ": " << r.err;
      EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
      EXPECT_TRUE(r.err.find("FIFO") != std::string::npos ||
                  r.err.find("regular file") != std::string::npos ||
                  r.err.find("directory") != std::string::npos)
          << r.err;
    }
  }
}

TEST_F(CliFiles, OpenAndWriteErrorsSayWhy) {
  testing::Result r = run({"analyze", "--net", path("none.json"), "--batch", "4"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no such file"), std::string::npos) << r.err;
  r = run({"plan", "--db", db, "--budget", "32MiB", "--out", path("no/such/plan.json")});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  if (::geteuid() != 0) {  // root writes anywhere
    put("locked.json", "{}");
    ::chmod(path("locked.json").c_str(), 0);
    r = run({"analyze", "--net", path("locked.json"), "--batch", "4"});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("permission denied"), std::string::npos) << r.err;
  }
}

TEST_F(CliFiles, RunNeverReplacesThePlansSourceDatabaseOrItsDataSet) {
  ASSERT_EQ(
      run({"plan", "--db", db, "--budget", "32MiB", "--batch", "8", "--out", path("plan.json")})
          .code,
      0);
  // The plan's source_db is where run takes the network from.
  testing::Result r =
      run({"run", "--plan", path("plan.json"), "--iters", "1", "--db", db, "--force"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("is the same file as the plan's source_db"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(db), dbBytes);
  // With the network given another way, the profile the plan was made from is kept all the same.
  r = run({"run", "--plan", path("plan.json"), "--model", "fmnist-cnn", "--iters", "1", "--db", db,
           "--force"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("is the same file as the plan's source_db"), std::string::npos) << r.err;
  EXPECT_TRUE(slurp(db) == dbBytes) << "the profile was replaced";
  // The data set's files (the refusal comes before any data is read, so they need not be IDX).
  fs::create_directories(path("data"));
  for (const char* f : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                        "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"})
    put(std::string("data/") + f, "precious");
  r = run({"run", "--plan", path("plan.json"), "--iters", "1", "--data", "fashion-mnist",
           "--data-dir", path("data"), "--db", path("data/train-labels-idx1-ubyte.gz"), "--force"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("is the same file as the data set file"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(path("data/train-labels-idx1-ubyte.gz")), "precious");
}

TEST_F(CliFiles, ForceNeverReplacesADatabaseThatALiveRunIsWriting) {
  // This process writes the database, as a live profile would.
  store::RunMeta meta;
  meta.kind = "profile";
  const std::string live = path("live.swapdb");
  auto writer = std::make_unique<store::RunWriter>(live, meta);
  ASSERT_TRUE(store::liveWriter(live).has_value());
  const std::vector<std::vector<std::string>> forced = {
      {"plan", "--db", db, "--budget", "32MiB", "--out", live, "--force"},
      {"trace", "--db", db, "--out", live, "--force"},
      {"analyze", "--model", "fmnist-cnn", "--batch", "1", "--dump-net", live, "--force"},
      {"train", "--model", "fmnist-cnn", "--data", "synthetic", "--batch", "2", "--iters", "1",
       "--budget", "16MiB", "--save-weights", live, "--force"},
  };
  for (const auto& args : forced) {
    const testing::Result r = run(args);
    EXPECT_EQ(r.code, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("is still being written by a running swapscope profile"),
              std::string::npos)
        << args[0] << ": " << r.err;
    EXPECT_TRUE(store::liveWriter(live).has_value()) << args[0];
  }
  writer->finish(store::RunStatus::Complete);
  // Once the writer has finished, --force replaces the file as usual.
  EXPECT_EQ(run({"plan", "--db", db, "--budget", "32MiB", "--out", live, "--force"}).code, 0);
}

TEST_F(CliFiles, ForceNeverWritesAnotherDatabasesWriteAheadLog) {
  // A live run's -wal holds the iterations it has committed; SQLite removes it when the run
  // closes. Every verb refuses it, and the -shm and -journal names, as an output.
  store::RunMeta meta;
  meta.kind = "profile";
  const std::string live = path("live.swapdb");
  auto writer = std::make_unique<store::RunWriter>(live, meta);
  ASSERT_TRUE(fs::exists(live + "-wal"));
  const std::string wal = slurp(live + "-wal");
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    auto forced = writers(db, live + suffix);
    forced.push_back({"profile", "--model", "fmnist-cnn", "--budget", "16MiB", "--iters", "1",
                      "--max-batch", "2", "--db", live + suffix});
    for (auto args : forced) {
      args.push_back("--force");
      const testing::Result r = run(args);
      EXPECT_EQ(r.code, 2) << args[0] << suffix << ": " << r.err;
      EXPECT_NE(r.err.find(std::string(" is the ") + suffix + " file of the SQLite database '" +
                           live + "'"),
                std::string::npos)
          << args[0] << suffix << ": " << r.err;
    }
  }
  EXPECT_EQ(slurp(live + "-wal"), wal);
  EXPECT_FALSE(fs::exists(live + "-journal"));
  EXPECT_TRUE(store::liveWriter(live).has_value());
  writer->finish(store::RunStatus::Complete);
}

TEST_F(CliFiles, AnInputDatabasesWriteAheadLogIsNeverAnOutput) {
  // The refusal comes before the database is opened, so the log's content does not matter.
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    const std::string companion = db + suffix;
    put(fs::path(companion).filename().string(), "log");
    const testing::Result r =
        run({"plan", "--db", db, "--budget", "32MiB", "--out", companion, "--force"});
    EXPECT_EQ(r.code, 2) << suffix << ": " << r.err;
    EXPECT_NE(r.err.find(std::string("is the same file as the --db file's ") + suffix + " file"),
              std::string::npos)
        << suffix << ": " << r.err;
    EXPECT_EQ(slurp(companion), "log") << suffix;
    fs::remove(companion);
  }
  EXPECT_EQ(slurp(db), dbBytes);
}

TEST_F(CliFiles, TheCompanionsOfADatabaseNamedThroughALinkAreInputsToo) {
  // SQLite keeps the -wal, -shm and -journal files beside the file a link resolves to, and a
  // link to the folder names them as well; none of them exists yet.
  fs::create_symlink(db, path("link.swapdb"));
  fs::create_symlink(dir, path("folder"));
  struct Case {
    std::string input, output;
  };
  const std::vector<Case> cases = {
      {path("link.swapdb"), db + "-wal"},
      {path("link.swapdb"), db + "-journal"},
      {db, path("folder/a.swapdb-wal")},
      {path("folder/a.swapdb"), db + "-shm"},
  };
  for (const Case& c : cases) {
    for (auto args : writers(c.input, c.output)) {
      if (args[0] == "analyze" || args[0] == "train") continue;  // no database input
      args.push_back("--force");
      const testing::Result r = run(args);
      EXPECT_EQ(r.code, 2) << args[0] << " --db " << c.input << " onto " << c.output << ": "
                           << r.err;
      EXPECT_NE(r.err.find("is the same file as the --db file's"), std::string::npos) << r.err;
      for (const char* suffix : {"-wal", "-shm", "-journal"})
        EXPECT_FALSE(fs::exists(db + suffix)) << args[0] << " wrote " << db << suffix;
    }
  }
  EXPECT_EQ(slurp(db), dbBytes);
}

TEST_F(CliFiles, AWritePastTheFileSizeLimitIsAnErrorNotASignal) {
  // Without SIGXFSZ ignored by the caller, the program must still exit 1 and clean up.
  const std::string old(8192, 'o');
  put("out.file", old);
  EXPECT_EQ(runWithFileSizeLimit(
                {"plan", "--db", db, "--budget", "32MiB", "--out", path("out.file"), "--force"},
                512, /*ignoreXfsz=*/false),
            1);
  EXPECT_EQ(slurp(path("out.file")), old);
  EXPECT_EQ(listing(), (std::vector<std::string>{"a.swapdb", "out.file"}));
}

TEST_F(CliFiles, AFailedWriteOfTheStandardOutputIsAnError) {
  int errPipe[2];
  ASSERT_EQ(::pipe(errPipe), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int full = ::open("/dev/full", O_WRONLY);
    ::dup2(full, STDOUT_FILENO);
    ::dup2(errPipe[1], STDERR_FILENO);
    ::execl(SWAPSCOPE_CLI_BINARY, SWAPSCOPE_CLI_BINARY, "info", "--db", db.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(errPipe[1]);
  std::string err;
  char buf[512];
  for (ssize_t n; (n = ::read(errPipe[0], buf, sizeof buf)) > 0;)
    err.append(buf, static_cast<std::size_t>(n));
  ::close(errPipe[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1) << err;
  EXPECT_NE(err.find("cannot write the standard output: No space left on device"),
            std::string::npos)
      << err;
}

/// Sets the working folder for the test's life, as a user's shell in their folder.
class InFolder {
 public:
  explicit InFolder(const fs::path& dir) : m_old(fs::current_path()) { fs::current_path(dir); }
  ~InFolder() { fs::current_path(m_old); }
  InFolder(const InFolder&) = delete;
  InFolder& operator=(const InFolder&) = delete;

 private:
  fs::path m_old;
};

// `--out -` is standard output, as in many tools: plan, trace and import print the document
// there (byte for byte what --out FILE writes) and nothing else, their report going to
// standard error. A file named "-" is neither refused as existing nor created or replaced, with
// --force or without.
TEST_F(CliFiles, OutDashPrintsTheDocumentToStandardOutputAndWritesNoFile) {
  const InFolder here(dir);
  put("-", "precious");
  const std::string onnx = std::string(SWAPSCOPE_TEST_DATA_DIR) + "/onnx/alexnet.onnx";
  struct Verb {
    std::vector<std::string> args;
    std::string report;  ///< what standard error says with --out -
  };
  const Verb verbs[] = {
      {{"plan", "--db", "a.swapdb", "--budget", "32MiB", "--batch", "8"},
       "plan for fmnist-cnn in 32.0 MiB"},
      {{"trace", "--db", "a.swapdb"}, "wrote the trace to standard output: fmnist-cnn at k = 94"},
      {{"import", onnx}, "wrote the network JSON to standard output"},
  };
  for (const Verb& verb : verbs) {
    SCOPED_TRACE(verb.args.front());
    std::vector<std::string> toFile = verb.args;
    toFile.insert(toFile.end(), {"--out", "doc.json"});
    const testing::Result file = run(toFile);
    ASSERT_EQ(file.code, 0) << file.err;
    const std::string written = slurp(dir / "doc.json");
    fs::remove(dir / "doc.json");
    for (const bool force : {false, true}) {
      std::vector<std::string> toStdout = verb.args;
      toStdout.insert(toStdout.end(), {"--out", "-"});
      if (force) toStdout.push_back("--force");
      const testing::Result r = run(toStdout);
      ASSERT_EQ(r.code, 0) << r.err;
      EXPECT_EQ(r.out, written);
      EXPECT_TRUE(nlohmann::json::accept(r.out)) << r.out;
      EXPECT_NE(r.err.find(verb.report), std::string::npos) << r.err;
      const std::string moot =
          "warning: --force has no effect: --out - writes to standard output, which replaces "
          "no file";
      EXPECT_EQ(r.err.find(moot) != std::string::npos, force) << r.err;
      EXPECT_EQ(slurp(dir / "-"), "precious");
      EXPECT_EQ(listing(), (std::vector<std::string>{"-", "a.swapdb"}));
    }
  }
  // A file named "-" is still written as ./-.
  ASSERT_EQ(run({"trace", "--db", "a.swapdb", "--out", "./-", "--force"}).code, 0);
  EXPECT_TRUE(nlohmann::json::accept(slurp(dir / "-")));
  // plan's --json prints the plan JSON too: the two are not given together.
  const testing::Result both =
      run({"plan", "--db", "a.swapdb", "--budget", "32MiB", "--out", "-", "--json"});
  EXPECT_EQ(both.code, 2);
  EXPECT_EQ(both.out, "");
  EXPECT_NE(both.err.find("give --out - or --json, not both: each prints the plan JSON to "
                          "standard output"),
            std::string::npos)
      << both.err;
  // Each verb's --help says so.
  for (const char* verb : {"plan", "trace", "import"}) {
    const testing::Result help = run({verb, "--help"});
    EXPECT_NE(help.out.find("- prints "), std::string::npos) << help.out;
    EXPECT_NE(help.out.find(" to standard output"), std::string::npos) << help.out;
  }
}

// `analyze --dump-net -` prints the network JSON to standard output, byte for byte what
// --dump-net FILE writes and nothing else, the tables going to standard error; it used to write
// a file named "-" (refused as existing where one was there). A file named "-" is still written
// as ./-.
TEST_F(CliFiles, AnalyzeDumpNetDashPrintsTheNetworkToStandardOutputAndWritesNoFile) {
  const InFolder here(dir);
  put("-", "precious");
  const std::vector<std::string> analyze = {"analyze", "--model", "fmnist-cnn", "--batch", "4"};
  std::vector<std::string> toFile = analyze;
  toFile.insert(toFile.end(), {"--dump-net", "net.json"});
  const testing::Result file = run(toFile);
  ASSERT_EQ(file.code, 0) << file.err;
  const std::string written = slurp(dir / "net.json");
  fs::remove(dir / "net.json");
  for (const bool force : {false, true}) {
    SCOPED_TRACE(force ? "--force" : "without --force");
    std::vector<std::string> toStdout = analyze;
    toStdout.insert(toStdout.end(), {"--dump-net", "-"});
    if (force) toStdout.push_back("--force");
    const testing::Result r = run(toStdout);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, written);
    EXPECT_TRUE(nlohmann::json::accept(r.out)) << r.out;
    // The tables are the report: on standard error, as --dump-net FILE prints them.
    EXPECT_NE(r.err.find(file.out), std::string::npos) << r.err;
    const std::string moot =
        "warning: --force has no effect: --dump-net - writes to standard output, which replaces "
        "no file";
    EXPECT_EQ(r.err.find(moot) != std::string::npos, force) << r.err;
    EXPECT_EQ(slurp(dir / "-"), "precious");
    EXPECT_EQ(listing(), (std::vector<std::string>{"-", "a.swapdb"}));
  }
  // --json prints a document too: the two are not given together.
  std::vector<std::string> both = analyze;
  both.insert(both.end(), {"--dump-net", "-", "--json"});
  const testing::Result refused = run(both);
  EXPECT_EQ(refused.code, 2);
  EXPECT_EQ(refused.out, "");
  EXPECT_NE(refused.err.find("give --dump-net - or --json, not both: each prints a JSON document "
                             "to standard output"),
            std::string::npos)
      << refused.err;
  // A file named "-" is written as ./-.
  std::vector<std::string> dotSlash = analyze;
  dotSlash.insert(dotSlash.end(), {"--dump-net", "./-", "--force"});
  ASSERT_EQ(run(dotSlash).code, 0);
  EXPECT_EQ(slurp(dir / "-"), written);
  const testing::Result help = run({"analyze", "--help"});
  EXPECT_NE(help.out.find("- prints it to standard output"), std::string::npos) << help.out;
}

// A weight file and a run database cannot be standard output: `train --save-weights -`,
// `profile --db -` and `run --db -` are refused at once, naming the option, saying why and how
// to name a file called "-" (they used to create one, or replace it with --force, after the
// whole run). ./- is that file.
TEST_F(CliFiles, AWeightFileOrARunDatabaseRefusesDashAsStandardOutput) {
  const InFolder here(dir);
  ASSERT_EQ(testing::writeFmnistPlan(kSamples.string(), path("p.json")).code, 0);
  const std::vector<std::string> train = {"train",     "--model",  "fmnist-cnn", "--data",
                                          "synthetic", "--batch",  "2",          "--iters",
                                          "1",         "--budget", "16MiB"};
  const std::vector<std::string> runPlan = {"run", "--plan",   "p.json", "--iters",
                                            "1",   "--warmup", "0"};
  struct Case {
    std::vector<std::string> args;
    std::string option, why;
  };
  std::vector<Case> cases = {
      {train, "--save-weights", "a weight file is binary, a file that --load-weights reads back"},
      {{"profile", "--model", "fmnist-cnn", "--budget", "16MiB", "--max-batch", "2", "--iters",
        "1"},
       "--db",
       "a run database is an SQLite file, written in place as the run goes, not a stream"},
      {runPlan, "--db",
       "a run database is an SQLite file, written in place as the run goes, not a stream"},
  };
  const std::vector<std::string> files = {"a.swapdb", "p.json"};
  for (Case& c : cases) {
    SCOPED_TRACE(c.args.front());
    for (const bool existing : {false, true}) {
      if (existing) put("-", "precious");
      for (const bool force : {false, true}) {
        std::vector<std::string> args = c.args;
        args.insert(args.end(), {c.option, "-"});
        if (force) args.push_back("--force");
        const testing::Result r = run(args);
        EXPECT_EQ(r.code, 2) << r.out << r.err;
        EXPECT_EQ(r.out, "");
        EXPECT_NE(r.err.find(c.option + " -: - would be standard output, but " + c.why +
                             "; name a file (./- names a file called '-')"),
                  std::string::npos)
            << r.err;
        if (existing) {
          EXPECT_EQ(slurp(dir / "-"), "precious");
        } else {
          EXPECT_EQ(listing(), files);
        }
      }
    }
    fs::remove(dir / "-");
    const testing::Result help = run({c.args.front(), "--help"});
    EXPECT_NE(help.out.find("- is refused, ./- names a file called '-'"), std::string::npos)
        << help.out;
  }
  // ./- names the file.
  std::vector<std::string> weights = train;
  weights.insert(weights.end(), {"--save-weights", "./-"});
  testing::Result r = run(weights);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_GT(fs::file_size(dir / "-"), 0u);
  fs::remove(dir / "-");
  std::vector<std::string> database = runPlan;
  database.insert(database.end(), {"--db", "./-"});
  r = run(database);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(store::RunReader(path("-")).load().iterations.size(), 1u);
}

// `-` as an input is standard input where the input is a JSON document: `--net -` reads the
// network and `run --plan -` the plan, so that one verb's `--out -` pipes into the next as a user
// types it; a relative source_db of a plan read so is taken from the current folder, which
// `plan --out -` writes it relative to. A file named "-" is not read (./- names it), and what
// standard input holds is checked as a file's text is, the messages naming standard input.
TEST_F(CliFiles, DashReadsTheNetworkOrThePlanFromStandardInput) {
  const InFolder here(dir);
  put("-", "precious");
  // The network: fmnist-cnn's JSON through a pipe analyses as the zoo model does.
  const testing::Result zoo = run({"analyze", "--model", "fmnist-cnn", "--batch", "4", "--json"});
  ASSERT_EQ(zoo.code, 0) << zoo.err;
  ASSERT_EQ(testing::runShell("swapscope analyze --model fmnist-cnn --batch 1 --dump-net - "
                              "2>/dev/null | swapscope analyze --net - --batch 4 --json "
                              ">net.out 2>net.err"),
            0)
      << slurp(dir / "net.err");
  EXPECT_EQ(slurp(dir / "net.out"), zoo.out);

  // The plan: `plan --out - | run --plan -` runs the plan `plan --out p.json` writes, on the
  // network of its source_db (a.swapdb, in this folder).
  const std::vector<std::string> plan = {"plan",     "--db",     "a.swapdb", "--budget", "16MiB",
                                         "--policy", "swap-all", "--batch",  "8"};
  std::vector<std::string> toFile = plan;
  toFile.insert(toFile.end(), {"--out", "p.json"});
  ASSERT_EQ(run(toFile).code, 0);
  const testing::Result fromFile =
      run({"run", "--plan", "p.json", "--iters", "1", "--warmup", "0", "--json"});
  ASSERT_EQ(fromFile.code, 0) << fromFile.err;
  ASSERT_EQ(testing::runShell("swapscope plan --db a.swapdb --budget 16MiB --policy swap-all "
                              "--batch 8 --out - 2>/dev/null | swapscope run --plan - --iters 1 "
                              "--warmup 0 --json >run.out 2>run.err"),
            0)
      << slurp(dir / "run.err");
  const nlohmann::json want = nlohmann::json::parse(fromFile.out);
  const nlohmann::json got = nlohmann::json::parse(slurp(dir / "run.out"));
  EXPECT_EQ(got["k"], 8);
  EXPECT_EQ(got["k"], want["k"]);
  EXPECT_EQ(got["t_iter_s"]["predicted"], want["t_iter_s"]["predicted"]);
  EXPECT_EQ(got["peak_bytes"]["predicted"], want["peak_bytes"]["predicted"]);
  EXPECT_EQ(got["peak_bytes"]["measured"], want["peak_bytes"]["measured"]);
  EXPECT_EQ(slurp(dir / "-"), "precious");

  // What standard input holds is checked, and the message names it.
  ASSERT_EQ(testing::runShell("echo '{' | swapscope run --plan - --iters 1 2>bad.err"), 2);
  EXPECT_NE(slurp(dir / "bad.err").find("plan 'standard input (--plan -)' is not valid JSON"),
            std::string::npos)
      << slurp(dir / "bad.err");
  ASSERT_EQ(testing::runShell("echo '{}' | swapscope analyze --net - --batch 4 2>bad.err"), 2);
  EXPECT_NE(slurp(dir / "bad.err").find("standard input (--net -): "), std::string::npos)
      << slurp(dir / "bad.err");
  ASSERT_EQ(testing::runShell("swapscope analyze --net - --batch 4 </dev/null 2>bad.err"), 2);
  EXPECT_NE(slurp(dir / "bad.err").find("standard input (--net -): not valid JSON"),
            std::string::npos)
      << slurp(dir / "bad.err");
  // Standard input holds one document: the plan and the network cannot both come from it.
  const testing::Result both = run({"run", "--plan", "-", "--net", "-", "--iters", "1"});
  EXPECT_EQ(both.code, 2);
  EXPECT_EQ(both.err,
            "swapscope run: error: --plan - and --net - both name standard input, which holds one "
            "document; give one of them as a file\n");

  // ./- is the file named "-".
  fs::copy_file(dir / "p.json", dir / "-", fs::copy_options::overwrite_existing);
  testing::Result r = run({"run", "--plan", "./-", "--iters", "1", "--warmup", "0", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["t_iter_s"]["predicted"], want["t_iter_s"]["predicted"]);
  ASSERT_EQ(
      run({"analyze", "--model", "fmnist-cnn", "--batch", "1", "--dump-net", "./-", "--force"})
          .code,
      0);
  r = run({"analyze", "--net", "./-", "--batch", "4", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, zoo.out);
  // Each --help says so.
  for (const char* verb : {"analyze", "train", "profile", "plan", "run"}) {
    const testing::Result help = run({verb, "--help"});
    EXPECT_NE(help.out.find("- reads it from standard input"), std::string::npos) << help.out;
  }
}

// The inputs that cannot be standard input refuse `-` at once, naming the option, what it names
// and why, and how to name a file called "-": a run database (SQLite reads it in place), an ONNX
// model (its external data lie beside it), a weight file (binary) and the data set's folder.
// They used to read a file named "-" or say there is none. ./- names that file.
TEST_F(CliFiles, AnInputThatCannotBeAStreamRefusesDash) {
  const InFolder here(dir);
  put("-", "precious");
  ASSERT_EQ(testing::writeFmnistPlan(kSamples.string(), path("p.json")).code, 0);
  const std::string database =
      "a run database (SQLite reads it in place, page by page, not as a stream)";
  const std::string onnx =
      "an ONNX model (it may keep its weights in external data files named relative to its own "
      "folder)";
  const std::vector<std::string> train = {"train",     "--model",  "fmnist-cnn", "--data",
                                          "synthetic", "--batch",  "2",          "--iters",
                                          "1",         "--budget", "16MiB"};
  std::vector<std::string> loadWeights = train, trainData = train;
  loadWeights.insert(loadWeights.end(), {"--load-weights", "-"});
  trainData[4] = "fashion-mnist";
  trainData.insert(trainData.end(), {"--data-dir", "-"});
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::string file = "; name a file (./- names a file called '-')";
  const Case cases[] = {
      {{"info", "--db", "-"}, "--db -: standard input is not supported for " + database + file},
      {{"plan", "--db", "-", "--budget", "16MiB"},
       "--db -: standard input is not supported for " + database + file},
      {{"trace", "--db", "-", "--out", "t.json"},
       "--db -: standard input is not supported for " + database + file},
      {{"compare", "-", "a.swapdb"},
       "A.swapdb -: standard input is not supported for " + database + file},
      {{"compare", "a.swapdb", "-"},
       "B.swapdb -: standard input is not supported for " + database + file},
      {{"import", "-", "--out", "n.json"},
       "FILE.onnx -: standard input is not supported for " + onnx + file},
      {{"analyze", "--onnx", "-", "--batch", "1"},
       "--onnx -: standard input is not supported for " + onnx + file},
      {{"plan", "--db", "a.swapdb", "--budget", "16MiB", "--onnx", "-"},
       "--onnx -: standard input is not supported for " + onnx + file},
      {{"run", "--plan", "p.json", "--onnx", "-"},
       "--onnx -: standard input is not supported for " + onnx + file},
      {loadWeights,
       "--load-weights -: standard input is not supported for a weight file (it is binary, as "
       "--save-weights writes it)" +
           file},
      {trainData,
       "--data-dir -: standard input is not supported for the Fashion-MNIST folder (it is a "
       "folder of four files); name a folder (./- names a folder called '-')"},
      {{"run", "--plan", "p.json", "--data", "fashion-mnist", "--data-dir", "-"},
       "--data-dir -: standard input is not supported for the Fashion-MNIST folder (it is a "
       "folder of four files); name a folder (./- names a folder called '-')"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args.front() + " " + c.message.substr(0, 12));
    const testing::Result r = run(c.args);
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "swapscope " + c.args.front() + ": error: " + c.message + "\n");
    EXPECT_EQ(slurp(dir / "-"), "precious");
    EXPECT_EQ(listing(), (std::vector<std::string>{"-", "a.swapdb", "p.json"}));
  }
  // ./- names the file: a run database called "-".
  fs::copy_file(dir / "a.swapdb", dir / "-", fs::copy_options::overwrite_existing);
  const testing::Result info = run({"info", "--db", "./-"});
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_NE(info.out.find("fmnist-cnn"), std::string::npos) << info.out;
  // Each --help says so.
  for (const char* verb : {"info", "plan", "trace"}) {
    const testing::Result help = run({verb, "--help"});
    EXPECT_NE(help.out.find("so not standard input: - is refused, ./- names a file called '-'"),
              std::string::npos)
        << help.out;
  }
}

/// `db` in WAL mode, as a run that a reader held open as it finished is left: SQLite's own
/// journal_mode switch, the connection closed (so no -wal or -shm is left beside it).
void toWalMode(const std::string& db) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(h);
}

// The verbs that only read a run database create nothing beside it: a WAL-mode file copied
// without its -wal and -shm used to leave both beside it after an `info`. One copied with its
// -wal (committed rows the main file does not hold yet) is read with them.
TEST_F(CliFiles, ReadingVerbsCreateNothingBesideAWalModeDatabase) {
  toWalMode(db);
  ASSERT_FALSE(fs::exists(db + "-wal"));
  const std::string db2 = path("b.swapdb");
  fs::copy_file(db, db2);
  const std::vector<std::string> files{"a.swapdb", "b.swapdb"};
  ASSERT_EQ(listing(), files);
  const std::vector<std::vector<std::string>> readers = {
      {"info", "--db", db},
      {"info", "--db", db, "--json"},
      {"trace", "--db", db, "--out", "-"},
      {"plan", "--db", db, "--budget", "32MiB", "--batch", "8"},
      {"compare", db, db2},
  };
  for (const auto& args : readers) {
    SCOPED_TRACE(args.front());
    const testing::Result r = run(args);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(listing(), files);
  }

  // Rows committed to the -wal and not yet to the main file, as a killed run leaves them; the
  // file and its -wal are copied to another folder while the writer still has them open.
  const fs::path copies = dir / "copies";
  fs::create_directories(copies);
  const std::string copy = (copies / "c.swapdb").string();
  {
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(h,
                           "PRAGMA wal_autocheckpoint = 0; UPDATE meta SET value = 'in the wal' "
                           "WHERE key = 'command_line'",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    ASSERT_GT(fs::file_size(db + "-wal"), 0u);
    fs::copy_file(db, copy);
    fs::copy_file(db + "-wal", copy + "-wal");
    sqlite3_close(h);
  }
  const std::string walBytes = slurp(copy + "-wal");
  const testing::Result info = run({"info", "--db", copy, "--json"});
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_EQ(nlohmann::json::parse(info.out)["command_line"], "in the wal");
  const testing::Result trace = run({"trace", "--db", copy, "--out", "-"});
  EXPECT_EQ(trace.code, 0) << trace.err;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(copies))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"c.swapdb", "c.swapdb-wal"}));
  EXPECT_EQ(slurp(copy + "-wal"), walBytes);
}

TEST_F(CliFiles, APlanOfADatabaseWithTextThatIsNotUtf8IsWritten) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h,
                         "UPDATE meta SET value = CAST(x'4350558aff' AS TEXT) WHERE key = "
                         "'device'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(h);
  const testing::Result r =
      run({"plan", "--db", db, "--budget", "32MiB", "--batch", "4", "--out", path("p.json")});
  ASSERT_EQ(r.code, 0) << r.err;
  // The bytes that are not UTF-8 become U+FFFD, so the file is valid JSON and reads back.
  EXPECT_NE(slurp(path("p.json")).find("CPU\xEF\xBF\xBD"), std::string::npos);
  EXPECT_EQ(run({"run", "--plan", path("p.json"), "--iters", "1"}).code, 0);
}

TEST_F(CliFiles, AMissingSourceDatabaseNamesThePlanAndTheField) {
  ASSERT_EQ(
      run({"plan", "--db", db, "--budget", "32MiB", "--batch", "8", "--out", path("plan.json")})
          .code,
      0);
  fs::rename(db, path("moved.swapdb"));
  const testing::Result r = run({"run", "--plan", path("plan.json"), "--iters", "1"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(path("plan.json") + ": source_db: cannot open '" + db + "': no such file"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("give --model or --net instead"), std::string::npos) << r.err;
  // A relative source_db is said to be taken from the plan file's folder; read from standard
  // input, the plan has no folder: it is taken from the current one, and the message says so.
  const InFolder here(dir);
  ASSERT_EQ(run({"plan", "--db", "moved.swapdb", "--budget", "32MiB", "--batch", "8", "--out",
                 "rel.json"})
                .code,
            0);
  fs::rename(dir / "moved.swapdb", dir / "moved-again.swapdb");
  const testing::Result fromFile = run({"run", "--plan", "rel.json", "--iters", "1"});
  EXPECT_EQ(fromFile.code, 2) << fromFile.err;
  EXPECT_NE(fromFile.err.find("rel.json: source_db: cannot open 'moved.swapdb': no such file (its "
                              "source_db 'moved.swapdb' is taken from the plan file's folder)"),
            std::string::npos)
      << fromFile.err;
  ASSERT_EQ(testing::runShell("swapscope run --plan - --iters 1 <rel.json 2>piped.err"), 2);
  const std::string piped = slurp(dir / "piped.err");
  EXPECT_NE(piped.find("standard input (--plan -): source_db: cannot open 'moved.swapdb': no such "
                       "file (its source_db 'moved.swapdb' is taken from the current folder, as "
                       "the plan was read from standard input)"),
            std::string::npos)
      << piped;
  EXPECT_EQ(piped.find("plan file's folder"), std::string::npos) << piped;
}

}  // namespace
}  // namespace swapscope::cli
