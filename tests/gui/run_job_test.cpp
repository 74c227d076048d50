// SPDX-License-Identifier: MIT
// The app's profile and plan runs on a worker thread (RunJob): a small profile of fmnist-cnn on
// the CPU at two k, progress on the GUI thread, the database complete; a cancel mid-run leaves a
// readable database marked incomplete; a plan run records the plan; refusals end as failed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <QCoreApplication>
#include <QSignalSpy>
#include <QThread>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands.h"
#include "graph/zoo.h"
#include "gui/run_job.h"
#include "store/run_db.h"

namespace swapscope::gui {
namespace {

namespace fs = std::filesystem;

std::string scratch(const std::string& name) {
  return (fs::temp_directory_path() / ("swapscope-runjob-" + std::to_string(getpid()) + "-" + name))
      .string();
}

void removeDb(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"})
    fs::remove(path + suffix);
}

ProfileJob smallProfile(const std::string& db, int iterations) {
  ProfileJob job;
  job.network = std::make_shared<const Network>(buildZooModel("fmnist-cnn"));
  job.config.budget = 16 << 20;
  job.config.max_batch = 2;  // k = 1, 2
  job.config.warmup = 0;
  job.config.iterations = iterations;
  job.db = db;
  job.command_line = "swapscope profile --model fmnist-cnn --budget 16MiB --max-batch 2";
  return job;
}

/// Waits (running the event loop) for the job's finished() and returns its outcome.
JobOutcome waitFor(RunJob& job, QSignalSpy& finished) {
  if (finished.isEmpty()) EXPECT_TRUE(finished.wait(120000)) << "the job did not finish";
  EXPECT_FALSE(job.running());
  if (finished.isEmpty()) return {};
  return finished.takeFirst().at(0).value<JobOutcome>();
}

TEST(RunJob, ProfilesOnAWorkerAndReportsEachIterationOnTheGuiThread) {
  const std::string db = scratch("profile.swapdb");
  removeDb(db);
  RunJob job;
  QSignalSpy finished(&job, &RunJob::finished);
  std::vector<collect::RunProgress> reports;
  bool onGuiThread = true;
  QObject::connect(&job, &RunJob::progress, [&](const collect::RunProgress& p) {
    onGuiThread = onGuiThread && QThread::currentThread() == qApp->thread();
    reports.push_back(p);
  });
  job.startProfile(smallProfile(db, 2));
  EXPECT_TRUE(job.running());
  EXPECT_THROW(job.startProfile(smallProfile(db, 2)), Error);  // one job at a time
  const JobOutcome out = waitFor(job, finished);
  EXPECT_EQ(out.status, store::RunStatus::Complete) << out.message.toStdString();
  EXPECT_TRUE(out.created);
  EXPECT_EQ(out.db.toStdString(), db);
  EXPECT_TRUE(onGuiThread);
  ASSERT_EQ(reports.size(), 4u);  // two iterations at each of k = 1, 2
  EXPECT_EQ(reports.front().k, 1);
  EXPECT_EQ(reports.back().k, 2);
  EXPECT_EQ(reports.back().eta_seconds, 0.0);
  const store::RunData d = store::RunReader(db).load();
  EXPECT_EQ(d.meta.status, store::RunStatus::Complete);
  EXPECT_EQ(d.meta.kind, "profile");
  EXPECT_EQ(d.meta.command_line, smallProfile(db, 2).command_line);
  EXPECT_EQ(d.iterations.size(), 4u);
  EXPECT_EQ(d.batches.size(), 2u);
  removeDb(db);
}

TEST(RunJob, CancelStopsAfterTheIterationAndLeavesAReadableIncompleteDatabase) {
  const std::string db = scratch("cancel.swapdb");
  removeDb(db);
  RunJob job;
  QSignalSpy finished(&job, &RunJob::finished);
  int reports = 0;
  QObject::connect(&job, &RunJob::progress, [&](const collect::RunProgress&) {
    if (++reports == 2) job.cancel();
  });
  job.startProfile(smallProfile(db, 100000));
  const JobOutcome out = waitFor(job, finished);
  EXPECT_EQ(out.status, store::RunStatus::Incomplete) << out.message.toStdString();
  EXPECT_TRUE(out.message.startsWith("interrupted after ")) << out.message.toStdString();
  store::RunReader reader(db);
  const store::RunData d = reader.load();
  EXPECT_EQ(d.meta.status, store::RunStatus::Incomplete);
  EXPECT_GE(d.iterations.size(), 2u);
  EXPECT_LT(d.iterations.size(), 100u);
  EXPECT_FALSE(fs::exists(db + "-wal"));  // finished properly: one file
  removeDb(db);
}

TEST(RunJob, AnExistingDatabaseIsRefusedAndNothingRuns) {
  const std::string db = scratch("exists.swapdb");
  removeDb(db);
  { std::ofstream(db) << "not mine"; }
  RunJob job;
  QSignalSpy finished(&job, &RunJob::finished);
  job.startProfile(smallProfile(db, 2));
  const JobOutcome out = waitFor(job, finished);
  EXPECT_EQ(out.status, store::RunStatus::Failed);
  EXPECT_FALSE(out.created);
  EXPECT_TRUE(out.message.contains(QString::fromStdString(db))) << out.message.toStdString();
  std::ifstream in(db);
  std::string kept;
  std::getline(in, kept);
  EXPECT_EQ(kept, "not mine");
  removeDb(db);
}

TEST(RunJob, RunsAPlanIntoANewDatabaseThatRecordsIt) {
  const std::string plan = scratch("plan.json");
  const std::string db = scratch("run.swapdb");
  removeDb(db);
  std::ostringstream out, err;
  const std::string sample =
      std::string(SWAPSCOPE_SAMPLE_RUNS_DIR) + "/fmnist-cnn-cpu-profile.swapdb";
  ASSERT_EQ(cli::runCli({"plan", "--db", sample, "--budget", "16MiB", "--policy", "swap-all",
                         "--batch", "8", "--out", plan, "--force"},
                        out, err),
            0)
      << err.str();
  RunJob job;
  QSignalSpy finished(&job, &RunJob::finished);
  PlanJob p;
  p.plan = plan;
  p.config.warmup = 0;
  p.config.iterations = 2;
  p.db = db;
  job.startPlan(p);
  const JobOutcome outcome = waitFor(job, finished);
  EXPECT_EQ(outcome.status, store::RunStatus::Complete) << outcome.message.toStdString();
  const store::RunData d = store::RunReader(db).load();
  EXPECT_EQ(d.meta.kind, "run");
  ASSERT_EQ(d.plans.size(), 1u);
  EXPECT_EQ(d.plans[0].k, 8);
  EXPECT_EQ(d.iterations.size(), 2u);
  ASSERT_EQ(d.batches.size(), 1u);
  EXPECT_EQ(d.batches[0].measured_peak, store::readPlanFile(plan).predictions.peak_bytes);
  removeDb(db);
  fs::remove(plan);
}

}  // namespace
}  // namespace swapscope::gui

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  qRegisterMetaType<swapscope::gui::JobOutcome>();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
