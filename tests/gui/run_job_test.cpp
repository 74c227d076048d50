// SPDX-License-Identifier: MIT
// The app's profile and plan runs on a worker thread (RunJob): a small profile of fmnist-cnn on
// the CPU at two k, progress on the GUI thread, the database complete; a cancel mid-run leaves a
// readable database marked incomplete; a plan run records the plan; refusals end as failed.
// Then the same from the window's Run menu (RunController): the profile opened when it
// completes, Cancel in the progress dialog, the plan shown run into a new database, a refusal
// shown with the engine's message, and closing the window during a run. The Run dock's charts
// follow the run; after a run of the plan shown, the Memory, Streams and Summary views overlay the
// measurement (counts from the database's rows, errors equal to `swapscope compare`'s).
#include <gtest/gtest.h>
#include <unistd.h>

#include <qcustomplot.h>

#include <QApplication>
#include <QDockWidget>
#include <QMessageBox>
#include <QPointer>
#include <QProgressDialog>
#include <QPushButton>
#include <QSignalSpy>
#include <QThread>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands.h"
#include "cli/run_cli.h"
#include "common/format.h"
#include "graph/zoo.h"
#include "gui/gui_options.h"
#include "gui/main_window.h"
#include "gui/run_controller.h"
#include "gui/run_job.h"
#include "sample_runs.h"
#include "store/plan_file.h"
#include "store/run_db.h"
#include "views/memory_chart_view.h"
#include "views/streams_view.h"
#include "views/summary_view.h"

namespace swapscope::gui {
namespace {

namespace fs = std::filesystem;

/// QSignalSpy reads JobOutcome from RunJob's signals.
[[maybe_unused]] const int kJobOutcomeType = qRegisterMetaType<JobOutcome>();

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
  if (finished.isEmpty()) {
    EXPECT_TRUE(finished.wait(120000)) << "the job did not finish";
  }
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

TEST(RunJob, ReplacingKeepsTheEarlierDatabaseUntilTheNewRunCompletes) {
  const std::string db = scratch("replace.swapdb");
  const std::string recording = scratch("replace.recording.swapdb");
  removeDb(db);
  removeDb(recording);
  RunJob job;
  QSignalSpy finished(&job, &RunJob::finished);
  job.startProfile(smallProfile(db, 1));
  ASSERT_EQ(waitFor(job, finished).status, store::RunStatus::Complete);
  const std::string started = store::RunReader(db).meta().started_utc;
  // Replaced, then cancelled: the earlier run stays, the new one is beside it and said to be.
  int reports = 0;
  const auto connection =
      QObject::connect(&job, &RunJob::progress, [&](const collect::RunProgress&) {
        if (++reports == 1) job.cancel();
      });
  ProfileJob again = smallProfile(db, 100000);
  again.force = true;
  job.startProfile(again);
  JobOutcome out = waitFor(job, finished);
  QObject::disconnect(connection);
  EXPECT_EQ(out.status, store::RunStatus::Incomplete) << out.message.toStdString();
  EXPECT_EQ(out.db.toStdString(), recording);
  EXPECT_EQ(out.kept.toStdString(), "'" + db + "' still holds the earlier run; this run is in '" +
                                        recording + "' (it did not complete)");
  EXPECT_EQ(store::RunReader(db).meta().started_utc, started);
  EXPECT_EQ(store::RunReader(db).counts().iterations, 2);
  EXPECT_GE(store::RunReader(recording).counts().iterations, 1);
  // Replaced and run to its end: one move over the earlier file.
  ProfileJob whole = smallProfile(db, 2);
  whole.force = true;
  job.startProfile(whole);
  out = waitFor(job, finished);
  EXPECT_EQ(out.status, store::RunStatus::Complete) << out.message.toStdString();
  EXPECT_EQ(out.db.toStdString(), db);
  EXPECT_TRUE(out.kept.isEmpty()) << out.kept.toStdString();
  EXPECT_EQ(store::RunReader(db).counts().iterations, 4);
  EXPECT_TRUE(fs::exists(recording));  // the cancelled one's, kept
  removeDb(db);
  removeDb(recording);
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

/// Runs `plan` into `db` on a RunJob, without warm-up, and waits for its outcome.
JobOutcome runPlan(const std::string& plan, const std::string& db, int iterations) {
  RunJob job;
  QSignalSpy finished(&job, &RunJob::finished);
  PlanJob p;
  p.plan = plan;
  p.config.warmup = 0;
  p.config.iterations = iterations;
  p.db = db;
  job.startPlan(p);
  return waitFor(job, finished);
}

TEST(RunJob, RunsAPlanIntoANewDatabaseThatRecordsIt) {
  const std::string plan = scratch("plan.json");
  const std::string db = scratch("run.swapdb");
  removeDb(db);
  {
    const auto made = cli::testing::writeFmnistPlan(swapscope::testing::sampleRunsDir(), plan);
    ASSERT_EQ(made.code, 0) << made.err;
  }
  const JobOutcome outcome = runPlan(plan, db, 2);
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

/// The fmnist sample's plan, written to `plan` as a plan whose model was fitted on a GPU records
/// it.
void writePlanFittedOnAGpu(const std::string& plan) {
  const auto made = cli::testing::writeFmnistPlan(swapscope::testing::sampleRunsDir(), plan);
  ASSERT_EQ(made.code, 0) << made.err;
  store::PlanFile gpu = store::readPlanFile(plan);
  gpu.backend = "cuda";
  gpu.device_name = "NVIDIA H100 80GB HBM3";
  std::ofstream(plan) << store::planToJson(gpu).dump(2);
}

TEST(RunJob, APlanFittedOnAnotherDeviceRunsWithTheCliWarning) {
  const std::string plan = scratch("gpu-plan.json");
  const std::string db = scratch("gpu-run.swapdb");
  removeDb(db);
  ASSERT_NO_FATAL_FAILURE(writePlanFittedOnAGpu(plan));
  const JobOutcome outcome = runPlan(plan, db, 1);
  EXPECT_EQ(outcome.status, store::RunStatus::Complete) << outcome.message.toStdString();
  EXPECT_TRUE(outcome.warning.startsWith(
      "the plan's model was fitted on NVIDIA H100 80GB HBM3 (cuda), but this run is on "))
      << outcome.warning.toStdString();
  removeDb(db);
  fs::remove(plan);
}

/// Waits for the controller's jobFinished() and returns its outcome.
JobOutcome waitForController(QSignalSpy& finished) {
  if (finished.isEmpty()) {
    EXPECT_TRUE(finished.wait(120000)) << "the job did not finish";
  }
  if (finished.isEmpty()) return {};
  return finished.takeFirst().at(0).value<JobOutcome>();
}

/// Waits until the window shows a plan of the database `db` (at `budget` bytes, when given).
bool waitForPlanOf(MainWindow& window, const std::string& db, std::int64_t budget = 0) {
  QSignalSpy shown(&window, &MainWindow::planShown);
  for (int i = 0; i < 20; ++i) {
    const PlanOutcome* p = window.shownPlan();
    if (p && p->context && p->context->run && p->context->run->path == db &&
        (budget == 0 || p->request.budget == budget))
      return true;
    if (!shown.wait(10000)) return false;
  }
  return false;
}

TEST(RunController, ARunOnAnotherDeviceThanThePlansIsSaidInTheSummary) {
  const std::string plan = scratch("gpu-overlay-plan.json");
  const std::string db = scratch("gpu-overlay-run.swapdb");
  removeDb(db);
  ASSERT_NO_FATAL_FAILURE(writePlanFittedOnAGpu(plan));
  ASSERT_EQ(runPlan(plan, db, 1).status, store::RunStatus::Complete);
  const std::string sample = swapscope::testing::fmnistRun();
  MainWindow window;
  auto* runs = new RunController(&window);
  window.openDatabase(QString::fromStdString(sample));
  ASSERT_TRUE(waitForPlanOf(window, sample));
  QSignalSpy applied(runs, &RunController::measurementApplied);
  runs->openMeasurement(QString::fromStdString(db));
  ASSERT_TRUE(applied.wait(30000));
  const std::string expected =
      "device: the plan's model was fitted on NVIDIA H100 80GB HBM3 (cuda), but this run is on " +
      store::RunReader(db).meta().device + " (cpu)";
  bool said = false;
  for (const std::string& w : window.view<SummaryView>()->data().warnings)
    said = said || w.rfind(expected, 0) == 0;
  EXPECT_TRUE(said) << expected;
  removeDb(db);
  fs::remove(plan);
}

TEST(RunController, AProfileFromTheAppIsOpenedWhenItCompletes) {
  const std::string db = scratch("app-profile.swapdb");
  removeDb(db);
  MainWindow window;
  auto* runs = new RunController(&window);
  QSignalSpy finished(runs, &RunController::jobFinished);
  runs->startProfile(smallProfile(db, 2));
  ASSERT_NE(runs->progressDialog(), nullptr);
  EXPECT_TRUE(runs->progressDialog()->isVisible());
  const JobOutcome out = waitForController(finished);
  EXPECT_EQ(out.status, store::RunStatus::Complete) << out.message.toStdString();
  EXPECT_FALSE(runs->progressDialog()->isVisible());
  EXPECT_EQ(runs->progressDialog()->maximum(), 4);  // 2 k x 2 iterations
  EXPECT_EQ(runs->progressDialog()->value(), 4);
  const store::RunData d = store::RunReader(db).load();
  EXPECT_EQ(d.meta.status, store::RunStatus::Complete);
  EXPECT_EQ(d.iterations.size(), 4u);
  EXPECT_TRUE(waitForPlanOf(window, db)) << "the window did not open " << db;
  removeDb(db);
}

TEST(RunController, CancelInTheProgressDialogLeavesAnIncompleteDatabase) {
  const std::string db = scratch("app-cancel.swapdb");
  removeDb(db);
  MainWindow window;
  auto* runs = new RunController(&window);
  QSignalSpy finished(runs, &RunController::jobFinished);
  int reports = 0;
  QObject::connect(runs->job(), &RunJob::progress, [&](const collect::RunProgress&) {
    if (++reports == 2) runs->progressDialog()->findChild<QPushButton*>()->click();
  });
  runs->startProfile(smallProfile(db, 100000));
  const JobOutcome out = waitForController(finished);
  EXPECT_EQ(out.status, store::RunStatus::Incomplete) << out.message.toStdString();
  const store::RunData d = store::RunReader(db).load();
  EXPECT_EQ(d.meta.status, store::RunStatus::Incomplete);
  EXPECT_GE(d.iterations.size(), 2u);
  EXPECT_LT(d.iterations.size(), 100u);
  removeDb(db);
}

TEST(RunController, RunsThePlanShownIntoANewDatabase) {
  const std::string sample = swapscope::testing::fmnistRun();
  const std::string db = scratch("app-run.swapdb");
  removeDb(db);
  MainWindow window;
  auto* runs = new RunController(&window);
  EXPECT_THROW(runs->startPlanShown(QString::fromStdString(db), 2, 0, false), Error);  // no plan
  window.openDatabase(QString::fromStdString(sample));
  ASSERT_TRUE(waitForPlanOf(window, sample));
  window.setBudget(16 << 20);  // a small k, for a short run
  ASSERT_TRUE(waitForPlanOf(window, sample, 16 << 20));
  const store::PlanFile shown = *window.shownPlan()->planFile();
  QSignalSpy finished(runs, &RunController::jobFinished);
  runs->startPlanShown(QString::fromStdString(db), 2, 0, false);
  const JobOutcome out = waitForController(finished);
  EXPECT_EQ(out.status, store::RunStatus::Complete) << out.message.toStdString();
  const store::RunData d = store::RunReader(db).load();
  EXPECT_EQ(d.meta.kind, "run");
  ASSERT_EQ(d.plans.size(), 1u);
  EXPECT_EQ(store::planFromJson(nlohmann::json::parse(d.plans[0].json), "stored plan"), shown);
  EXPECT_EQ(d.iterations.size(), 2u);
  ASSERT_EQ(d.batches.size(), 1u);
  EXPECT_EQ(d.batches[0].k, shown.k);
  // The recorded command line is the CLI's plan and run: the plan command writes the plan run.
  const std::string planFile = scratch("app-run.plan.json");
  const std::string expected = "swapscope plan --db " + sample +
                               " --budget 16777216 --policy accudnn --mode argmin --out " +
                               planFile + " && swapscope run --plan " + planFile +
                               " --device cpu --collector off --iters 2 --warmup 0 --db " + db;
  EXPECT_EQ(d.meta.command_line, expected);
  std::vector<std::string> planArgs;
  {
    std::istringstream words(expected.substr(0, expected.find(" && ")));
    for (std::string w; words >> w;)
      planArgs.push_back(w);
  }
  planArgs.erase(planArgs.begin());  // "swapscope"
  fs::remove(planFile);
  const auto replanned = cli::testing::run(planArgs);
  ASSERT_EQ(replanned.code, 0) << replanned.err;
  EXPECT_EQ(store::readPlanFile(planFile), shown);
  fs::remove(planFile);
  removeDb(db);
}

TEST(LiveRunData, APointPerIterationAndTheLatestRecordedIterationsPoolAndStalls) {
  LiveRunData d;
  addLiveReport(d, 4, 1, 0.5, nullptr);  // a warm-up: its time only
  EXPECT_EQ(d.iteration, -1);
  store::IterationRows rows;
  rows.iteration.k = 4;
  rows.iteration.iteration = 0;
  rows.iteration.start_ns = 1'000'000;
  rows.iteration.stall_ns = 3'000'000;
  rows.memory = {{4, 0, 3'000'000, 300}, {4, 0, 1'000'000, 100}, {4, 0, 2'000'000, 200}};
  store::SampleRow fwd;
  fwd.step = 2;
  fwd.stall_ns = 3'000'000;
  store::SampleRow idle;  // no stall
  idle.step = 3;
  store::SampleRow update;
  update.direction = store::Direction::Update;
  update.stall_ns = 5;
  rows.samples = {fwd, idle, update};
  addLiveReport(d, 4, 2, 0.25, &rows);
  addLiveReport(d, 8, 1, 0.75, nullptr);
  ASSERT_EQ(d.times.size(), 2u);
  EXPECT_EQ(d.times[0].k, 4);
  EXPECT_EQ(d.times[0].seconds, (std::vector<double>{0.5, 0.25}));
  EXPECT_EQ(d.times[0].iteration, (std::vector<double>{1, 2}));
  EXPECT_EQ(d.times[1].k, 8);
  EXPECT_EQ(d.k, 4);
  EXPECT_EQ(d.iteration, 0);
  EXPECT_EQ(d.pool_ms, (std::vector<double>{0, 1, 2}));  // in time order, from the start
  EXPECT_EQ(d.pool_bytes, (std::vector<double>{100, 200, 300}));
  EXPECT_EQ(d.stall_steps, (std::vector<double>{2}));
  EXPECT_EQ(d.stall_ms, (std::vector<double>{3}));
  EXPECT_EQ(d.stall_total_ms, 3.0);
}

/// One recorded iteration's rows: pool bytes `bytes` at 1, 2, 3 ms, a stall before step 2.
store::IterationRows recordedRows(std::int64_t k, int iteration,
                                  const std::vector<std::int64_t>& bytes) {
  store::IterationRows rows;
  rows.iteration.k = k;
  rows.iteration.iteration = iteration;
  rows.iteration.stall_ns = 2'000'000;
  for (std::size_t i = 0; i < bytes.size(); ++i)
    rows.memory.push_back({k, iteration, static_cast<std::int64_t>(i + 1) * 1'000'000, bytes[i]});
  store::SampleRow stalled;
  stalled.step = 2;
  stalled.stall_ns = 2'000'000;
  rows.samples = {stalled};
  return rows;
}

TEST(LiveRunPanel, AReportAppendsItsPointAndOnlyARecordedIterationRedrawsThePoolAndStalls) {
  LiveRunPanel panel;
  LiveRunData d;
  addLiveReport(d, 4, 1, 0.5, nullptr);
  panel.setData(d);
  ASSERT_EQ(panel.times()->graphCount(), 1);
  const QPointer<QCPGraph> k4 = panel.times()->graph(0);
  QSignalSpy poolReplots(panel.pool(), &QCustomPlot::afterReplot);
  QSignalSpy stallReplots(panel.stalls(), &QCustomPlot::afterReplot);
  // A warm-up iteration: one more point on the same graph; the pool and stalls stay as drawn.
  addLiveReport(d, 4, 2, 0.25, nullptr);
  panel.setData(d);
  ASSERT_TRUE(k4) << "the k = 4 graph was made again";
  ASSERT_EQ(panel.times()->graph(0), k4.data());
  ASSERT_EQ(k4->dataCount(), 2);
  EXPECT_EQ(k4->data()->at(1)->key, 2.0);
  EXPECT_EQ(k4->data()->at(1)->value, 250.0);
  EXPECT_EQ(poolReplots.size(), 0);
  EXPECT_EQ(stallReplots.size(), 0);
  // A recorded one: its pool bytes and stalls.
  const store::IterationRows rows = recordedRows(4, 0, {100, 300, 200});
  addLiveReport(d, 4, 3, 0.125, &rows);
  panel.setData(d);
  EXPECT_EQ(k4->dataCount(), 3);
  EXPECT_EQ(poolReplots.size(), 1);
  EXPECT_EQ(stallReplots.size(), 1);
  EXPECT_EQ(panel.pool()->graph(0)->dataCount(), 3);
  EXPECT_EQ(panel.pool()->graph(0)->data()->at(1)->value, 300.0 / (1024.0 * 1024.0));
  EXPECT_EQ(static_cast<QCPBars*>(panel.stalls()->plottable(0))->dataCount(), 1);
  // The next k: a second graph; the first keeps its points.
  addLiveReport(d, 8, 1, 0.75, nullptr);
  panel.setData(d);
  ASSERT_EQ(panel.times()->graphCount(), 2);
  EXPECT_EQ(panel.times()->graph(0), k4.data());
  EXPECT_EQ(k4->dataCount(), 3);
  EXPECT_EQ(panel.times()->graph(1)->dataCount(), 1);
  EXPECT_EQ(panel.times()->graph(1)->name(), QString("k = 8"));
  EXPECT_EQ(poolReplots.size(), 1);
  // A new run is drawn from nothing.
  panel.setData(LiveRunData{});
  EXPECT_EQ(panel.times()->graphCount(), 0);
  EXPECT_EQ(panel.pool()->graph(0)->dataCount(), 0);
  EXPECT_EQ(static_cast<QCPBars*>(panel.stalls()->plottable(0))->dataCount(), 0);
}

/// The recorded iteration at k whose t_iter is the median (the lower middle one).
const store::IterationRow& medianIteration(const store::RunData& run, std::int64_t k) {
  std::vector<const store::IterationRow*> its;
  for (const store::IterationRow& it : run.iterations)
    if (it.k == k) its.push_back(&it);
  std::sort(its.begin(), its.end(),
            [](const auto* a, const auto* b) { return a->duration_ns < b->duration_ns; });
  return *its.at((its.size() - 1) / 2);
}

TEST(RunController, AfterRunPlanTheViewsOverlayTheMeasurementWithTheClisErrors) {
  const std::string sample = swapscope::testing::fmnistRun();
  const std::string db = scratch("app-overlay.swapdb");
  removeDb(db);
  MainWindow window;
  window.resize(1280, 760);
  window.show();
  auto* runs = new RunController(&window);
  window.openDatabase(QString::fromStdString(sample));
  ASSERT_TRUE(waitForPlanOf(window, sample));
  window.setBudget(16 << 20);
  ASSERT_TRUE(waitForPlanOf(window, sample, 16 << 20));
  QSignalSpy finished(runs, &RunController::jobFinished);
  QSignalSpy applied(runs, &RunController::measurementApplied);
  runs->startPlanShown(QString::fromStdString(db), 2, 0, false);
  const JobOutcome out = waitForController(finished);
  ASSERT_EQ(out.status, store::RunStatus::Complete) << out.message.toStdString();
  ASSERT_TRUE(applied.wait(60000)) << "the measurement was not applied";
  ASSERT_TRUE(runs->overlayShown());
  const store::RunData d = store::RunReader(db).load();
  ASSERT_EQ(d.plans.size(), 1u);
  const std::int64_t k = d.plans[0].k;

  // The Run panel followed the run: a point per iteration, the pool bytes and the stalls of the
  // last one.
  ASSERT_NE(runs->runDock(), nullptr);
  EXPECT_TRUE(runs->runDock()->isVisible());
  const LiveRunData& live = runs->liveData();
  ASSERT_EQ(live.times.size(), 1u);
  ASSERT_EQ(live.times[0].seconds.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i)
    EXPECT_EQ(live.times[0].seconds[i], static_cast<double>(d.iterations[i].duration_ns) * 1e-9);
  EXPECT_EQ(runs->livePanel()->times()->graph(0)->dataCount(), 2);
  EXPECT_EQ(live.iteration, 1);
  ASSERT_FALSE(live.pool_bytes.empty());
  EXPECT_EQ(*std::max_element(live.pool_bytes.begin(), live.pool_bytes.end()),
            static_cast<double>(d.batches.at(0).measured_peak));
  std::size_t lastStalls = 0;
  for (const store::SampleRow& r : d.samples)
    lastStalls += r.iteration == 1 && r.direction != store::Direction::Update && r.stall_ns > 0;
  EXPECT_EQ(live.stall_steps.size(), lastStalls);

  // Streams: the measured row is the median iteration's samples and transfers.
  const store::IterationRow& it = medianIteration(d, k);
  int rows = 0, stalled = 0;
  for (const store::SampleRow& r : d.samples) {
    if (r.iteration != it.iteration) continue;
    ++rows;
    stalled += r.direction != store::Direction::Update &&
               static_cast<double>(r.stall_ns) > 0.01 * static_cast<double>(it.duration_ns);
  }
  for (const store::TransferRow& r : d.transfers)
    rows += r.iteration == it.iteration;
  window.showView("streams");
  window.view<StreamsView>()->plot()->replot();
  EXPECT_EQ(window.view<StreamsView>()->measuredBarCount(), rows);
  EXPECT_EQ(window.view<StreamsView>()->measuredStallCount(), stalled);

  // Memory: one more curve, the pool's high water as its peak.
  window.showView("memory");
  const auto& series = window.view<MemoryChartView>()->data().series;
  ASSERT_FALSE(series.empty());
  EXPECT_TRUE(series.back().measured);
  EXPECT_EQ(series.back().peak, d.batches.at(0).measured_peak);

  // Summary: t_iter, stall and peak with the errors `swapscope compare` reports.
  const auto& m = window.view<SummaryView>()->data().measured;
  ASSERT_TRUE(m.has_value());
  const auto cli = cli::testing::run({"compare", db, db, "--json"});
  ASSERT_EQ(cli.code, 0) << cli.err;
  const auto pvm = nlohmann::json::parse(cli.out)["a"]["predicted_vs_measured"];
  ASSERT_FALSE(pvm.is_null()) << cli.out;
  const auto pct = [](double p, double me) { return 100.0 * (p - me) / me; };
  EXPECT_EQ(m->k, pvm["k"].get<std::int64_t>());
  EXPECT_EQ(m->t_iter_measured, pvm["t_iter_s"]["measured"].get<double>());
  EXPECT_EQ(m->t_iter_error_pct, pct(pvm["t_iter_s"]["predicted"].get<double>(),
                                     pvm["t_iter_s"]["measured"].get<double>()));
  EXPECT_EQ(m->peak_measured, pvm["peak_bytes"]["measured"].get<std::int64_t>());
  EXPECT_EQ(m->peak_error_pct,
            pct(static_cast<double>(pvm["peak_bytes"]["predicted"].get<std::int64_t>()),
                static_cast<double>(pvm["peak_bytes"]["measured"].get<std::int64_t>())));
  EXPECT_EQ(m->stall_measured, pvm["stall_s"]["measured"].get<double>());
  // The CLI's text table shows the same t_iter error.
  const auto text = cli::testing::run({"compare", db, db});
  const std::string tIterError = formatRelativeError(pvm["t_iter_s"]["predicted"].get<double>(),
                                                     pvm["t_iter_s"]["measured"].get<double>());
  EXPECT_NE(text.out.find(tIterError), std::string::npos) << text.out;
  bool row = false;
  for (const SummaryRow& r : window.view<SummaryView>()->data().rows)
    row = row || (r.label == "t_iter measured" && r.value.find(tIterError) != std::string::npos);
  EXPECT_TRUE(row);

  // Screenshots for a look (SWAPSCOPE_VIEWS_PNG_DIR).
  if (const char* dir = std::getenv("SWAPSCOPE_VIEWS_PNG_DIR")) {
    for (const QString view : {"memory", "streams", "summary"})
      window.saveFigure(view, QString("%1/overlay-%2.png").arg(dir, view), true);
    runs->livePanel()->grab().save(QString("%1/run-dock.png").arg(dir));
  }

  // Another budget plans another plan: the overlay goes, and the Summary says whose it was.
  window.setBudget(64 << 20);
  ASSERT_TRUE(waitForPlanOf(window, sample, 64 << 20));
  EXPECT_FALSE(runs->overlayShown());  // the budget is part of the plan
  EXPECT_FALSE(window.view<SummaryView>()->data().measured.has_value());
  bool said = false;
  for (const std::string& w : window.view<SummaryView>()->data().warnings)
    said = said || w.find("is of another plan") != std::string::npos;
  EXPECT_TRUE(said);
  window.view<StreamsView>()->plot()->replot();
  EXPECT_EQ(window.view<StreamsView>()->measuredBarCount(), 0);
  removeDb(db);
}

/// The fmnist sample's plan (swap-all, 16 MiB, k = 8) run for one iteration into `db`, with the
/// plan relabelled as `policy`'s (the run records it as written).
void runFmnistPlan(const std::string& plan, const std::string& db, const std::string& policy) {
  removeDb(db);
  const auto made = cli::testing::writeFmnistPlan(swapscope::testing::sampleRunsDir(), plan);
  ASSERT_EQ(made.code, 0) << made.err;
  store::PlanFile file = store::readPlanFile(plan);
  file.policy = policy;
  std::ofstream(plan) << store::planToJson(file).dump(2);
  ASSERT_EQ(runPlan(plan, db, 1).status, store::RunStatus::Complete);
}

TEST(RunController, TheMeasurementIsReappliedOnlyWhenThePlanShownStartsOrStopsBeingItsPlan) {
  const std::string plan = scratch("reapply-plan.json");
  const std::string db = scratch("reapply-run.swapdb");
  ASSERT_NO_FATAL_FAILURE(runFmnistPlan(plan, db, "swap-all"));
  const std::string sample = swapscope::testing::fmnistRun();
  MainWindow window;
  window.resize(1280, 760);
  window.show();
  auto* runs = new RunController(&window);
  {
    QSignalSpy shown(&window, &MainWindow::planShown);
    window.applyOptions(
        parseGuiOptions({"swapscope-gui", QString::fromStdString(sample), "--budget", "16MiB",
                         "--batch", "8", "--policy", "swap-all", "--view", "streams"}));
    ASSERT_TRUE(shown.wait(60000));
  }
  QSignalSpy applied(runs, &RunController::measurementApplied);
  runs->openMeasurement(QString::fromStdString(db));
  ASSERT_TRUE(applied.wait(30000));
  ASSERT_TRUE(runs->overlayShown());
  // A drag over other budgets: the overlay is taken off once, not at every plan.
  for (const std::int64_t mib : {20, 24, 28}) {
    window.setBudget(mib << 20);
    ASSERT_TRUE(waitForPlanOf(window, sample, mib << 20));
  }
  EXPECT_EQ(applied.size(), 2);  // the measurement, then its removal
  EXPECT_FALSE(runs->overlayShown());
  EXPECT_FALSE(window.view<SummaryView>()->data().measured.has_value());
  window.view<StreamsView>()->plot()->replot();
  EXPECT_EQ(window.view<StreamsView>()->measuredBarCount(), 0);
  // Back at the run's budget: applied again, and every view draws it over the new plan.
  window.setBudget(16 << 20);
  ASSERT_TRUE(waitForPlanOf(window, sample, 16 << 20));
  EXPECT_EQ(applied.size(), 3);
  EXPECT_TRUE(runs->overlayShown());
  const store::RunData d = store::RunReader(db).load();
  EXPECT_TRUE(window.view<SummaryView>()->data().measured.has_value());
  window.view<StreamsView>()->plot()->replot();
  std::size_t rows = d.transfers.size();
  for (const store::SampleRow& r : d.samples)
    rows += r.iteration == 0;
  EXPECT_EQ(window.view<StreamsView>()->measuredBarCount(), static_cast<int>(rows));
  window.showView("memory");
  ASSERT_FALSE(window.view<MemoryChartView>()->data().series.empty());
  EXPECT_TRUE(window.view<MemoryChartView>()->data().series.back().measured);
  EXPECT_EQ(window.view<MemoryChartView>()->data().series.back().peak,
            d.batches.at(0).measured_peak);
  removeDb(db);
  fs::remove(plan);
}

TEST(RunController, ARunOfAPlanOpensShowingThatPlanWithItsMeasurement) {
  // A run of swap-all's swap set recorded as accudnn's plan: a re-plan at its budget and k
  // keeps FMs swap-all swaps, so only the recorded plan is the one measured.
  const std::string plan = scratch("recorded-plan.json");
  const std::string db = scratch("recorded-run.swapdb");
  ASSERT_NO_FATAL_FAILURE(runFmnistPlan(plan, db, "accudnn"));
  const store::PlanFile recorded = store::readPlanFile(plan);
  MainWindow window;
  auto* runs = new RunController(&window);
  QSignalSpy applied(runs, &RunController::measurementApplied);
  window.openDatabase(QString::fromStdString(db));
  ASSERT_TRUE(waitForPlanOf(window, db));
  const PlanOutcome& shown = *window.shownPlan();
  EXPECT_EQ(shown.request.budget, recorded.budget);
  EXPECT_EQ(shown.request.policy, Policy::AccUdnn);
  EXPECT_EQ(shown.request.batch, recorded.k);
  const std::optional<store::PlanFile> file = shown.planFile();
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->k, recorded.k);
  EXPECT_EQ(file->swap_set, recorded.swap_set);
  // The planner's own plan for the request is another swap set.
  const perf::PlanResult replanned = shown.context->planner->plan(shown.request);
  ASSERT_TRUE(replanned.trainable);
  EXPECT_NE(replanned.best.swapped, shown.result->best.swapped);
  if (applied.isEmpty()) {
    ASSERT_TRUE(applied.wait(30000));
  }
  EXPECT_TRUE(runs->overlayShown());
  EXPECT_TRUE(window.view<SummaryView>()->data().measured.has_value());
  ASSERT_FALSE(window.view<MemoryChartView>()->data().series.empty());
  EXPECT_TRUE(window.view<MemoryChartView>()->data().series.back().measured);
  // Another budget is planned as ever.
  window.setBudget(recorded.budget * 2);
  ASSERT_TRUE(waitForPlanOf(window, db, recorded.budget * 2));
  EXPECT_FALSE(runs->overlayShown());
  removeDb(db);
  fs::remove(plan);
}

TEST(RunController, ARunOfAPlanInSubBatchesOpensOnTheWindowsOwnPlanAndSaysWhy) {
  // k = 8 in 2 sub-batches of 4: the window plans whole minibatches, so it keeps its own
  // request instead of planning k = 8 whole in a budget made for 4.
  const std::string plan = scratch("sub-batch-plan.json");
  const std::string db = scratch("sub-batch-run.swapdb");
  removeDb(db);
  const auto made = cli::testing::run({"plan", "--db", swapscope::testing::fmnistRun(), "--budget",
                                       "16MiB", "--policy", "swap-all", "--batch", "8",
                                       "--sub-batches", "2", "--out", plan, "--force"});
  ASSERT_EQ(made.code, 0) << made.err;
  ASSERT_EQ(runPlan(plan, db, 1).status, store::RunStatus::Complete);
  MainWindow window;
  window.openDatabase(QString::fromStdString(db));
  ASSERT_TRUE(waitForPlanOf(window, db));
  const PlanOutcome& shown = *window.shownPlan();
  EXPECT_NE(shown.request.batch, std::optional<std::int64_t>(8));
  EXPECT_TRUE(shown.result && shown.result->trainable);
  EXPECT_NE(window.statusText().find("in 2 sub-batches"), std::string::npos) << window.statusText();
  removeDb(db);
  fs::remove(plan);
}

TEST(RunController, RunsTheZooModelShownNotTheProfiledNetwork) {
  // The fmnist-cnn sample's model, transferred to a zoo network: the run trains that network.
  const std::string sample = swapscope::testing::fmnistRun();
  const std::string db = scratch("app-run-zoo.swapdb");
  removeDb(db);
  MainWindow window;
  auto* runs = new RunController(&window);
  {
    QSignalSpy shown(&window, &MainWindow::planShown);
    window.applyOptions(
        parseGuiOptions({"swapscope-gui", QString::fromStdString(sample), "--model", "resnet20",
                         "--budget", "64MiB", "--batch", "2", "--policy", "swap-all"}));
    ASSERT_TRUE(shown.wait(60000));
  }
  ASSERT_TRUE(window.shownPlan() && window.shownPlan()->context->transferred);
  QSignalSpy finished(runs, &RunController::jobFinished);
  runs->startPlanShown(QString::fromStdString(db), 1, 0, false);
  const JobOutcome out = waitForController(finished);
  EXPECT_EQ(out.status, store::RunStatus::Complete) << out.message.toStdString();
  const store::RunData d = store::RunReader(db).load();
  EXPECT_EQ(d.network.name, "resnet20");
  EXPECT_EQ(d.iterations.size(), 1u);
  removeDb(db);
}

TEST(RunController, ARefusalShowsTheEnginesMessage) {
  const std::string db = scratch("app-exists.swapdb");
  removeDb(db);
  { std::ofstream(db) << "not mine"; }
  MainWindow window;
  auto* runs = new RunController(&window);
  QSignalSpy finished(runs, &RunController::jobFinished);
  runs->startProfile(smallProfile(db, 2));
  const JobOutcome out = waitForController(finished);
  EXPECT_EQ(out.status, store::RunStatus::Failed);
  const auto boxes = window.findChildren<QMessageBox*>();
  ASSERT_EQ(boxes.size(), 1);
  EXPECT_EQ(boxes[0]->text(), out.message);
  EXPECT_TRUE(out.message.contains(QString::fromStdString(db))) << out.message.toStdString();
  removeDb(db);
}

TEST(RunController, ClosingTheWindowDuringARunAsksThenCancelsAndCloses) {
  const std::string db = scratch("app-close.swapdb");
  removeDb(db);
  MainWindow window;
  window.show();
  auto* runs = new RunController(&window);
  int asked = 0;
  runs->confirmClose = [&] {
    ++asked;
    return true;
  };
  QSignalSpy finished(runs, &RunController::jobFinished);
  bool closedAtOnce = true;
  QObject::connect(runs->job(), &RunJob::progress, [&](const collect::RunProgress&) {
    if (asked == 0) closedAtOnce = window.close();
  });
  runs->startProfile(smallProfile(db, 100000));
  const JobOutcome out = waitForController(finished);
  EXPECT_EQ(asked, 1);
  EXPECT_FALSE(closedAtOnce);  // it waited for the iteration to end
  EXPECT_EQ(out.status, store::RunStatus::Incomplete) << out.message.toStdString();
  EXPECT_FALSE(window.isVisible());  // then closed
  EXPECT_EQ(store::RunReader(db).meta().status, store::RunStatus::Incomplete);
  removeDb(db);
}

}  // namespace
}  // namespace swapscope::gui
