// SPDX-License-Identifier: MIT
/// The desktop workbench, headless: the run document and the plan service off the GUI thread,
/// and the window against the CLI (`swapscope plan`) for the same inputs.
#include <qcustomplot.h>
#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QMessageBox>
#include <QSignalSpy>
#include <QSlider>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/run_cli.h"
#include "common/bytes.h"
#include "common/error.h"
#include "gui/main_window.h"
#include "gui/plan_service.h"
#include "gui/run_document.h"
#include "gui/view_registry.h"
#include "sample_runs.h"
#include "store/run_db.h"
#include "views/layers_view.h"
#include "views/memory_chart_view.h"
#include "views/model_view.h"
#include "views/replot.h"
#include "views/streams_view.h"
#include "views/summary_view.h"
#include "views/tradeoff_view.h"

namespace swapscope::gui {
namespace {

const std::string kSample = swapscope::testing::resnet56Run();
constexpr int kWaitMs = 60000;

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::json cliPlanJson(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"plan", "--db", kSample};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back("--json");
  const cli::testing::Result r = cli::testing::run(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

/// A window with the sample run open and its first plan drawn.
struct OpenWindow {
  MainWindow window;
  explicit OpenWindow(const std::vector<QString>& extra = {}) {
    QStringList args = {"swapscope-gui", QString::fromStdString(kSample)};
    for (const QString& a : extra)
      args << a;
    QSignalSpy shown(&window, &MainWindow::planShown);
    window.applyOptions(parseGuiOptions(args));
    EXPECT_TRUE(shown.wait(kWaitMs));
  }
};

TEST(MainWindow, AZooModelGivenWithoutADatabaseCanBeChangedInTheWindow) {
  // --model without a run database: the network is the zoo's, and its fields are the ones a zoo
  // model uses (the source's signal is blocked while the options are applied).
  MainWindow window;
  QSignalSpy shown(&window, &MainWindow::planShown);
  window.applyOptions(parseGuiOptions({"swapscope-gui", "--model", "resnet20", "--batch", "8"}));
  auto* zoo = window.findChild<QComboBox*>("zooModel");
  auto* input = window.findChild<QLineEdit*>("input");
  auto* classes = window.findChild<QLineEdit*>("classes");
  ASSERT_TRUE(zoo && input && classes);
  EXPECT_EQ(zoo->currentText(), "resnet20");
  EXPECT_TRUE(zoo->isEnabled());
  EXPECT_TRUE(input->isEnabled());
  EXPECT_TRUE(classes->isEnabled());
}

TEST(RunDocument, LoadsOnAWorkerAndReportsTheReadersMessage) {
  RunDocument doc;
  QSignalSpy loaded(&doc, &RunDocument::loaded);
  QSignalSpy failed(&doc, &RunDocument::loadFailed);
  doc.open(QString::fromStdString(kSample));
  ASSERT_TRUE(loaded.wait(kWaitMs));
  ASSERT_TRUE(doc.current());
  EXPECT_EQ(doc.current()->network->name(), "resnet56");
  EXPECT_EQ(doc.current()->path, kSample);
  EXPECT_EQ(failed.count(), 0);

  QTemporaryDir dir;
  const std::string bad = dir.filePath("bad.swapdb").toStdString();
  std::ofstream(bad) << "not a database";
  std::string readerMessage;
  try {
    store::RunReader reader(bad);
  } catch (const Error& e) {
    readerMessage = e.what();
  }
  ASSERT_FALSE(readerMessage.empty());
  doc.open(QString::fromStdString(bad));
  ASSERT_TRUE(failed.wait(kWaitMs));
  EXPECT_EQ(failed.at(0).at(0).toString().toStdString(), readerMessage);
}

/// Opens the resnet56 sample in `doc` and gives `service` its network, waiting for both.
void planTheSample(RunDocument& doc, PlanService& service) {
  QSignalSpy loaded(&doc, &RunDocument::loaded);
  doc.open(QString::fromStdString(kSample));
  ASSERT_TRUE(loaded.wait(kWaitMs));
  QSignalSpy contextReady(&service, &PlanService::contextReady);
  service.setNetwork(doc.current(), nullptr);
  ASSERT_TRUE(contextReady.wait(kWaitMs));
}

TEST(PlanService, KeepsOnlyTheNewestRequest) {
  RunDocument doc;
  QSignalSpy loaded(&doc, &RunDocument::loaded);
  doc.open(QString::fromStdString(kSample));
  ASSERT_TRUE(loaded.wait(kWaitMs));
  PlanService service;
  QSignalSpy ready(&service, &PlanService::planReady);
  service.setNetwork(doc.current(), nullptr);
  perf::PlanRequest request;
  quint64 last = 0;
  for (int i = 0; i < 10; ++i) {
    request.budget = (std::int64_t{100} + 10 * i) << 20;
    last = service.requestPlan(request);
  }
  ASSERT_TRUE(ready.wait(kWaitMs));
  while (service.planning())
    QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
  QCoreApplication::processEvents();
  ASSERT_EQ(ready.count(), 1);  // nine stale requests coalesced or dropped
  const auto outcome = ready.at(0).at(0).value<PlanOutcome>();
  EXPECT_EQ(outcome.seq, last);
  EXPECT_EQ(outcome.request.budget, request.budget);
}

TEST(PlanService, SweepSendsOnePointPerBudget) {
  RunDocument doc;
  PlanService service;
  ASSERT_NO_FATAL_FAILURE(planTheSample(doc, service));
  QSignalSpy points(&service, &PlanService::sweepPoint);
  QSignalSpy finished(&service, &PlanService::sweepFinished);
  perf::PlanRequest base;
  base.policy = Policy::SwapAll;
  service.requestSweep(base, std::int64_t{1} << 30, 8);
  ASSERT_TRUE(finished.wait(kWaitMs));
  ASSERT_EQ(points.count(), 8);
  // The budgets are planned on every core at once: the points come in no set order, each once.
  std::vector<std::optional<swapscope::SweepPoint>> byIndex(8);
  for (const QList<QVariant>& signal : points) {
    const SweepPoint p = signal.at(0).value<SweepPoint>();
    ASSERT_GE(p.index, 0);
    ASSERT_LT(p.index, 8);
    EXPECT_EQ(p.count, 8);
    ASSERT_FALSE(byIndex[static_cast<std::size_t>(p.index)]) << "index " << p.index << " twice";
    byIndex[static_cast<std::size_t>(p.index)] = p.point;
  }
  for (std::size_t i = 1; i < byIndex.size(); ++i)
    EXPECT_GT(byIndex[i]->budget, byIndex[i - 1]->budget);
  const auto first = *byIndex.front();
  const auto last = *byIndex.back();
  EXPECT_EQ(first.budget, service.context()->planner->minBudget());
  EXPECT_TRUE(first.feasible);  // swap-all at k = 1 fits its own peak
  EXPECT_EQ(last.budget, std::int64_t{1} << 30);
  EXPECT_GT(last.k, first.k);
}

// A newer sweep replaces one in progress: no point of the older one arrives after it was
// replaced, and only the newer one finishes, with every one of its points.
TEST(PlanService, ANewerSweepReplacesOneInProgress) {
  RunDocument doc;
  PlanService service;
  ASSERT_NO_FATAL_FAILURE(planTheSample(doc, service));
  QSignalSpy points(&service, &PlanService::sweepPoint);
  QSignalSpy finished(&service, &PlanService::sweepFinished);
  perf::PlanRequest base;
  const int first = service.requestSweep(base, std::int64_t{1} << 30, 16);
  const int second = service.requestSweep(base, std::int64_t{1} << 30, 8);
  ASSERT_NE(first, second);
  ASSERT_TRUE(finished.wait(kWaitMs));
  QTest::qWait(200);  // anything the first sweep still sent would have arrived by now
  ASSERT_EQ(finished.count(), 1);
  EXPECT_EQ(finished.at(0).at(0).toInt(), second);
  std::vector<int> seen(8, 0);
  for (const QList<QVariant>& signal : points) {
    const SweepPoint p = signal.at(0).value<SweepPoint>();
    ASSERT_EQ(p.sweep, second) << "a point of the replaced sweep";
    ASSERT_GE(p.index, 0);
    ASSERT_LT(p.index, 8);
    ++seen[static_cast<std::size_t>(p.index)];
  }
  EXPECT_EQ(seen, std::vector<int>(8, 1));
}

TEST(MainWindow, SummaryAfterASliderMoveEqualsTheCli) {
  OpenWindow w;
  QSignalSpy shown(&w.window, &MainWindow::planShown);
  w.window.budgetSlider()->setValue(MainWindow::kSliderSteps / 3);
  ASSERT_TRUE(shown.wait(kWaitMs));
  const std::int64_t budget = w.window.budget();
  EXPECT_EQ(budget, w.window.budgetAt(MainWindow::kSliderSteps / 3));
  const nlohmann::json cli = cliPlanJson({"--budget", std::to_string(budget)});
  const SummaryData& s = w.window.view<SummaryView>()->data();
  ASSERT_TRUE(s.trainable);
  EXPECT_EQ(s.k, cli["k"].get<std::int64_t>());
  EXPECT_EQ(s.t_iter_s, cli["predictions"]["t_iter_s"].get<double>());
  EXPECT_EQ(s.peak_bytes, cli["predictions"]["peak_bytes"].get<std::int64_t>());
  EXPECT_EQ(s.budget, budget);
}

TEST(MainWindow, ExportedPlanIsTheClisFile) {
  OpenWindow w({"--budget", "200MiB", "--policy", "swap-all", "--batch", "48"});
  QTemporaryDir dir;
  const std::string mine = dir.filePath("gui.json").toStdString();
  const std::string theirs = dir.filePath("cli.json").toStdString();
  w.window.exportPlan(QString::fromStdString(mine), false);
  const cli::testing::Result r =
      cli::testing::run({"plan", "--db", kSample, "--budget", "200MiB", "--policy", "swap-all",
                         "--mode", "argmin", "--batch", "48", "--out", theirs});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(readAll(mine), readAll(theirs));
  // The CLI's file rules: an existing file only with force.
  EXPECT_THROW(w.window.exportPlan(QString::fromStdString(mine), false), Error);
  EXPECT_NO_THROW(w.window.exportPlan(QString::fromStdString(mine), true));
  // Never the run database itself, even with force.
  EXPECT_THROW(w.window.exportPlan(QString::fromStdString(kSample), true), Error);
  // Nor its SQLite companions, as the CLI refuses them.
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    EXPECT_THROW(w.window.exportPlan(QString::fromStdString(kSample + suffix), true), Error)
        << suffix;
    EXPECT_FALSE(QFile::exists(QString::fromStdString(kSample + suffix))) << suffix;
  }
}

TEST(MainWindow, AnOnnxModelFromTheCommandLinePlansAsTheClisOnnxOption) {
  const std::string onnx = std::string(SWAPSCOPE_TEST_DATA_DIR) + "/onnx/mobilenet_v2.onnx";
  OpenWindow w({"--onnx", QString::fromStdString(onnx), "--input", "3x64x64", "--budget", "200MiB",
                "--policy", "swap-all", "--batch", "4"});
  ASSERT_TRUE(w.window.shownPlan());
  QTemporaryDir dir;
  const std::string mine = dir.filePath("gui.json").toStdString();
  const std::string theirs = dir.filePath("cli.json").toStdString();
  w.window.exportPlan(QString::fromStdString(mine), false);
  const cli::testing::Result r = cli::testing::run(
      {"plan", "--db", kSample, "--onnx", onnx, "--input", "3x64x64", "--budget", "200MiB",
       "--policy", "swap-all", "--mode", "argmin", "--batch", "4", "--out", theirs});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(readAll(mine), readAll(theirs));
  // The ONNX file is an input: never replaced, even with force.
  EXPECT_THROW(w.window.exportPlan(QString::fromStdString(onnx), true), Error);
}

TEST(MainWindow, ShadedSpansAreThePlansSwapSet) {
  OpenWindow w({"--budget", "64MiB", "--policy", "accudnn"});
  const PlanOutcome* plan = w.window.shownPlan();
  ASSERT_TRUE(plan && plan->planFile());
  ASSERT_FALSE(plan->planFile()->swap_set.empty());
  EXPECT_EQ(w.window.view<MemoryChartView>()->spanCount(),
            static_cast<int>(plan->planFile()->swap_set.size()));
  // And a replot draws them all, the selected layer's apart.
  const std::string fm = plan->planFile()->swap_set.front().fm;
  w.window.selectLayer(w.window.findLayer(QString::fromStdString(fm)));
  w.window.refreshAllViews();
  w.window.view<MemoryChartView>()->plot()->replot();
  EXPECT_EQ(w.window.view<MemoryChartView>()->drawnSpans(),
            static_cast<int>(plan->planFile()->swap_set.size()));
  EXPECT_EQ(w.window.view<MemoryChartView>()->drawnSelectedSpans(), 1);
}

TEST(MainWindow, StallMarkersAndSpansAreThePlans) {
  // A budget where the plan stalls (its file lists the stalled steps).
  OpenWindow w({"--budget", "40MiB", "--policy", "swap-all", "--batch", "64"});
  const PlanOutcome* plan = w.window.shownPlan();
  ASSERT_TRUE(plan && plan->planFile());
  ASSERT_FALSE(plan->planFile()->predictions.stalls.empty());
  w.window.refreshAllViews();
  w.window.view<StreamsView>()->plot()->replot();  // the counts are of what a replot drew
  EXPECT_EQ(w.window.view<StreamsView>()->stallMarkerCount(),
            static_cast<int>(plan->planFile()->predictions.stalls.size()));
  EXPECT_EQ(w.window.view<MemoryChartView>()->spanCount(),
            static_cast<int>(plan->planFile()->swap_set.size()));
  EXPECT_EQ(w.window.view<LayersView>()->model()->rowCount(), plan->context->network->size());
}

TEST(MainWindow, SweepAndKCurveFillTheTradeoffView) {
  OpenWindow w({"--budget", "96MiB"});
  QSignalSpy settled(&w.window, &MainWindow::settled);
  ASSERT_TRUE(settled.count() > 0 || settled.wait(kWaitMs));
  const TradeoffView* t = w.window.view<TradeoffView>();
  EXPECT_EQ(t->sweep().points.size(), 64u);
  EXPECT_EQ(t->batchCurve().chosen_k, w.window.view<SummaryView>()->data().k);
  EXPECT_FALSE(t->batchCurve().points.empty());
  // A budget change keeps the sweep (only the budget moved) and brings a new k curve.
  QSignalSpy again(&w.window, &MainWindow::settled);
  w.window.setBudget(std::int64_t{128} << 20);
  ASSERT_TRUE(again.wait(kWaitMs));
  EXPECT_EQ(t->sweep().points.size(), 64u);
  EXPECT_EQ(t->batchCurve().budget, std::int64_t{128} << 20);
}

TEST(MainWindow, SelectingAStepHighlightsTheLayerInTheTable) {
  OpenWindow w({"--budget", "96MiB"});
  w.window.refreshAllViews();
  const int layer = w.window.findLayer("layer2.0.conv1");
  emit w.window.view<MemoryChartView>()->layerSelected(layer);  // as a click on a step does
  EXPECT_EQ(w.window.selectedLayer(), layer);
  EXPECT_EQ(w.window.view<MemoryChartView>()->selectedLayer(), layer);
  // The table's selected row holds the layer.
  const QModelIndexList rows =
      w.window.view<LayersView>()->table()->selectionModel()->selectedRows();
  ASSERT_EQ(rows.size(), 1);
  EXPECT_EQ(rows.front().data(LayersTableModel::LayerRole).toInt(), layer);
}

TEST(MainWindow, AHiddenViewIsDrawnWhenShownNotOnEveryPlan) {
  OpenWindow w({"--budget", "64MiB", "--view", "summary"});
  w.window.show();
  QCustomPlot* memory = w.window.view<MemoryChartView>()->plot();
  int replots = 0;
  QObject::connect(memory, &QCustomPlot::afterReplot, [&replots] { ++replots; });
  QSignalSpy shown(&w.window, &MainWindow::planShown);
  w.window.budgetSlider()->setValue(w.window.budgetSlider()->value() + 40);
  ASSERT_TRUE(shown.wait(kWaitMs));
  QCoreApplication::processEvents();
  // The memory view took the new plan's data but drew nothing while hidden.
  EXPECT_EQ(replots, 0);
  EXPECT_TRUE(replotDeferred(memory));
  EXPECT_EQ(w.window.view<MemoryChartView>()->spanCount(),
            static_cast<int>(w.window.shownPlan()->planFile()->swap_set.size()));
  // Shown: drawn once, with nothing left deferred.
  w.window.tabs()->setCurrentWidget(w.window.view<MemoryChartView>());
  for (int i = 0; i < 100 && replots == 0; ++i)
    QTest::qWait(10);
  EXPECT_GE(replots, 1);
  EXPECT_FALSE(replotDeferred(memory));
}

TEST(MainWindow, EveryViewSavesAsPngPdfAndSvg) {
  // Saved from a hidden tab too: the figure is drawn for the file, not taken from the screen.
  OpenWindow w({"--budget", "48MiB", "--view", "summary"});
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  for (const QString& view : viewNames()) {
    for (const QString& format : {QStringLiteral("png"), QStringLiteral("pdf")}) {
      const QString path = dir.filePath(view + "." + format);
      w.window.saveFigure(view, path, false);
      const std::string bytes = readAll(path.toStdString());
      SCOPED_TRACE(path.toStdString());
      ASSERT_GT(bytes.size(), 1000u);
      EXPECT_EQ(bytes.substr(0, 4), format == "png" ? "\x89PNG" : "%PDF");
    }
    const QString svg = dir.filePath(view + ".svg");
#ifdef SWAPSCOPE_HAVE_QT_SVG
    w.window.saveFigure(view, svg, false);
    const std::string bytes = readAll(svg.toStdString());
    EXPECT_NE(bytes.find("<svg"), std::string::npos) << svg.toStdString();
#else
    try {
      w.window.saveFigure(view, svg, false);
      ADD_FAILURE() << "a build without Qt SVG wrote " << svg.toStdString();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("Qt SVG"), std::string::npos) << e.what();
    }
#endif
  }
  // An unknown format is refused, naming it.
  try {
    w.window.saveFigure("memory", dir.filePath("memory.bmp"), false);
    ADD_FAILURE() << "a .bmp figure was written";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown image format '.bmp'"), std::string::npos)
        << e.what();
  }
}

/// parseGuiOptions' refusal of `args` (after the program name), or "accepted".
std::string guiRefusal(const QStringList& args) {
  try {
    (void)parseGuiOptions(QStringList{"swapscope-gui", QString::fromStdString(kSample)} + args);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    return e.what();
  }
  return "accepted";
}

// The app clamped --batch 2000000 to 1,048,576 without a word while the CLI planned it, and said
// "expected a positive integer" of 99999999999: one limit and one parser for both now.
TEST(GuiOptions, TheBatchLimitAndItsReasonsAreTheClis) {
  EXPECT_EQ(guiRefusal({"--batch", "99999999999"}),
            "--batch 99999999999: above the limit of 16777216 samples per minibatch (the largest "
            "k whose byte and FLOP counts stay exact in 64 bits for every zoo network)");
  EXPECT_EQ(guiRefusal({"--batch", "0"}), "--batch: expected a positive integer, got '0'");
  EXPECT_EQ(guiRefusal({"--batch", "16", "--mode", "paper"}),
            "give --batch K or --mode paper, not both: --mode paper searches the largest "
            "stall-free k (Algorithm 2), --batch 16 fixes it");
  // The Timeline's recorded k is a minibatch too: the same limit, as `swapscope trace --k`.
  EXPECT_EQ(guiRefusal({"--k", "99999999999999999999"}),
            "--k 99999999999999999999: above the limit of 16777216 samples per minibatch (the "
            "largest k whose byte and FLOP counts stay exact in 64 bits for every zoo network)");
  OpenWindow w({"--budget", "200MiB", "--batch", "2000000"});
  ASSERT_TRUE(w.window.currentRequest().batch);
  EXPECT_EQ(*w.window.currentRequest().batch, 2000000);
}

// --budget-gib G is --budget GGiB: it read "1e3" as 1000 GiB (which --budget refuses), capped G
// at 1e6 where --budget is not capped, and said only "give --budget or --budget-gib" for both.
TEST(GuiOptions, BudgetGibIsTheBudgetInGibWithTheClisReasons) {
  EXPECT_EQ(
      *parseGuiOptions({"swapscope-gui", QString::fromStdString(kSample), "--budget-gib", "1.5"})
           .budget,
      parseByteSize("1.5GiB", "--budget"));
  EXPECT_EQ(*parseGuiOptions(
                 {"swapscope-gui", QString::fromStdString(kSample), "--budget-gib", "2000000"})
                 .budget,
            std::int64_t{2000000} << 30);
  EXPECT_EQ(guiRefusal({"--budget-gib", "1e3"}),
            "--budget-gib: '1e3' is not a number of GiB: write decimal digits with at most one "
            "point, as --budget writes its number (no exponent, sign, unit or space), e.g. "
            "--budget-gib 1000 or --budget 1000GiB");
  EXPECT_EQ(guiRefusal({"--budget", "1GiB", "--budget-gib", "2"}),
            "give --budget or --budget-gib, not both: --budget '1GiB' and --budget-gib '2' each "
            "set the budget");
}

// A repeated option took its last value without a word (`--budget 1GiB --budget 2GiB` planned
// 2 GiB); the CLI refuses it, and so does the app now. --compare alone is repeatable.
TEST(GuiOptions, AnOptionGivenTwiceIsRefusedAsTheCliRefusesIt) {
  EXPECT_EQ(guiRefusal({"--budget", "1GiB", "--budget", "2GiB"}),
            "option '--budget' is given twice");
  EXPECT_EQ(guiRefusal({"--policy", "swap-all", "--policy", "keep-all"}),
            "option '--policy' is given twice");
  EXPECT_EQ(guiRefusal({"--export-plan", "a.json", "--export-plan", "b.json"}),
            "option '--export-plan' is given twice");
  EXPECT_EQ(guiRefusal({"--compare", QString::fromStdString(kSample), "--compare",
                        QString::fromStdString(kSample)}),
            "accepted");
}

// The app's files are named: "-" is standard output for --export-plan alone (the plan file's
// text, as `swapscope plan --out -` prints it), and refused for every other file it reads or
// writes, naming the option and why, where it used to be read or written as a file named "-".
TEST(GuiOptions, DashIsStandardOutputForTheExportedPlanAndRefusedForEveryOtherFile) {
  EXPECT_EQ(guiRefusal({"--export-plan", "-"}), "accepted");
  EXPECT_EQ(
      parseGuiOptions({"swapscope-gui", QString::fromStdString(kSample), "--export-plan", "-"})
          .export_plan.toStdString(),
      "-");
  EXPECT_EQ(guiRefusal({"--screenshot", "-"}),
            "--screenshot -: - would be standard output, but a screenshot is an image whose "
            "format its file name's extension chooses; name a file (./- names a file called "
            "'-')");
  const std::string database =
      " -: standard input is not supported for a run database (SQLite reads it in place, page by "
      "page, not as a stream); name a file (./- names a file called '-')";
  EXPECT_EQ(guiRefusal({"--compare", "-"}), "--compare" + database);
  try {
    (void)parseGuiOptions({"swapscope-gui", "-"});
    ADD_FAILURE() << "a run database named - was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_EQ(std::string(e.what()), "DB.swapdb" + database);
  }
  EXPECT_EQ(guiRefusal({"--net", "-"}),
            "--net -: standard input is not supported for a network file (the app reads it again "
            "as the network's source changes); name a file (./- names a file called '-')");
  EXPECT_EQ(guiRefusal({"--onnx", "-"}),
            "--onnx -: standard input is not supported for an ONNX model (it may keep its weights "
            "in external data files named relative to its own folder); name a file (./- names a "
            "file called '-')");
  // ./- names a file called "-".
  EXPECT_EQ(guiRefusal({"--screenshot", "./-.png", "--export-plan", "./-"}), "accepted");
}

TEST(MainWindow, UntrainableBudgetIsStated) {
  OpenWindow w({"--budget", "1MiB"});
  const SummaryData& s = w.window.view<SummaryView>()->data();
  EXPECT_FALSE(s.trainable);
  ASSERT_FALSE(s.warnings.empty());
  EXPECT_EQ(s.warnings.front().rfind("untrainable", 0), 0u) << s.warnings.front();
  EXPECT_EQ(w.window.view<MemoryChartView>()->spanCount(), 0);
  EXPECT_THROW(w.window.exportPlan("unused.json", false), Error);
}

/// The Memory view's note, as drawn: every line within the axis rect, the lines together the
/// whole reason. Returns the number of lines.
int expectWholeNote(MemoryChartView& view) {
  view.plot()->replot();  // lays the chart out at the window's size
  const QString note = view.noteText();
  EXPECT_FALSE(note.isEmpty());
  EXPECT_EQ(QString(note).replace('\n', ' ').toStdString(), view.data().untrainable);
  QCPItemText* item = nullptr;
  for (int i = 0; i < view.plot()->itemCount(); ++i) {
    auto* text = qobject_cast<QCPItemText*>(view.plot()->item(i));
    if (text && text->text() == note) item = text;
  }
  if (!item) {
    ADD_FAILURE() << "no item draws the note";
    return 0;
  }
  const QFontMetrics metrics(item->font());
  const QStringList lines = note.split('\n');
  for (const QString& line : lines)
    EXPECT_LE(metrics.horizontalAdvance(line), view.plot()->axisRect()->width())
        << line.toStdString();
  return static_cast<int>(lines.size());
}

TEST(MainWindow, TheUntrainableNoteIsWholeAtAnyBudgetAndWidth) {
  // --budget 0 and 1 are untrainable budgets like any other: the reason, swap-all's minimum
  // included, is written across the chart in lines that fit it, at any width.
  for (const char* budget : {"0", "1"}) {
    SCOPED_TRACE(budget);
    OpenWindow w({"--budget", budget, "--view", "memory"});
    EXPECT_FALSE(w.window.shownPlan()->result->trainable);
    EXPECT_NE(w.window.view<MemoryChartView>()->data().untrainable.find(
                  "no policy fits below swap-all's peak at k = 1"),
              std::string::npos);
    // The Summary says it once.
    ASSERT_FALSE(w.window.view<SummaryView>()->data().warnings.empty());
    EXPECT_EQ(w.window.view<SummaryView>()->data().warnings.front(),
              w.window.view<MemoryChartView>()->data().untrainable);
    w.window.show();
    w.window.resize(800, 600);
    EXPECT_GE(expectWholeNote(*w.window.view<MemoryChartView>()), 2);
    w.window.resize(1600, 900);
    expectWholeNote(*w.window.view<MemoryChartView>());
  }
  // A budget typed below the slider's range in the window, after a trainable one.
  OpenWindow w({"--budget", "64MiB", "--view", "memory"});
  w.window.show();
  w.window.resize(1000, 700);
  EXPECT_TRUE(w.window.view<MemoryChartView>()->noteText().isEmpty());
  QSignalSpy shown(&w.window, &MainWindow::planShown);
  w.window.setBudget(1);
  ASSERT_TRUE(shown.wait(kWaitMs));
  expectWholeNote(*w.window.view<MemoryChartView>());
}

TEST(MainWindow, SelectionReachesTheViews) {
  OpenWindow w({"--budget", "256MiB", "--select", "layer3.0.conv1"});
  const int layer = w.window.selectedLayer();
  ASSERT_GE(layer, 0);
  EXPECT_EQ(w.window.view<MemoryChartView>()->selectedLayer(), layer);
  EXPECT_THROW(w.window.findLayer("no-such-layer"), Error);
}

// A plan's run opened to plan from: the Summary and the dock say what `swapscope plan` says of
// it (its fits rest on the one minibatch it ran), and the dock no longer calls it a profile.
TEST(MainWindow, ARunDatabaseIsWarnedOfAsTheCliDoes) {
  QTemporaryDir dir;
  const std::string plan = dir.filePath("plan.json").toStdString();
  const std::string db = dir.filePath("run.swapdb").toStdString();
  const auto made = cli::testing::writeFmnistPlan(swapscope::testing::sampleRunsDir(), plan);
  ASSERT_EQ(made.code, 0) << made.err;
  const auto ran =
      cli::testing::run({"run", "--plan", plan, "--iters", "1", "--warmup", "0", "--db", db});
  ASSERT_EQ(ran.code, 0) << ran.err;
  // The CLI's line: "  warning           DB: it is a 'run' database, not a profile: ...".
  const auto cli = cli::testing::run({"plan", "--db", db, "--budget", "16MiB"});
  ASSERT_EQ(cli.code, 0) << cli.err;
  const std::string tag = "  warning           ";
  std::string warning;
  std::istringstream lines(cli.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(tag + db + ": it is a 'run' database, not a profile", 0) == 0)
      warning = line.substr(tag.size());
  }
  ASSERT_FALSE(warning.empty()) << cli.out;
  MainWindow window;
  QSignalSpy shown(&window, &MainWindow::planShown);
  window.applyOptions(parseGuiOptions(
      {"swapscope-gui", QString::fromStdString(db), "--budget", "16MiB", "--view", "summary"}));
  ASSERT_TRUE(shown.wait(kWaitMs));
  const std::vector<std::string>& said = window.view<SummaryView>()->data().warnings;
  EXPECT_NE(std::find(said.begin(), said.end(), warning), said.end());
  const std::string dock = window.databaseText();
  EXPECT_NE(dock.find("warning: " + warning.substr(db.size() + 2)), std::string::npos) << dock;
  EXPECT_EQ(dock.find("profiled on"), std::string::npos) << dock;
  // A profile is a profile.
  window.openDatabase(QString::fromStdString(kSample));
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return window.databaseText().find("profiled on") != std::string::npos; }, kWaitMs));
  EXPECT_EQ(window.databaseText().find("warning"), std::string::npos);
}

TEST(MainWindow, BadDatabaseShowsADialogAndTheWindowStaysUsable) {
  MainWindow window;
  window.show();
  QTemporaryDir dir;
  const QString bad = dir.filePath("broken.swapdb");
  QFile f(bad);
  ASSERT_TRUE(f.open(QIODevice::WriteOnly));
  f.write("SQLite format 3");
  f.close();
  QString dialogText;
  QTimer poll;
  QObject::connect(&poll, &QTimer::timeout, [&] {
    for (QMessageBox* box : window.findChildren<QMessageBox*>()) {
      if (!box->isVisible()) continue;
      dialogText = box->text();
      box->close();
    }
  });
  poll.start(20);
  window.openDatabase(bad);
  for (int i = 0; i < kWaitMs / 20 && dialogText.isEmpty(); ++i)
    QTest::qWait(20);
  EXPECT_TRUE(dialogText.contains("broken.swapdb")) << dialogText.toStdString();
  // Still usable: the sample opens and plans.
  QSignalSpy shown(&window, &MainWindow::planShown);
  window.openDatabase(QString::fromStdString(kSample));
  EXPECT_TRUE(shown.wait(kWaitMs));
}

}  // namespace
}  // namespace swapscope::gui
