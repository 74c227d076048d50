// SPDX-License-Identifier: MIT
/// The installed app (`swapscope-gui`), headless, where the behaviour is its main(): the files it
/// writes with --export-plan and --screenshot, and its exit codes. Every database is a copy of a
/// sample run in a temporary folder.
#include <unistd.h>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "sample_runs.h"

namespace {

namespace fs = std::filesystem;

const QString kFmnist = QString::fromStdString(swapscope::testing::fmnistRun());
constexpr int kExitMs = 120000;

struct Exit {
  int code = -1;
  std::string out, err;
  bool finished = false;
};

/// Runs the app with `args` in the folder `folder` (default: the test's); a run that has not
/// exited after `timeoutMs` is killed (finished false).
Exit runApp(const QStringList& args, int timeoutMs = kExitMs, const QString& folder = {}) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("QT_QPA_PLATFORM", "offscreen");
  p.setProcessEnvironment(env);
  if (!folder.isEmpty()) p.setWorkingDirectory(folder);
  p.start(SWAPSCOPE_GUI_BINARY, args);
  Exit e;
  if (!p.waitForStarted()) return e;
  e.finished = p.waitForFinished(timeoutMs);
  if (!e.finished) {
    p.kill();
    p.waitForFinished();
  }
  e.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  e.out = p.readAllStandardOutput().toStdString();
  e.err = p.readAllStandardError().toStdString();
  return e;
}

std::string readAll(const QString& path) {
  std::ifstream in(path.toStdString(), std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Two copies of the Fashion-MNIST sample, A.swapdb and B.swapdb, in a temporary folder.
class TwoDatabases : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir.isValid());
    ASSERT_TRUE(QFile::copy(kFmnist, a));
    ASSERT_TRUE(QFile::copy(kFmnist, b));
    bBytes = readAll(b);
  }
  QString path(const QString& name) const { return dir.filePath(name); }

  QTemporaryDir dir;
  const QString a = dir.filePath("A.swapdb");
  const QString b = dir.filePath("B.swapdb");
  std::string bBytes;
};

TEST_F(TwoDatabases, NoOutputReplacesADatabaseOpenedWithCompareWhateverItsName) {
  // Names of B and of the files SQLite keeps beside it: B itself, its companions, a symbolic
  // and a hard link to it, a symbolic link to its folder, and B opened through a link.
  fs::create_symlink(b.toStdString(), path("soft.png").toStdString());
  ASSERT_EQ(::link(b.toStdString().c_str(), path("hard.png").toStdString().c_str()), 0);
  fs::create_symlink(dir.path().toStdString(), path("folder").toStdString());
  fs::create_symlink(b.toStdString(), path("L.swapdb").toStdString());
  struct Case {
    QString compare, output;
  };
  const std::vector<Case> cases = {
      {b, b},
      {b, b + "-wal"},
      {b, b + "-shm"},
      {b, b + "-journal"},
      {b, path("soft.png")},
      {b, path("hard.png")},
      {b, path("folder/B.swapdb")},
      {b, path("folder/B.swapdb-wal")},
      {path("L.swapdb"), b + "-wal"},
      {path("L.swapdb"), path("folder/B.swapdb-journal")},
  };
  for (const char* option : {"--export-plan", "--screenshot"}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(option) + " " + c.output.toStdString() + " with --compare " +
                   c.compare.toStdString());
      const Exit e = runApp({a, "--compare", c.compare, option, c.output, "--force"});
      ASSERT_TRUE(e.finished);
      EXPECT_EQ(e.code, 2) << e.err;
      // The message names the output and the input it would replace.
      EXPECT_NE(e.err.find(c.output.toStdString() + "' is the same file as the run database"),
                std::string::npos)
          << e.err;
      EXPECT_EQ(readAll(b), bBytes);
      for (const char* suffix : {"-wal", "-shm", "-journal"})
        EXPECT_FALSE(QFile::exists(b + suffix)) << suffix;
    }
  }
}

TEST_F(TwoDatabases, NoOutputReplacesThePlanningDatabaseOrTheOtherOutput) {
  for (const char* option : {"--export-plan", "--screenshot"}) {
    const Exit e = runApp({b, option, b + "-wal", "--force"});
    ASSERT_TRUE(e.finished);
    EXPECT_EQ(e.code, 2) << e.err;
    EXPECT_NE(e.err.find("is the same file as the run database's -wal file"), std::string::npos)
        << e.err;
    EXPECT_FALSE(QFile::exists(b + "-wal"));
  }
  // The screenshot, written after the plan, would replace it.
  const QString both = path("both.png");
  const Exit e = runApp({a, "--export-plan", both, "--screenshot", both, "--force"});
  ASSERT_TRUE(e.finished);
  EXPECT_EQ(e.code, 2) << e.err;
  EXPECT_NE(
      e.err.find("and the plan file --export-plan '" + both.toStdString() + "' are the same file"),
      std::string::npos)
      << e.err;
  EXPECT_FALSE(QFile::exists(both));
  EXPECT_EQ(readAll(b), bBytes);
}

TEST(GuiBinary, AnEmptyOutputNameIsRefusedAtOnce) {
  for (const char* option : {"--export-plan", "--screenshot"}) {
    SCOPED_TRACE(option);
    const Exit e = runApp({kFmnist, option, ""}, 30000);
    ASSERT_TRUE(e.finished) << "the app did not exit";
    EXPECT_EQ(e.code, 2) << e.err;
    EXPECT_NE(e.err.find(std::string(option) + ": the file name is empty"), std::string::npos)
        << e.err;
  }
}

// --export-plan - prints the plan file's text to standard output, as `swapscope plan --out -`
// does, and writes no file (it wrote one named "-"); --screenshot - is refused at once.
TEST_F(TwoDatabases, ExportPlanDashPrintsThePlanAndWritesNoFile) {
  const Exit file =
      runApp({"A.swapdb", "--budget", "16MiB", "--export-plan", "plan.json"}, kExitMs, dir.path());
  ASSERT_TRUE(file.finished);
  ASSERT_EQ(file.code, 0) << file.err;
  const std::string written = readAll(path("plan.json"));
  ASSERT_FALSE(written.empty());
  const Exit printed =
      runApp({"A.swapdb", "--budget", "16MiB", "--export-plan", "-"}, kExitMs, dir.path());
  ASSERT_TRUE(printed.finished);
  ASSERT_EQ(printed.code, 0) << printed.err;
  EXPECT_EQ(printed.out, written);
  EXPECT_FALSE(QFile::exists(path("-")));
  const Exit shot = runApp({"A.swapdb", "--screenshot", "-"}, 30000, dir.path());
  ASSERT_TRUE(shot.finished);
  EXPECT_EQ(shot.code, 2) << shot.err;
  EXPECT_NE(shot.err.find("--screenshot -: - would be standard output"), std::string::npos)
      << shot.err;
  EXPECT_FALSE(QFile::exists(path("-")));
}

// Exit codes as `swapscope plan`'s: a paper-mode search that finds no k meeting constraint (6)
// is the model's answer (1), a budget below what k = 1 needs is the user's input (2). The app
// exited 2 for both.
TEST_F(TwoDatabases, ExportPlanExitsAsThePlanCommandWhenNoPlanIsMade) {
  const Exit infeasible = runApp({"A.swapdb", "--budget", "16MiB", "--mode", "paper", "--policy",
                                  "swap-all", "--export-plan", "plan.json"},
                                 kExitMs, dir.path());
  ASSERT_TRUE(infeasible.finished);
  EXPECT_EQ(infeasible.code, 1) << infeasible.err;
  EXPECT_NE(infeasible.err.find("swapscope-gui: Algorithm 2 found no feasible k: no k from"),
            std::string::npos)
      << infeasible.err;
  EXPECT_FALSE(QFile::exists(path("plan.json")));
  const Exit untrainable =
      runApp({"A.swapdb", "--budget", "1MiB", "--export-plan", "plan.json"}, kExitMs, dir.path());
  ASSERT_TRUE(untrainable.finished);
  EXPECT_EQ(untrainable.code, 2) << untrainable.err;
  EXPECT_NE(untrainable.err.find("untrainable"), std::string::npos) << untrainable.err;
  EXPECT_FALSE(QFile::exists(path("plan.json")));
}

TEST(GuiBinary, TheScreenshotIsWrittenInTheFormatItsNameAsks) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  struct Format {
    const char* name;
    std::string magic;
  };
  std::vector<Format> formats = {{"shot.png", "\x89PNG"}, {"shot.PDF", "%PDF"}};
#ifdef SWAPSCOPE_HAVE_QT_SVG
  formats.push_back({"shot.svg", "<svg"});
#endif
  for (const Format& f : formats) {
    SCOPED_TRACE(f.name);
    const QString shot = dir.filePath(f.name);
    const Exit e = runApp({"--model", "fmnist-cnn", "--batch", "8", "--screenshot", shot});
    ASSERT_TRUE(e.finished);
    ASSERT_EQ(e.code, 0) << e.err;
    const std::string bytes = readAll(shot);
    ASSERT_GT(bytes.size(), 1000u);
    if (f.magic == "<svg") {
      EXPECT_NE(bytes.find(f.magic), std::string::npos);
    } else {
      EXPECT_EQ(bytes.substr(0, f.magic.size()), f.magic);
    }
  }
  // Any other extension is refused before anything is drawn, naming it and the formats.
  for (const char* name : {"shot.jpg", "shot"}) {
    SCOPED_TRACE(name);
    const QString shot = dir.filePath(name);
    const Exit e = runApp({"--model", "fmnist-cnn", "--batch", "8", "--screenshot", shot});
    ASSERT_TRUE(e.finished);
    EXPECT_EQ(e.code, 2) << e.err;
    EXPECT_NE(e.err.find(".png"), std::string::npos) << e.err;
    EXPECT_NE(e.err.find(".pdf"), std::string::npos) << e.err;
    EXPECT_FALSE(QFile::exists(shot));
  }
  const Exit e =
      runApp({"--model", "fmnist-cnn", "--batch", "8", "--screenshot", dir.filePath("shot.jpg")});
  EXPECT_NE(e.err.find("unknown image format '.jpg'"), std::string::npos) << e.err;
}

}  // namespace
