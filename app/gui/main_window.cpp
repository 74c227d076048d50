// SPDX-License-Identifier: MIT
#include "gui/main_window.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <algorithm>
#include <utility>

#include "common/error.h"
#include "gui/measured_views.h"
#include "gui/plan_service.h"
#include "gui/run_document.h"
#include "gui/view_registry.h"
#include "store/plan_file.h"
#include "views/memory_chart_data.h"
#include "views/memory_chart_view.h"
#include "views/model_view.h"
#include "views/streams_view.h"
#include "views/summary_view.h"
#include "views/timeline_view.h"
#include "views/tradeoff_view.h"

namespace swapscope::gui {
namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      m_doc(new RunDocument(this)),
      m_plans(new PlanService(this)),
      m_tabs(new QTabWidget),
      m_stale(viewTable().size(), false) {
  setWindowTitle("Swapscope");
  for (const ViewRow& row : viewTable()) {
    PlanView* view = row.make ? row.make() : nullptr;
    if (view) view->setObjectName(row.name);
    m_planViews.push_back(view);
  }
  buildControls();
  addViewTabs();
  if (!m_measured) m_measured = new MeasuredViews(this, m_inputs);
  connect(m_measured, &MeasuredViews::failed, this, &MainWindow::showError);
  connect(m_measured, &MeasuredViews::status, this,
          [this](const QString& m) { statusBar()->showMessage(m); });
  connect(m_measured, &MeasuredViews::idle, this, &MainWindow::checkSettled);
  QMenu* fileMenu = menuBar()->addMenu("&File");
  fileMenu->addAction("&Open run database...", this, &MainWindow::askOpenDatabase);
  fileMenu->addAction("Open &ONNX model...", this, &MainWindow::askOpenOnnx);
  fileMenu->addAction("&Add database for comparison...", this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, "Add database for comparison", {},
                                                      "Run databases (*.swapdb);;All files (*)");
    if (!path.isEmpty()) m_measured->addDatabase(path);
  });
  view<SummaryView>()->setMessage(
      "Open a run database (Open run database...) to plan; without one the "
      "Memory view shows the analyzer's curves of the network chosen.");
  // The views of a plan say the same until there is one, rather than draw empty axes.
  const std::string planFirst =
      "open a run database (File > Open run database...) to plan: these views show the plan";
  StreamsData noPlan;
  noPlan.reason = planFirst;
  view<StreamsView>()->setData(noPlan);
  BatchCurve noCurve;
  noCurve.reason = planFirst;
  view<TradeoffView>()->setBatchCurve(noCurve);
  setCentralWidget(m_tabs);
  resize(1280, 760);

  connect(m_doc, &RunDocument::loaded, this, [this] { onLoaded(); });
  connect(m_doc, &RunDocument::loadFailed, this, [this](const QString& m) {
    m_dbLabel->setText(m_doc->current() ? qs(m_doc->current()->path) : "no run database");
    showError("Cannot open the run database", m);
  });
  connect(m_plans, &PlanService::contextReady, this, &MainWindow::onContextReady);
  connect(m_plans, &PlanService::contextFailed, this,
          [this](const QString& m) { showError("Cannot plan this network", m); });
  connect(m_plans, &PlanService::planReady, this, &MainWindow::onPlanReady);
  connect(m_plans, &PlanService::batchCurveReady, this, &MainWindow::onBatchCurve);
  connect(m_plans, &PlanService::sweepPoint, this,
          [this](const SweepPoint& p) { view<TradeoffView>()->addPoint(p.point); });
  connect(m_plans, &PlanService::sweepFinished, this, [this] {
    m_sweepDone = true;
    checkSettled();
  });
  // Linked selection: a layer picked in one view is highlighted in all.
  for (PlanView* v : m_planViews)
    if (v) connect(v, &PlanView::layerSelected, this, &MainWindow::selectLayer);
  // The Timeline's layers are the plan's while it shows a database of the network planned.
  connect(m_measured->timeline(), &TimelineView::layerSelected, this, [this](int layer) {
    if (timelineShowsPlannedNetwork()) selectLayer(layer);
  });
  TradeoffView* tradeoff = view<TradeoffView>();
  connect(tradeoff, &TradeoffView::budgetChosen, this,
          [this](qint64 budget) { setBudget(budget); });
  connect(tradeoff, &TradeoffView::batchChosen, this, [this](qint64 k) {
    {
      const QSignalBlocker b1(m_autoK), b2(m_k);
      m_autoK->setChecked(false);
      m_k->setEnabled(true);
      m_k->setValue(static_cast<int>(k));
    }
    replan();
  });
  connect(m_tabs, &QTabWidget::currentChanged, this, [this](int index) { refreshView(index); });
  onNetworkSourceChanged();
}

MainWindow::~MainWindow() = default;

void MainWindow::addViewTabs() {
  const std::vector<ViewRow>& table = viewTable();
  for (std::size_t i = 0; i < table.size(); ++i) {
    // What databases recorded (any open database's iterations, and two of them side by side):
    // MeasuredViews' widgets, made with the first of them.
    if (!m_planViews[i] && !m_measured) m_measured = new MeasuredViews(this, m_inputs);
    m_tabs->addTab(m_planViews[i] ? m_planViews[i] : table[i].recorded(*m_measured),
                   table[i].title);
  }
}

void MainWindow::showError(const QString& title, const QString& message) {
  m_status->setText(message);
  if (m_headless) {
    emit failed(message);
    return;
  }
  auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

const Network* MainWindow::plannedNetwork() const {
  if (const auto c = m_plans->context()) return c->network.get();
  return m_analysisNet.get();
}

void MainWindow::onLoaded() {
  const auto run = m_doc->current();
  // A plan's run is no profile: the dock says so in the words of `swapscope plan`.
  const std::string& notProfile = run->not_profile_warning;
  m_dbLabel->setText(qs(run->path + "\n" + run->network->name() +
                        (notProfile.empty() ? " profiled on " : " recorded on ") +
                        run->model->device() +
                        (notProfile.empty() ? "" : "\nwarning: " + notProfile)));
  setWindowTitle("Swapscope: " + QFileInfo(qs(run->path)).fileName());
  m_measured->setPrimary(run->rows);
  if (run->model_view) view<ModelView>()->setData(*run->model_view);
  showRecordedPlan(*run, std::exchange(m_requestGiven, false));
  if (networkSource() == NetworkSource::Profiled) {
    setNetwork(nullptr, "profiled");
  } else {
    onNetworkSourceChanged();
  }
}

void MainWindow::showRecordedPlan(const LoadedRun& run, bool keepRequest) {
  // A run of a plan (`swapscope run --plan`, Run plan...): the plan it ran, as planCheck takes it.
  std::shared_ptr<const store::PlanFile> recorded;
  const store::RunData& rows = *run.rows;
  if (rows.meta.kind == "run" && !rows.plans.empty()) {
    try {
      recorded = std::make_shared<const store::PlanFile>(store::planFromJson(
          nlohmann::json::parse(rows.plans.back().json), run.path + " (table plans)"));
    } catch (const std::exception& e) {
      m_status->setText(qs(e.what()));
    }
  }
  m_plans->setRecordedPlan(recorded);
  const std::optional<Policy> policy =
      recorded ? policyFromName(recorded->policy) : std::optional<Policy>();
  if (!recorded || !policy || keepRequest || networkSource() != NetworkSource::Profiled) return;
  if (recorded->sub_batches > 1 || recorded->k > m_k->maximum()) {
    // The window plans whole minibatches up to its k limit: a plan run in sub-batches (or at a
    // larger k) is not one it can show, and K whole would not fit the budget the run had.
    m_openNote = (qs(
        run.path + " ran a plan of k = " + std::to_string(recorded->k) +
        (recorded->sub_batches > 1 ? " in " + std::to_string(recorded->sub_batches) + " sub-batches"
                                   : std::string(", above the largest k the window plans")) +
        "; the window shows its own plan, so the measurement is not overlaid (swapscope "
        "plan --sub-batches and run --plan compare them)"));
    return;
  }
  // Its policy, budget and k, planned with its swap set (PlanService), so that the run's
  // measurement is overlaid on the plan it measured as soon as the database is open.
  m_budget = recorded->budget;
  const QSignalBlocker b1(m_policy), b2(m_autoK), b3(m_k);
  setPolicy(*policy);
  m_autoK->setChecked(false);
  m_k->setEnabled(true);
  m_k->setValue(static_cast<int>(recorded->k));
}

std::string MainWindow::statusText() const {
  return m_status->text().toStdString();
}

std::string MainWindow::databaseText() const {
  return m_dbLabel->text().toStdString();
}

void MainWindow::onContextReady() {
  const auto c = m_plans->context();
  m_minBudget = c->planner->minBudget();
  m_maxBudget = c->device_memory > m_minBudget ? c->device_memory : m_minBudget * 64;
  // What opening the database had to say (a recorded plan the window cannot show), else nothing.
  m_status->setText(std::exchange(m_openNote, {}));
  view<ModelView>()->setPlannedNetwork(*c->network);
  m_sweepKey.reset();  // a new network: a new sweep
  updateBudgetControls();
  replan();
}

MainWindow::SweepKey MainWindow::SweepKey::of(const perf::PlanRequest& r) {
  return {.policy = r.policy,
          .mode = r.mode,
          .batch = r.batch,
          .gpus = r.gpus,
          .link_bandwidth = r.link_bandwidth,
          .epochs = r.epochs,
          .dataset_size = r.dataset_size};
}

void MainWindow::restartSweepIfChanged(const perf::PlanRequest& r) {
  const SweepKey key = SweepKey::of(r);
  if (key == m_sweepKey) return;
  m_sweepKey = key;
  m_sweepDone = false;
  view<TradeoffView>()->clearSweep();
  m_plans->requestSweep(r, m_maxBudget);
}

void MainWindow::replan() {
  if (m_plans->context()) {
    const perf::PlanRequest request = currentRequest();
    m_plans->requestPlan(request);
    restartSweepIfChanged(request);
  } else if (m_analysis) {
    showAnalysisOnly();
  }
}

void MainWindow::showAnalysisOnly() {
  const std::int64_t k = m_autoK->isChecked() ? 32 : m_k->value();
  view<MemoryChartView>()->setData(makeMemoryChartData(*m_analysisNet, *m_analysis, k, m_budget));
}

void MainWindow::onPlanReady(const PlanOutcome& outcome) {
  m_shown = outcome;
  if (!outcome.result) {
    view<SummaryView>()->setMessage("the planner failed: " + outcome.error);
    showError("Cannot plan", outcome.error);
    return;
  }
  if (m_autoK->isChecked() && outcome.result->trainable) {
    // The greyed-out k shows the k chosen, not a stale fixed one.
    const QSignalBlocker block(m_k);
    m_k->setValue(static_cast<int>(std::min<std::int64_t>(outcome.result->best.k, m_k->maximum())));
  }
  std::fill(m_stale.begin(), m_stale.end(), true);
  // The eager views (cheap, and read by scripts): always; the current tab: now; the others when
  // shown.
  for (std::size_t i = 0; i < viewTable().size(); ++i)
    if (viewTable()[i].eager) refreshView(static_cast<int>(i));
  refreshView(m_tabs->currentIndex());
  if (!m_pendingSelect.isEmpty()) {
    const QString text = m_pendingSelect;
    m_pendingSelect.clear();
    try {
      selectLayer(findLayer(text));
    } catch (const Error& e) {
      showError("Cannot select the layer", qs(e.what()));
      return;
    }
  }
  emit planShown();
  checkSettled();
}

void MainWindow::refreshView(int index) {
  if (index < 0 || index >= static_cast<int>(m_stale.size()) || !m_stale[index]) return;
  m_stale[index] = false;
  if (!m_shown || !m_shown->views) return;
  if (PlanView* view = m_planViews[static_cast<std::size_t>(index)])
    view->setPlan({m_shown->request, *m_shown->result,
                   m_shown->views->data[static_cast<std::size_t>(index)]});
}

void MainWindow::refreshAllViews() {
  for (int i = 0; i < static_cast<int>(m_stale.size()); ++i)
    refreshView(i);
}

void MainWindow::onBatchCurve(const BatchCurveOutcome& curve) {
  if (!m_shown || curve.seq != m_shown->seq) return;  // for a plan no longer shown
  m_curveSeq = curve.seq;
  view<TradeoffView>()->setBatchCurve(curve.curve);
  checkSettled();
}

void MainWindow::checkSettled() {
  if (!m_shown || m_plans->planning() || !m_sweepDone || m_measured->busy()) return;
  const bool curveDone =
      !m_shown->result || !m_shown->result->trainable || m_curveSeq == m_shown->seq;
  if (curveDone) emit settled();
}

int MainWindow::findLayer(const QString& text) const {
  const Network* net = plannedNetwork();
  if (!net) throwBadInput("--select: no network to select a layer in");
  bool isIndex = false;
  const int index = text.toInt(&isIndex);
  if (isIndex && index >= 0 && index < net->size()) return index;
  for (int i = 0; i < net->size(); ++i)
    if (qs(net->layer(i).name) == text) return i;
  throwBadInput("--select: '" + text.toStdString() + "' is not a layer name or index (0.." +
                std::to_string(net->size() - 1) + ") of " + net->name());
}

void MainWindow::selectLayer(int layer) {
  if (m_selecting) return;
  m_selecting = true;
  m_selected = layer;
  for (PlanView* v : m_planViews)
    if (v) v->selectLayer(layer);
  if (timelineShowsPlannedNetwork()) m_measured->timeline()->selectLayer(layer);
  const Network* net = plannedNetwork();
  if (net && layer >= 0 && layer < net->size())
    statusBar()->showMessage(
        qs("selected layer " + std::to_string(layer) + ": " + net->layer(layer).name));
  m_selecting = false;
}

bool MainWindow::timelineShowsPlannedNetwork() const {
  const store::RunData* shown = m_measured->timeline()->run();
  const Network* net = plannedNetwork();
  return shown && net && shown->network.structure_hash == net->structureHash();
}

void MainWindow::showView(const QString& name) {
  const int index = static_cast<int>(viewNames().indexOf(name));
  if (index < 0) throwBadInput("unknown view '" + name.toStdString() + "'");
  m_tabs->setCurrentIndex(index);
}

}  // namespace swapscope::gui
