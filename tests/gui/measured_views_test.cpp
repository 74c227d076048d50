// SPDX-License-Identifier: MIT
/// The Timeline and Compare views in the window, headless, against the CLI in-process:
/// `swapscope compare --json` for the comparison's figures, `swapscope trace` for Open in
/// Perfetto. Sample runs are only read; every file is written in a temporary folder.
#include <qcustomplot.h>
#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QHeaderView>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <nlohmann/json.hpp>

#include "cli/run_cli.h"
#include "common/error.h"
#include "graph/zoo.h"
#include "gui/main_window.h"
#include "gui/measured_views.h"
#include "gui/run_controller.h"
#include "sample_runs.h"
#include "store/chrome_trace.h"
#include "store/run_db.h"
#include "views/compare_data.h"
#include "views/compare_view.h"
#include "views/timeline_data.h"
#include "views/timeline_view.h"

namespace swapscope::gui {
namespace {

const std::string kRuns = swapscope::testing::sampleRunsDir();
const std::string kFmnist = kRuns + "/fmnist-cnn-cpu-profile.swapdb";
const std::string kResnet = kRuns + "/resnet56-32x32-cpu-profile.swapdb";
constexpr int kWaitMs = 120000;

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::json cliCompare(const std::string& a, const std::string& b) {
  const auto r = cli::testing::run({"compare", a, b, "--json", "--top", "100000"});
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

/// A second Fashion-MNIST profile (same network as the sample, k = 3, 6, 12, 16, 24), made once.
class SecondProfile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new QTemporaryDir;
    path_ = dir_->filePath("fmnist-b.swapdb").toStdString();
    const auto r = cli::testing::run({"profile", "--model", "fmnist-cnn", "--budget", "32MiB",
                                      "--iters", "2", "--max-batch", "24", "--db", path_});
    ASSERT_EQ(r.code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static QTemporaryDir* dir_;
  static std::string path_;
};
QTemporaryDir* SecondProfile::dir_ = nullptr;
std::string SecondProfile::path_;

/// Every figure of the CLI's JSON equals the data builder's.
void expectSameComparison(const nlohmann::json& j, const perf::RunComparison& c) {
  EXPECT_EQ(j["same_network"].get<bool>(), c.same_network);
  EXPECT_EQ(j["a"]["pcie"]["h2d_bytes_per_s"].get<double>(), c.a.h2d_bytes_per_s);
  // A figure nothing measured is null in the JSON.
  const auto same = [](const nlohmann::json& v, int points, double value) {
    if (points == 0) {
      EXPECT_TRUE(v.is_null()) << v;
    } else {
      EXPECT_EQ(v.get<double>(), value);
    }
  };
  same(j["b"]["pcie"]["d2h_bytes_per_s"], c.b.d2h_points, c.b.d2h_bytes_per_s);
  same(j["b"]["pcie"]["duplex_factor"], c.b.duplex_points, c.b.duplex_factor);
  EXPECT_EQ(j["b"]["pcie"]["duplex_points"].get<int>(), c.b.duplex_points);
  ASSERT_EQ(j["curves"].size(), c.curves.size());
  for (std::size_t i = 0; i < c.curves.size(); ++i) {
    const auto& w = j["curves"][i];
    EXPECT_EQ(w["target"].get<std::string>(), c.curves[i].target);
    EXPECT_EQ(w["direction"].get<std::string>(), c.curves[i].direction);
    EXPECT_EQ(w["work"].get<double>(), c.curves[i].work);
    EXPECT_EQ(w["seconds_a"].get<double>(), c.curves[i].seconds_a);
    EXPECT_EQ(w["seconds_b"].get<double>(), c.curves[i].seconds_b);
    EXPECT_EQ(w["extrapolated"].get<bool>(), c.curves[i].extrapolated);
  }
  EXPECT_EQ(j["steps"]["k"].get<std::int64_t>(), c.step_k);
  EXPECT_EQ(j["steps"]["total"].get<std::size_t>(), c.steps_total);
  ASSERT_EQ(j["steps"]["largest"].size(), c.steps.size());
  for (std::size_t i = 0; i < c.steps.size(); ++i) {
    const auto& s = j["steps"]["largest"][i];
    EXPECT_EQ(s["step"].get<int>(), c.steps[i].step);
    EXPECT_EQ(s["layer"].get<std::string>(), c.steps[i].layer);
    EXPECT_EQ(s["direction"].get<std::string>(), c.steps[i].direction);
    EXPECT_EQ(s["seconds_a"].get<double>(), c.steps[i].seconds_a);
    EXPECT_EQ(s["seconds_b"].get<double>(), c.steps[i].seconds_b);
  }
}

/// The Compare view's tables hold the CLI's figures, row for row, in the CLI's order.
/// The B/A cell of a row whose A and B cells read `a` and `b`: "-" where either shows as 0.000
/// ms (a ratio below the printed resolution is noise), as `swapscope compare` prints it.
void expectRatioAsCli(const QString& a, const QString& b, const QString& ratio) {
  if (a == "0.000" || b == "0.000") {
    EXPECT_EQ(ratio.toStdString(), "-") << a.toStdString() << " " << b.toStdString();
  } else {
    EXPECT_TRUE(ratio.endsWith('x')) << ratio.toStdString();
  }
}

/// How many rows of `model` have a B/A of "-" (column `ratioColumn`).
int dashRatios(QStandardItemModel* model, int ratioColumn) {
  int n = 0;
  for (int r = 0; r < model->rowCount(); ++r)
    n += model->item(r, ratioColumn)->text() == "-" ? 1 : 0;
  return n;
}

void expectTablesAsCli(const CompareView& view, const nlohmann::json& j) {
  QStandardItemModel* curves = view.curveModel();
  ASSERT_EQ(curves->rowCount(), static_cast<int>(j["curves"].size()));
  for (int r = 0; r < curves->rowCount(); ++r) {
    const auto& w = j["curves"][static_cast<std::size_t>(r)];
    EXPECT_EQ(curves->item(r, 0)->text().toStdString(), w["target"].get<std::string>());
    EXPECT_EQ(curves->item(r, 1)->text().toStdString(), w["direction"].get<std::string>());
    EXPECT_EQ(curves->item(r, 3)->data(Qt::UserRole).toDouble(), w["seconds_a"].get<double>());
    EXPECT_EQ(curves->item(r, 4)->data(Qt::UserRole).toDouble(), w["seconds_b"].get<double>());
    expectRatioAsCli(curves->item(r, 3)->text(), curves->item(r, 4)->text(),
                     curves->item(r, 5)->text());
  }
  QStandardItemModel* steps = view.stepModel();
  ASSERT_EQ(steps->rowCount(), static_cast<int>(j["steps"]["largest"].size()));
  for (int r = 0; r < steps->rowCount(); ++r) {
    const auto& s = j["steps"]["largest"][static_cast<std::size_t>(r)];
    EXPECT_EQ(steps->item(r, 0)->data(Qt::UserRole).toInt(), s["step"].get<int>());
    EXPECT_EQ(steps->item(r, 2)->text().toStdString(), s["layer"].get<std::string>());
    EXPECT_EQ(steps->item(r, 3)->data(Qt::UserRole).toDouble(), s["seconds_a"].get<double>());
    EXPECT_EQ(steps->item(r, 4)->data(Qt::UserRole).toDouble(), s["seconds_b"].get<double>());
    expectRatioAsCli(steps->item(r, 3)->text(), steps->item(r, 4)->text(),
                     steps->item(r, 6)->text());
  }
}

/// A window opened with `args` (after the program name) whose comparison, if any, is drawn.
struct Window {
  MainWindow window;
  explicit Window(const QStringList& args) {
    QSignalSpy shown(&window, &MainWindow::planShown);
    window.applyOptions(parseGuiOptions(QStringList{"swapscope-gui"} + args));
    EXPECT_TRUE(shown.wait(kWaitMs));
    const auto expected = static_cast<std::size_t>(1 + args.count("--compare"));
    EXPECT_TRUE(QTest::qWaitFor(
        [&] { return !window.measured()->busy() && window.measured()->runs().size() == expected; },
        kWaitMs));
  }
};

TEST_F(SecondProfile, TheCompareDataBuilderHasTheCliComparesFigures) {
  const store::RunData a = store::RunReader(kFmnist).load();
  const store::RunData b = store::RunReader(path_).load();
  const CompareData d = makeCompareData(a, b);
  ASSERT_TRUE(d.comparison.same_network);
  EXPECT_EQ(d.comparison.step_k, 24);  // the largest k both recorded
  EXPECT_FALSE(d.comparison.steps.empty());
  expectSameComparison(cliCompare(kFmnist, path_), d.comparison);
}

TEST_F(SecondProfile, TheCompareViewsStepTableIsTheClis) {
  Window w({QString::fromStdString(kFmnist), "--compare", QString::fromStdString(path_), "--view",
            "compare"});
  const CompareView& view = *w.window.measured()->compare();
  ASSERT_EQ(view.data().comparison.step_k, 24);
  expectTablesAsCli(view, cliCompare(kFmnist, path_));
  // Biggest differences first.
  QStandardItemModel* steps = view.stepModel();
  for (int r = 1; r < steps->rowCount(); ++r)
    EXPECT_GE(steps->item(r - 1, 5)->data(Qt::UserRole).toDouble(),
              steps->item(r, 5)->data(Qt::UserRole).toDouble());
}

// At the window's default size the per-step table's right-hand columns (B ms, B/A) were cut off
// behind a scroll bar, and so were the curve table's.
TEST_F(SecondProfile, EveryColumnOfTheCompareTablesIsInViewAtTheDefaultWindowSize) {
  Window w({QString::fromStdString(kFmnist), "--compare", QString::fromStdString(path_), "--view",
            "compare"});
  w.window.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w.window));
  const CompareView& view = *w.window.measured()->compare();
  ASSERT_FALSE(view.data().comparison.steps.empty());
  ASSERT_FALSE(view.data().comparison.curves.empty());
  struct Table {
    QTableView* view;
    std::set<int> names;  ///< the columns that may elide
  };
  for (const Table& t : {Table{view.stepTable(), {2}}, Table{view.curveTable(), {0, 6}}}) {
    ASSERT_TRUE(t.view->isVisible());
    QHeaderView* header = t.view->horizontalHeader();
    QTest::qWait(50);  // the header's layout is delayed
    EXPECT_LE(header->length(), t.view->viewport()->width());
    EXPECT_EQ(t.view->horizontalScrollBar()->maximum(), 0);
    const auto* cells = static_cast<const QAbstractItemView*>(t.view);
    for (int c = 0; c < header->count(); ++c) {
      const QString title = t.view->model()->headerData(c, Qt::Horizontal).toString();
      if (t.names.contains(c)) {
        // A name column may elide its names, but keeps room for a few letters of each.
        EXPECT_GE(header->sectionSize(c), header->fontMetrics().horizontalAdvance(title))
            << title.toStdString();
      } else {
        // Every other column shows its header and its cells whole.
        EXPECT_GE(header->sectionSize(c), header->sectionSizeHint(c)) << title.toStdString();
        EXPECT_GE(header->sectionSize(c), cells->sizeHintForColumn(c)) << title.toStdString();
      }
    }
  }
}

TEST(MeasuredViews, TheTwoSampleRunsCompareAsTheCliDoes) {
  Window w({QString::fromStdString(kResnet), "--compare", QString::fromStdString(kFmnist), "--view",
            "compare"});
  const CompareView& view = *w.window.measured()->compare();
  const nlohmann::json j = cliCompare(kResnet, kFmnist);
  ASSERT_FALSE(j["curves"].empty());
  expectTablesAsCli(view, j);
  // The case of the rule: a curve below 0.0005 ms (fmnist-cnn's batch-norm update) had a ratio.
  EXPECT_GE(dashRatios(view.curveModel(), 5), 1);
  EXPECT_FALSE(view.data().comparison.same_network);
  EXPECT_EQ(w.window.tabs()->currentWidget(), w.window.measured()->compare());
  // The pair swapped in the view: B against A, as the CLI given them the other way round.
  w.window.measured()->compare()->findChildren<QComboBox*>().at(0)->setCurrentIndex(1);
  w.window.measured()->compare()->findChildren<QComboBox*>().at(1)->setCurrentIndex(0);
  ASSERT_TRUE(QTest::qWaitFor([&] { return !w.window.measured()->busy(); }, kWaitMs));
  expectTablesAsCli(view, cliCompare(kFmnist, kResnet));
}

// k = 16 in one pass against k = 16 in two: the view said "no k was recorded by both" beside
// identical minibatches; a run without iterations showed rates of 0 and "1.00x slower".
TEST(MeasuredViews, TheCompareViewSpeaksOfKAndPassesAndOfRunsWithoutIterations) {
  QTemporaryDir dir;
  std::string dbs[2];
  for (int s = 0; s < 2; ++s) {
    const std::string passes = std::to_string(s + 1);
    const std::string plan = dir.filePath("k16.json").toStdString();
    dbs[s] = dir.filePath(QString::fromStdString("k16-" + passes + ".swapdb")).toStdString();
    ASSERT_EQ(
        cli::testing::run({"plan", "--db", kFmnist, "--budget", "16MiB", "--policy", "swap-all",
                           "--batch", "16", "--sub-batches", passes, "--out", plan, "--force"})
            .code,
        0);
    const auto r =
        cli::testing::run({"run", "--plan", plan, "--iters", "1", "--warmup", "0", "--db", dbs[s]});
    ASSERT_EQ(r.code, 0) << r.err;
  }
  {
    Window w({QString::fromStdString(dbs[0]), "--compare", QString::fromStdString(dbs[1]), "--view",
              "compare"});
    const CompareView& view = *w.window.measured()->compare();
    EXPECT_TRUE(view.identityText().contains("k = 16 in 2 passes of 8"))
        << view.identityText().toStdString();
    EXPECT_EQ(view.stepTitle().toStdString(),
              "Per-step median times: not compared, no pass size was recorded by both (A: k = "
              "16; B: k = 16 in 2 passes of 8), and a step's time is compared at the samples it "
              "ran on");
  }
  // The second run's rows of its iterations deleted: no fits, so no rates and no ratio.
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open_v2(dbs[1].c_str(), &h, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  for (const char* table : {"iterations", "samples", "transfers", "memory", "batches"})
    EXPECT_EQ(
        sqlite3_exec(h, ("DELETE FROM " + std::string(table)).c_str(), nullptr, nullptr, nullptr),
        SQLITE_OK);
  sqlite3_close(h);
  Window w({QString::fromStdString(dbs[0]), "--compare", QString::fromStdString(dbs[1]), "--view",
            "compare"});
  const CompareView& view = *w.window.measured()->compare();
  const QString text = view.identityText();
  EXPECT_TRUE(text.contains("records no iterations: nothing to compare")) << text.toStdString();
  EXPECT_EQ(text.count("PCIe h2d"), 1) << text.toStdString();  // A's line only
  EXPECT_TRUE(view.stepTitle().contains("B records no iterations")) << text.toStdString();
}

TEST(MeasuredViews, TimelineFollowsKAndIterationOfAnyOpenDatabase) {
  Window w({QString::fromStdString(kResnet), "--compare", QString::fromStdString(kFmnist), "--view",
            "timeline", "--k", "32"});
  TimelineView& t = *w.window.measured()->timeline();
  EXPECT_EQ(t.data().path, kResnet);
  EXPECT_EQ(t.data().k, 32);
  EXPECT_EQ(t.data().iteration, 0);
  t.iterationBox()->setCurrentIndex(4);
  EXPECT_EQ(t.data().iteration, 4);
  EXPECT_EQ(t.data().k, 32);
  // The database compared with: its own k values, the largest first.
  t.databaseBox()->setCurrentIndex(1);
  EXPECT_EQ(t.data().path, kFmnist);
  EXPECT_EQ(t.data().k, 94);
  const store::RunData fmnist = store::RunReader(kFmnist).load();
  std::size_t steps = 0;
  for (const auto& s : fmnist.samples)
    steps += s.k == 94 && s.iteration == 0;
  EXPECT_EQ(t.data().step_rows, steps);
}

TEST(MeasuredViews, OpenInPerfettoWritesWhatTraceWritesAndNeverAnInput) {
  QTemporaryDir dir;
  const QString db = dir.filePath("run.swapdb");
  ASSERT_TRUE(QFile::copy(QString::fromStdString(kFmnist), db));
  Window w({db, "--k", "47"});
  MeasuredViews& m = *w.window.measured();
  m.timeline()->iterationBox()->setCurrentIndex(2);
  const QString path = m.tracePath();
  EXPECT_EQ(path, dir.filePath("run-k47-it2.trace.json"));
  m.writeTrace(path, false);
  const std::string cliOut = dir.filePath("cli.json").toStdString();
  const auto r = cli::testing::run(
      {"trace", "--db", db.toStdString(), "--k", "47", "--iteration", "2", "--out", cliOut});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(readAll(path.toStdString()), readAll(cliOut));
  // An existing file without force, and the database itself even with force, are refused.
  EXPECT_THROW(m.writeTrace(path, false), Error);
  const std::string before = readAll(db.toStdString());
  try {
    m.writeTrace(db, true);
    ADD_FAILURE() << "the run database was replaced";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
  }
  EXPECT_EQ(readAll(db.toStdString()), before);
}

TEST(MeasuredViews, NoOutputOfTheWindowReplacesADatabaseOpenForComparison) {
  QTemporaryDir dir;
  const QString a = dir.filePath("A.swapdb"), b = dir.filePath("B.swapdb"),
                c = dir.filePath("C.swapdb");
  for (const QString& copy : {a, b, c})
    ASSERT_TRUE(QFile::copy(QString::fromStdString(kFmnist), copy));
  const std::string bBytes = readAll(b.toStdString());
  const QString link = dir.filePath("figure.png");
  std::filesystem::create_symlink(b.toStdString(), link.toStdString());
  Window w({a, "--compare", b});
  // File > Add database for comparison... opens C the same way.
  w.window.measured()->addDatabase(c);
  ASSERT_TRUE(QTest::qWaitFor([&] { return w.window.measured()->runs().size() == 3; }, kWaitMs));
  auto* runs = new RunController(&w.window);
  const auto refused = [](const std::function<void()>& write, const QString& input) {
    try {
      write();
      ADD_FAILURE() << "written";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find("is the same file as the run database"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(input.toStdString()), std::string::npos) << e.what();
    }
  };
  for (const QString& db : {b, c}) {
    SCOPED_TRACE(db.toStdString());
    // Export plan and Save figure, whose dialogs pass force, and Open in Perfetto.
    refused([&] { w.window.exportPlan(db, true); }, db);
    refused([&] { w.window.exportPlan(db + "-wal", true); }, db);
    refused([&] { w.window.saveFigure("memory", db + "-journal", true); }, db);
    refused([&] { w.window.measured()->writeTrace(db + "-shm", true); }, db);
    // A profile from the Run menu, after its replace question was answered yes.
    ProfileJob job;
    job.network = std::make_shared<const Network>(buildZooModel("fmnist-cnn"));
    job.db = db.toStdString();
    job.force = true;
    refused([&] { runs->startProfile(job); }, db);
    EXPECT_FALSE(runs->job()->running());
  }
  refused([&] { w.window.saveFigure("memory", link, true); }, b);
  EXPECT_EQ(readAll(b.toStdString()), bBytes);
  EXPECT_EQ(readAll(c.toStdString()), bBytes);
  for (const QString& db : {b, c})
    for (const char* suffix : {"-wal", "-shm", "-journal"})
      EXPECT_FALSE(QFile::exists(db + suffix)) << db.toStdString() << suffix;
}

TEST(MeasuredViews, TheOpenInPerfettoButtonWritesNextToTheDatabaseAndSaysWhere) {
  QTemporaryDir dir;
  const QString db = dir.filePath("run.swapdb");
  ASSERT_TRUE(QFile::copy(QString::fromStdString(kFmnist), db));
  Window w({db});
  MeasuredViews& m = *w.window.measured();
  const QString path = dir.filePath("run-k94-it0.trace.json");
  ASSERT_EQ(m.tracePath(), path);
  ASSERT_FALSE(QFile::exists(path));
  QSignalSpy idle(&m, &MeasuredViews::idle);
  m.timeline()->perfettoButton()->click();  // written on the worker
  ASSERT_TRUE(idle.wait(kWaitMs));
  EXPECT_TRUE(QFile::exists(path));
  EXPECT_TRUE(w.window.statusBar()->currentMessage().contains(path + " written"))
      << w.window.statusBar()->currentMessage().toStdString();
  const auto trace = nlohmann::json::parse(readAll(path.toStdString()));
  EXPECT_EQ(trace["otherData"]["k"].get<int>(), 94);
  // Headless, an existing file is refused: the reason is in the status bar too, and the file
  // is kept.
  m.setHeadless(true);
  const std::string before = readAll(path.toStdString());
  QSignalSpy failed(&m, &MeasuredViews::failed);
  m.timeline()->perfettoButton()->click();
  ASSERT_TRUE(QTest::qWaitFor([&] { return !failed.isEmpty(); }, kWaitMs));
  const QString said = w.window.statusBar()->currentMessage();
  EXPECT_TRUE(said.startsWith("cannot write the trace: ")) << said.toStdString();
  EXPECT_TRUE(said.contains(path)) << said.toStdString();
  EXPECT_EQ(readAll(path.toStdString()), before);
}

TEST(MeasuredViews, OpeningADatabaseBuildsTheTimelineOnce) {
  const auto run = std::make_shared<const store::RunData>(store::RunReader(kFmnist).load());
  const auto batches = static_cast<qsizetype>(recordedBatches(*run).size());
  QWidget parent;
  {
    MeasuredViews m(&parent);
    QSignalSpy rows(m.timeline()->batchBox()->model(), &QAbstractItemModel::rowsInserted);
    m.setPrimary(run);
    EXPECT_EQ(rows.size(), batches);  // the k box filled once: one build
    EXPECT_EQ(m.timeline()->data().k, 94);
  }
  {
    MeasuredViews m(&parent);
    m.setTimelineBatch(47);
    QSignalSpy rows(m.timeline()->batchBox()->model(), &QAbstractItemModel::rowsInserted);
    m.setPrimary(run);
    EXPECT_EQ(rows.size(), batches);
    EXPECT_EQ(m.timeline()->data().k, 47);
  }
}

TEST(MeasuredViews, TheTimelinesLayersAreLinkedToThePlansWhileItShowsTheNetworkPlanned) {
  Window w({QString::fromStdString(kFmnist), "--compare", QString::fromStdString(kResnet)});
  TimelineView& t = *w.window.measured()->timeline();
  ASSERT_EQ(t.runIndex(), 0);  // the planning database: the network planned
  ASSERT_EQ(w.window.selectedLayer(), -1);
  emit t.layerSelected(3);
  EXPECT_EQ(w.window.selectedLayer(), 3);
  // Another network's database: its layers are not the plan's.
  t.select(1, store::largestRecordedK(*w.window.measured()->runs()[1]), 0);
  emit t.layerSelected(2);
  EXPECT_EQ(w.window.selectedLayer(), 3);
}

TEST(MeasuredViews, AnUnreadableCompareDatabaseOrUnknownKIsTheReadersMessage) {
  QTemporaryDir dir;
  const QString bad = dir.filePath("broken.swapdb");
  {
    QFile f(bad);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write("not a database");
  }
  std::string readerMessage;
  try {
    store::RunReader(bad.toStdString());
  } catch (const Error& e) {
    readerMessage = e.what();
  }
  ASSERT_FALSE(readerMessage.empty());
  const QString shot = dir.filePath("never.png");  // headless: failures are signalled
  {
    MainWindow window;
    QSignalSpy failed(&window, &MainWindow::failed);
    window.applyOptions(parseGuiOptions({"swapscope-gui", QString::fromStdString(kFmnist),
                                         "--compare", bad, "--screenshot", shot}));
    ASSERT_TRUE(failed.wait(kWaitMs));
    EXPECT_EQ(failed.at(0).at(0).toString().toStdString(), readerMessage);
  }
  {
    MainWindow window;
    QSignalSpy failed(&window, &MainWindow::failed);
    window.applyOptions(parseGuiOptions(
        {"swapscope-gui", QString::fromStdString(kFmnist), "--k", "13", "--screenshot", shot}));
    ASSERT_TRUE(failed.wait(kWaitMs));
    EXPECT_NE(failed.at(0).at(0).toString().indexOf("recorded k: 12, 24, 47, 63, 94"), -1)
        << failed.at(0).at(0).toString().toStdString();
  }
  EXPECT_FALSE(QFile::exists(shot));
  // --compare without a first database is refused by the command line.
  EXPECT_THROW(parseGuiOptions({"swapscope-gui", "--compare", bad}), Error);
}

}  // namespace
}  // namespace swapscope::gui
