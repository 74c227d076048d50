// SPDX-License-Identifier: MIT
#include "gui/main_window.h"

#include <qcustomplot.h>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <utility>

#include "cli/file_options.h"
#include "common/batch_limit.h"
#include "common/bytes.h"
#include "common/error.h"
#include "common/files.h"
#include "common/resolved_path.h"
#include "graph/network_json.h"
#include "graph/zoo.h"
#include "gui/figure.h"
#include "gui/input_files.h"
#include "gui/measured_views.h"
#include "gui/plan_service.h"
#include "gui/run_document.h"
#include "gui/view_registry.h"
#include "store/plan_file.h"
#include "views/compare_view.h"
#include "views/layers_view.h"
#include "views/memory_chart_data.h"
#include "views/memory_chart_view.h"
#include "views/model_view.h"
#include "views/streams_view.h"
#include "views/summary_data.h"
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

void MainWindow::buildControls() {
  m_dbLabel = new QLabel("no run database");
  m_dbLabel->setWordWrap(true);
  auto* openDb = new QPushButton("Open run database...");
  m_netSource = new QComboBox;
  m_netSource->addItems({"profiled network", "zoo model", "network JSON", "ONNX model"});
  m_zoo = new QComboBox;
  for (const ZooEntry& e : zooEntries())
    m_zoo->addItem(qs(e.name));
  m_input = new QLineEdit;
  m_input->setPlaceholderText("default, e.g. 3x224x224");
  m_classes = new QLineEdit;
  m_classes->setPlaceholderText("default");
  auto* openNet = new QPushButton("Open network JSON...");
  m_netLabel = new QLabel;
  m_netLabel->setWordWrap(true);
  m_policy = new QComboBox;
  // The policy table's rows, the planner's default (accudnn) first.
  m_policy->addItem(qs(std::string(policyName(Policy::AccUdnn))));
  for (const PolicyInfo& p : policyTable()) {
    if (p.id != Policy::AccUdnn) m_policy->addItem(qs(std::string(p.name)));
    m_policy->setItemData(m_policy->findText(qs(std::string(p.name))),
                          qs(std::string(p.description)), Qt::ToolTipRole);
  }
  m_mode = new QComboBox;
  m_mode->addItems({"argmin", "paper"});
  m_autoK = new QCheckBox("automatic");
  m_autoK->setChecked(true);
  m_k = new QSpinBox;
  m_k->setRange(1, static_cast<int>(kMaxBatch));  // the limit of every verb
  m_k->setValue(32);
  m_k->setEnabled(false);
  m_gpus = new QSpinBox;
  m_gpus->setRange(1, 1024);
  m_link = new QLineEdit("25GB");
  m_epochs = new QDoubleSpinBox;
  m_epochs->setRange(0.001, 1e6);
  m_epochs->setValue(1);
  m_datasetSize = new QSpinBox;
  m_datasetSize->setRange(0, 2000000000);
  m_datasetSize->setSpecialValueText("none");
  m_slider = new QSlider(Qt::Horizontal);
  m_slider->setRange(0, kSliderSteps);
  m_budgetEntry = new QLineEdit;
  m_budgetEntry->setToolTip("exact budget: 123456, 512MiB, 6GiB, 1.5GB");
  m_budgetRange = new QLabel;
  m_budgetRange->setWordWrap(true);
  m_status = new QLabel;
  m_status->setWordWrap(true);
  auto* exportButton = new QPushButton("Export plan...");
  auto* figureButton = new QPushButton("Save figure...");

  auto* kRow = new QHBoxLayout;
  kRow->addWidget(m_autoK);
  kRow->addWidget(m_k);
  auto* form = new QFormLayout;
  form->addRow(openDb);
  form->addRow(m_dbLabel);
  form->addRow("Network", m_netSource);
  form->addRow("Zoo model", m_zoo);
  form->addRow("Input", m_input);
  form->addRow("Classes", m_classes);
  form->addRow(openNet);
  form->addRow(m_netLabel);
  form->addRow("Policy", m_policy);
  form->addRow("Mode", m_mode);
  form->addRow("Minibatch k", kRow);
  form->addRow("GPUs", m_gpus);
  form->addRow("Link bandwidth", m_link);
  form->addRow("Epochs", m_epochs);
  form->addRow("Data-set size", m_datasetSize);
  form->addRow("Budget", m_budgetEntry);
  form->addRow(m_slider);
  form->addRow(m_budgetRange);
  form->addRow(exportButton);
  form->addRow(figureButton);
  form->addRow(m_status);
  auto* panel = new QWidget;
  panel->setLayout(form);
  auto* scroll = new QScrollArea;
  scroll->setWidget(panel);
  scroll->setWidgetResizable(true);
  scroll->setMinimumWidth(330);
  auto* dock = new QDockWidget("Plan", this);
  dock->setObjectName("controls");
  dock->setWidget(scroll);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::LeftDockWidgetArea, dock);

  connect(openDb, &QPushButton::clicked, this, &MainWindow::askOpenDatabase);
  connect(openNet, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, "Open network JSON", {},
                                                      "Network JSON (*.json);;All files (*)");
    if (path.isEmpty()) return;
    m_netFile = path;
    m_inputs->addNetwork(path);
    const QSignalBlocker block(m_netSource);
    m_netSource->setCurrentIndex(2);
    onNetworkSourceChanged();
  });
  connect(m_netSource, &QComboBox::currentIndexChanged, this, [this] { onNetworkSourceChanged(); });
  connect(m_zoo, &QComboBox::currentIndexChanged, this, [this] {
    if (m_netSource->currentIndex() == 1) onNetworkSourceChanged();
  });
  connect(m_input, &QLineEdit::editingFinished, this, [this] {
    if (m_netSource->currentIndex() == 1 || m_netSource->currentIndex() == 3)
      onNetworkSourceChanged();
  });
  connect(m_classes, &QLineEdit::editingFinished, this, [this] {
    if (m_netSource->currentIndex() == 1) onNetworkSourceChanged();
  });
  for (QComboBox* c : {m_policy, m_mode})
    connect(c, &QComboBox::currentIndexChanged, this, &MainWindow::replan);
  connect(m_autoK, &QCheckBox::toggled, this, [this](bool on) {
    m_k->setEnabled(!on);
    replan();
  });
  connect(m_k, &QSpinBox::valueChanged, this, &MainWindow::replan);
  connect(m_gpus, &QSpinBox::valueChanged, this, &MainWindow::replan);
  connect(m_link, &QLineEdit::editingFinished, this, &MainWindow::replan);
  connect(m_epochs, &QDoubleSpinBox::valueChanged, this, &MainWindow::replan);
  connect(m_datasetSize, &QSpinBox::valueChanged, this, &MainWindow::replan);
  connect(m_slider, &QSlider::valueChanged, this, [this](int pos) {
    m_budget = budgetAt(pos);
    {
      const QSignalBlocker block(m_budgetEntry);
      m_budgetEntry->setText(qs(formatBytes(m_budget)));
    }
    m_budgetEntry->setStyleSheet({});
    replan();
  });
  connect(m_budgetEntry, &QLineEdit::editingFinished, this, [this] {
    try {
      setBudget(parseByteSize(m_budgetEntry->text().trimmed().toStdString(), "budget"));
      m_budgetEntry->setStyleSheet({});
    } catch (const Error& e) {
      m_budgetEntry->setStyleSheet("color: #c02020");
      m_status->setText(qs(e.what()));
    }
  });
  connect(exportButton, &QPushButton::clicked, this, [this] {
    const QString path =
        QFileDialog::getSaveFileName(this, "Export plan", "plan.json", "Plan JSON (*.json)");
    if (path.isEmpty()) return;
    try {
      exportPlan(path, /*force=*/true);  // the dialog asked before replacing
      m_status->setText("plan written to " + path);
    } catch (const Error& e) {
      showError("Cannot export the plan", qs(e.what()));
    }
  });
  connect(figureButton, &QPushButton::clicked, this, [this] {
#ifdef SWAPSCOPE_HAVE_QT_SVG
    const QString filter = "PNG (*.png);;SVG (*.svg);;PDF (*.pdf)";
#else
    const QString filter = "PNG (*.png);;PDF (*.pdf)";
#endif
    const QString name = viewNames()[m_tabs->currentIndex()];
    const QString path = QFileDialog::getSaveFileName(this, "Save figure", name + ".png", filter);
    if (path.isEmpty()) return;
    try {
      saveFigure(name, path, /*force=*/true);
    } catch (const Error& e) {
      showError("Cannot save the figure", qs(e.what()));
    }
  });
}

void MainWindow::checkOutputs(const GuiOptions& o) {
  // Every file the options name to read is an input before any is read.
  if (!o.db.isEmpty()) m_inputs->addDatabase(o.db, "the run database");
  for (const QString& path : o.compare)
    m_inputs->addDatabase(path, "the run database --compare");
  for (std::size_t i = 0; i + 1 < o.network_args.size(); i += 2) {
    if (o.network_args[i] == "--net") m_inputs->addNetwork(qs(o.network_args[i + 1]));
    if (o.network_args[i] == "--onnx")
      m_inputs->addNetwork(qs(o.network_args[i + 1]), "the ONNX model");
  }
  const files::OutputRules rules = outputRules(o.force);
  const std::string plan = o.export_plan.toStdString(), shot = o.screenshot.toStdString();
  if (!plan.empty()) files::checkOutputPath(plan, "the plan file --export-plan", rules);
  if (!shot.empty()) {
    files::checkOutputPath(shot, "the screenshot --screenshot", rules);
    figureFormat(o.screenshot, "the screenshot --screenshot");
  }
  // The screenshot, written after the plan, would replace it.
  if (!plan.empty() && !shot.empty() &&
      (files::resolvedPath(plan) == files::resolvedPath(shot) ||
       (files::identity(plan) && files::identity(plan) == files::identity(shot))))
    throwBadInput("the screenshot --screenshot '" + shot + "' and the plan file --export-plan '" +
                  plan + "' are the same file; give each its own name");
}

void MainWindow::applyOptions(const GuiOptions& o) {
  checkOutputs(o);
  m_headless = o.headless();
  m_measured->setHeadless(m_headless);
  if (o.timeline_k) m_measured->setTimelineBatch(*o.timeline_k);
  if (o.budget) m_budget = *o.budget;
  // A budget or k on the command line is kept for the database it opens, even a run of a plan.
  m_requestGiven = o.budget.has_value() || o.batch.has_value();
  {
    const QSignalBlocker b1(m_policy), b2(m_mode), b3(m_autoK), b4(m_k);
    m_policy->setCurrentText(qs(std::string(policyName(o.policy))));
    m_mode->setCurrentIndex(o.mode == perf::PlanMode::Paper ? 1 : 0);
    if (o.batch) {
      m_autoK->setChecked(false);
      m_k->setEnabled(true);
      m_k->setValue(static_cast<int>(*o.batch));
    }
  }
  if (!o.view.isEmpty()) showView(o.view);
  m_pendingSelect = o.select;
  if (!o.network_args.empty()) {
    // Built now so that a bad model or file is reported before anything else starts.
    auto net = std::make_shared<const Network>(loadNetworkArgs(o.network_args));
    std::string origin = net->name();
    for (std::size_t i = 0; i + 1 < o.network_args.size(); i += 2) {
      if (o.network_args[i] == "--net") {
        m_netFile = qs(o.network_args[i + 1]);
        m_inputs->addNetwork(m_netFile);
        origin = o.network_args[i + 1];
      } else if (o.network_args[i] == "--onnx") {
        m_onnxFile = qs(o.network_args[i + 1]);
        m_inputs->addNetwork(m_onnxFile, "the ONNX model");
        origin = o.network_args[i + 1];
      } else if (o.network_args[i] == "--input") {
        m_input->setText(qs(o.network_args[i + 1]));
      }
    }
    const QSignalBlocker block(m_netSource);
    m_netSource->setCurrentIndex(!m_onnxFile.isEmpty() ? 3 : m_netFile.isEmpty() ? 1 : 2);
    m_input->setEnabled(m_netSource->currentIndex() == 1 || m_netSource->currentIndex() == 3);
    if (m_netFile.isEmpty() && m_onnxFile.isEmpty()) {
      const QSignalBlocker bz(m_zoo);
      m_zoo->setCurrentText(qs(net->name()));
    }
    setNetwork(std::move(net), origin);
  } else if (o.db.isEmpty()) {
    onNetworkSourceChanged();
  }
  updateBudgetControls();
  if (!o.db.isEmpty()) openDatabase(o.db);
  for (const QString& path : o.compare)
    m_measured->addDatabase(path);
}

void MainWindow::openDatabase(const QString& path) {
  m_inputs->addDatabase(path, "the run database");
  m_dbLabel->setText("reading " + path);  // until loaded() or loadFailed() says what it holds
  m_doc->open(path);
}

void MainWindow::askOpenDatabase() {
  const QString path = QFileDialog::getOpenFileName(this, "Open run database", {},
                                                    "Run databases (*.swapdb);;All files (*)");
  if (!path.isEmpty()) openDatabase(path);
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

void MainWindow::askOpenOnnx() {
  const QString path = QFileDialog::getOpenFileName(this, "Open ONNX model", {},
                                                    "ONNX models (*.onnx);;All files (*)");
  if (path.isEmpty()) return;
  openOnnx(path);
}

void MainWindow::openOnnx(const QString& path) {
  m_onnxFile = path;
  m_inputs->addNetwork(path, "the ONNX model");
  const QSignalBlocker block(m_netSource);
  m_netSource->setCurrentIndex(3);
  onNetworkSourceChanged();
}

void MainWindow::onNetworkSourceChanged() {
  const int source = m_netSource->currentIndex();
  m_zoo->setEnabled(source == 1);
  m_input->setEnabled(source == 1 || source == 3);
  m_classes->setEnabled(source == 1);
  try {
    if (source == 0) {
      m_netLabel->setText(m_doc->current() ? "the network the database profiled" : "");
      if (m_doc->current()) {
        setNetwork(nullptr, "profiled");
      } else {
        setNetwork(
            std::make_shared<const Network>(buildZooModel(m_zoo->currentText().toStdString())),
            m_zoo->currentText().toStdString());
      }
      return;
    }
    std::vector<std::string> args;
    if (source == 1) {
      args = {"--model", m_zoo->currentText().toStdString()};
      if (!m_input->text().trimmed().isEmpty())
        args.insert(args.end(), {"--input", m_input->text().trimmed().toStdString()});
      if (!m_classes->text().trimmed().isEmpty())
        args.insert(args.end(), {"--classes", m_classes->text().trimmed().toStdString()});
    } else if (source == 3) {
      if (m_onnxFile.isEmpty()) return;
      args = {"--onnx", m_onnxFile.toStdString()};
      if (!m_input->text().trimmed().isEmpty())
        args.insert(args.end(), {"--input", m_input->text().trimmed().toStdString()});
    } else {
      if (m_netFile.isEmpty()) return;
      args = {"--net", m_netFile.toStdString()};
    }
    auto net = std::make_shared<const Network>(loadNetworkArgs(args));
    setNetwork(net, source == 2   ? m_netFile.toStdString()
                    : source == 3 ? m_onnxFile.toStdString()
                                  : net->name());
  } catch (const Error& e) {
    showError("Cannot build the network", qs(e.what()));
  }
}

void MainWindow::setNetwork(std::shared_ptr<const Network> network, const std::string& origin) {
  if (const auto run = m_doc->current()) {
    m_netLabel->setText(network ? qs(network->name() + " (transferred: per-type curves of " +
                                     run->network->name() + ")")
                                : qs("the profiled network, " + run->network->name()));
    m_status->setText("preparing the planner for " + qs(origin));
    m_plans->setNetwork(run, std::move(network));
    return;
  }
  if (!network) return;
  m_netLabel->setText(qs(network->name()) + " (analysis only: no run database)");
  m_analysisNet = std::move(network);
  m_analysis = std::make_unique<NetworkAnalysis>(analyzeNetwork(*m_analysisNet));
  m_minBudget = m_analysis->swap_all.curve.peak(1);
  m_maxBudget = std::max<std::int64_t>(m_minBudget * 2, std::int64_t{80} << 30);
  updateBudgetControls();
  showAnalysisOnly();
}

void MainWindow::onLoaded() {
  const auto run = m_doc->current();
  m_dbLabel->setText(
      qs(run->path + "\n" + run->network->name() + " profiled on " + run->model->device()));
  setWindowTitle("Swapscope: " + QFileInfo(qs(run->path)).fileName());
  m_measured->setPrimary(run->run);
  if (run->model_view) view<ModelView>()->setData(*run->model_view);
  showRecordedPlan(*run, std::exchange(m_requestGiven, false));
  if (m_netSource->currentIndex() == 0) {
    setNetwork(nullptr, "profiled");
  } else {
    onNetworkSourceChanged();
  }
}

void MainWindow::showRecordedPlan(const RunData& run, bool keepRequest) {
  // A run of a plan (`swapscope run --plan`, Run plan...): the plan it ran, as planCheck takes it.
  std::shared_ptr<const store::PlanFile> recorded;
  const store::RunData& rows = *run.run;
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
  if (!recorded || !policy || keepRequest || m_netSource->currentIndex() != 0) return;
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
  m_policy->setCurrentText(qs(std::string(policyName(*policy))));
  m_autoK->setChecked(false);
  m_k->setEnabled(true);
  m_k->setValue(static_cast<int>(recorded->k));
}

std::string MainWindow::statusText() const {
  return m_status->text().toStdString();
}

void MainWindow::onContextReady() {
  const auto c = m_plans->context();
  m_minBudget = c->planner->minBudget();
  m_maxBudget = c->device_memory > m_minBudget ? c->device_memory : m_minBudget * 64;
  // What opening the database had to say (a recorded plan the window cannot show), else nothing.
  m_status->setText(std::exchange(m_openNote, {}));
  view<ModelView>()->setPlannedNetwork(*c->network);
  m_sweepKey.clear();  // a new network: a new sweep
  updateBudgetControls();
  replan();
}

void MainWindow::restartSweepIfChanged(const perf::PlanRequest& r) {
  // Everything a plan depends on but the budget.
  const std::string key = std::string(policyName(r.policy)) + "|" +
                          std::string(perf::planModeName(r.mode)) + "|" +
                          std::to_string(r.batch.value_or(0)) + "|" + std::to_string(r.gpus) + "|" +
                          std::to_string(r.link_bandwidth) + "|" + std::to_string(r.epochs) + "|" +
                          std::to_string(r.dataset_size);
  if (key == m_sweepKey) return;
  m_sweepKey = key;
  m_sweepDone = false;
  view<TradeoffView>()->clearSweep();
  m_plans->requestSweep(r, m_maxBudget);
}

void MainWindow::updateBudgetControls() {
  {
    const QSignalBlocker block(m_slider);
    m_slider->setValue(sliderPosition(m_budget));
  }
  {
    const QSignalBlocker block(m_budgetEntry);
    m_budgetEntry->setText(qs(formatBytes(m_budget)));
  }
  m_budgetRange->setText(qs("slider: " + formatBytes(m_minBudget) +
                            " (untrainable below: swap-all at k = 1) to " +
                            formatBytes(m_maxBudget) + " (device memory)"));
}

std::int64_t MainWindow::budgetAt(int pos) const {
  if (pos <= 0) return m_minBudget;
  if (pos >= kSliderSteps) return m_maxBudget;
  const double ratio = static_cast<double>(m_maxBudget) / static_cast<double>(m_minBudget);
  return static_cast<std::int64_t>(
      std::llround(static_cast<double>(m_minBudget) * std::pow(ratio, double(pos) / kSliderSteps)));
}

int MainWindow::sliderPosition(std::int64_t bytes) const {
  if (bytes <= m_minBudget || m_maxBudget <= m_minBudget) return 0;
  if (bytes >= m_maxBudget) return kSliderSteps;
  const double t = std::log(static_cast<double>(bytes) / static_cast<double>(m_minBudget)) /
                   std::log(static_cast<double>(m_maxBudget) / static_cast<double>(m_minBudget));
  return static_cast<int>(std::lround(t * kSliderSteps));
}

void MainWindow::setBudget(std::int64_t bytes) {
  m_budget = bytes;
  updateBudgetControls();
  replan();
}

perf::PlanRequest MainWindow::currentRequest() const {
  perf::PlanRequest r;
  r.policy = policyFromName(m_policy->currentText().toStdString()).value();
  r.mode = m_mode->currentIndex() == 1 ? perf::PlanMode::Paper : perf::PlanMode::Argmin;
  r.budget = m_budget;
  if (!m_autoK->isChecked()) r.batch = m_k->value();
  r.epochs = m_epochs->value();
  r.dataset_size = m_datasetSize->value();
  r.gpus = m_gpus->value();
  try {
    r.link_bandwidth = static_cast<double>(
        parseByteSize(m_link->text().trimmed().toStdString(), "link bandwidth"));
  } catch (const Error&) {
    r.link_bandwidth = 0;
  }
  return r;
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

files::OutputRules MainWindow::outputRules(bool force) const {
  files::OutputRules rules = m_inputs->rules(force);
  // As the CLI's: the run database with SQLite's companion files.
  if (const auto run = m_doc->current()) cli::addInput(rules, "the run database", run->path);
  return rules;
}

void MainWindow::exportPlan(const QString& path, bool force) {
  if (!m_shown || !m_shown->result)
    throwBadInput("--export-plan: no plan to export (open a run database first)");
  const std::optional<store::PlanFile> file = m_shown->planFile();
  if (!file) throwBadInput(m_shown->result->reason);
  store::writePlanFile(*file, path.toStdString(), outputRules(force));
}

void MainWindow::saveFigure(const QString& name, const QString& path, bool force) {
  const int index = static_cast<int>(viewNames().indexOf(name));
  if (index < 0) throwBadInput("unknown view '" + name.toStdString() + "'");
  const files::OutputRules rules = outputRules(force);
  files::checkOutputPath(path.toStdString(), "the figure", rules);
  const QString format = figureFormat(path, "the figure");
  refreshView(index);
  QWidget* widget = m_tabs->widget(index);
  const QSize size(std::max(widget->width(), 640), std::max(widget->height(), 400));
  const QByteArray bytes = renderFigure(widget, widget->findChild<QCustomPlot*>(), size, format);
  files::writeOutputFile(
      path.toStdString(), "the figure",
      std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())), rules);
}

void MainWindow::saveScreenshot(const QString& path, bool force) {
  const files::OutputRules rules = outputRules(force);
  files::checkOutputPath(path.toStdString(), "the screenshot --screenshot", rules);
  const QString format = figureFormat(path, "the screenshot --screenshot");
  const QByteArray bytes = renderFigure(this, nullptr, size(), format);
  files::writeOutputFile(
      path.toStdString(), "the screenshot --screenshot",
      std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())), rules);
}

}  // namespace swapscope::gui
