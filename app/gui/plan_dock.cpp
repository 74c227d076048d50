// SPDX-License-Identifier: MIT
// The window's Plan dock: its controls made, laid out and connected; the network they name, the
// budget slider's log scale and the request they describe.
#include "gui/main_window.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <algorithm>
#include <cmath>
#include <utility>

#include "common/batch_limit.h"
#include "common/bytes.h"
#include "common/error.h"
#include "graph/zoo.h"

#include "gui/plan_service.h"
#include "gui/run_document.h"
#include "gui/view_registry.h"

namespace swapscope::gui {
namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

}  // namespace

MainWindow::NetworkSource MainWindow::networkSource() const {
  return static_cast<NetworkSource>(m_netSource->currentIndex());
}

void MainWindow::setNetworkSource(NetworkSource source) {
  m_netSource->setCurrentIndex(static_cast<int>(source));
}

void MainWindow::setPolicy(Policy policy) {
  m_policy->setCurrentIndex(m_policy->findData(int(policy)));
}

void MainWindow::buildControls() {
  ControlButtons buttons;
  makeNetworkControls(buttons);
  makeRequestControls();
  makeBudgetControls();
  buttons.export_plan = new QPushButton("Export plan...");
  buttons.save_figure = new QPushButton("Save figure...");
  addControlsDock(buttons);
  connectNetworkControls(buttons);
  connectRequestControls();
  connectBudgetControls();
  connectOutputButtons(buttons);
}

void MainWindow::makeNetworkControls(ControlButtons& buttons) {
  m_dbLabel = new QLabel("no run database");
  m_dbLabel->setWordWrap(true);
  buttons.open_db = new QPushButton("Open run database...");
  m_netSource = new QComboBox;
  // In NetworkSource's order.
  m_netSource->addItems({"profiled network", "zoo model", "network JSON", "ONNX model"});
  m_zoo = new QComboBox;
  m_zoo->setObjectName("zooModel");
  for (const ZooEntry& e : zooEntries())
    m_zoo->addItem(qs(e.name));
  m_input = new QLineEdit;
  m_input->setObjectName("input");
  m_input->setPlaceholderText("default, e.g. 3x224x224");
  m_classes = new QLineEdit;
  m_classes->setObjectName("classes");
  m_classes->setPlaceholderText("default");
  buttons.open_net = new QPushButton("Open network JSON...");
  m_netLabel = new QLabel;
  m_netLabel->setWordWrap(true);
}

void MainWindow::makeRequestControls() {
  m_policy = new QComboBox;
  // The policy table's rows, the planner's default (accudnn) first.
  m_policy->addItem(qs(std::string(policyName(Policy::AccUdnn))), int(Policy::AccUdnn));
  for (const PolicyInfo& p : policyTable()) {
    if (p.id != Policy::AccUdnn) m_policy->addItem(qs(std::string(p.name)), int(p.id));
    m_policy->setItemData(m_policy->findText(qs(std::string(p.name))),
                          qs(std::string(p.description)), Qt::ToolTipRole);
  }
  m_mode = new QComboBox;
  for (const perf::PlanMode mode : {perf::PlanMode::Argmin, perf::PlanMode::Paper})
    m_mode->addItem(qs(std::string(perf::planModeName(mode))), int(mode));
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
}

void MainWindow::makeBudgetControls() {
  m_slider = new QSlider(Qt::Horizontal);
  m_slider->setRange(0, kSliderSteps);
  m_budgetEntry = new QLineEdit;
  m_budgetEntry->setToolTip("exact budget: 123456, 512MiB, 6GiB, 1.5GB");
  m_budgetRange = new QLabel;
  m_budgetRange->setWordWrap(true);
  m_status = new QLabel;
  m_status->setWordWrap(true);
}

void MainWindow::addControlsDock(const ControlButtons& buttons) {
  auto* kRow = new QHBoxLayout;
  kRow->addWidget(m_autoK);
  kRow->addWidget(m_k);
  auto* form = new QFormLayout;
  form->addRow(buttons.open_db);
  form->addRow(m_dbLabel);
  form->addRow("Network", m_netSource);
  form->addRow("Zoo model", m_zoo);
  form->addRow("Input", m_input);
  form->addRow("Classes", m_classes);
  form->addRow(buttons.open_net);
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
  form->addRow(buttons.export_plan);
  form->addRow(buttons.save_figure);
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
}

void MainWindow::connectNetworkControls(const ControlButtons& buttons) {
  connect(buttons.open_db, &QPushButton::clicked, this, &MainWindow::askOpenDatabase);
  connect(buttons.open_net, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, "Open network JSON", {},
                                                      "Network JSON (*.json);;All files (*)");
    if (path.isEmpty()) return;
    m_netFile = path;
    m_inputs->addNetwork(path);
    const QSignalBlocker block(m_netSource);
    setNetworkSource(NetworkSource::File);
    onNetworkSourceChanged();
  });
  connect(m_netSource, &QComboBox::currentIndexChanged, this, [this] { onNetworkSourceChanged(); });
  connect(m_zoo, &QComboBox::currentIndexChanged, this, [this] {
    if (networkSource() == NetworkSource::Zoo) onNetworkSourceChanged();
  });
  connect(m_input, &QLineEdit::editingFinished, this, [this] {
    if (networkSource() == NetworkSource::Zoo || networkSource() == NetworkSource::Onnx)
      onNetworkSourceChanged();
  });
  connect(m_classes, &QLineEdit::editingFinished, this, [this] {
    if (networkSource() == NetworkSource::Zoo) onNetworkSourceChanged();
  });
}

void MainWindow::connectRequestControls() {
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
}

void MainWindow::connectBudgetControls() {
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
}

void MainWindow::connectOutputButtons(const ControlButtons& buttons) {
  connect(buttons.export_plan, &QPushButton::clicked, this, [this] {
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
  connect(buttons.save_figure, &QPushButton::clicked, this, [this] {
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

void MainWindow::enableNetworkFields(NetworkSource source) {
  m_zoo->setEnabled(source == NetworkSource::Zoo);
  m_input->setEnabled(source == NetworkSource::Zoo || source == NetworkSource::Onnx);
  m_classes->setEnabled(source == NetworkSource::Zoo);
}

void MainWindow::onNetworkSourceChanged() {
  const NetworkSource source = networkSource();
  enableNetworkFields(source);
  try {
    if (source == NetworkSource::Profiled) {
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
    if (source == NetworkSource::Zoo) {
      args = {"--model", m_zoo->currentText().toStdString()};
      if (!m_input->text().trimmed().isEmpty())
        args.insert(args.end(), {"--input", m_input->text().trimmed().toStdString()});
      if (!m_classes->text().trimmed().isEmpty())
        args.insert(args.end(), {"--classes", m_classes->text().trimmed().toStdString()});
    } else if (source == NetworkSource::Onnx) {
      if (m_onnxFile.isEmpty()) return;
      args = {"--onnx", m_onnxFile.toStdString()};
      if (!m_input->text().trimmed().isEmpty())
        args.insert(args.end(), {"--input", m_input->text().trimmed().toStdString()});
    } else {
      if (m_netFile.isEmpty()) return;
      args = {"--net", m_netFile.toStdString()};
    }
    auto net = std::make_shared<const Network>(loadNetworkArgs(args));
    setNetwork(net, source == NetworkSource::File   ? m_netFile.toStdString()
                    : source == NetworkSource::Onnx ? m_onnxFile.toStdString()
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
  r.policy = static_cast<Policy>(m_policy->currentData().toInt());
  r.mode = static_cast<perf::PlanMode>(m_mode->currentData().toInt());
  r.budget = m_budget;
  // One planner thread: the GUI thread keeps a core of its own while the budget is dragged, and
  // a second search thread gains nothing there (docs/perfmodel.md: the drag's per-plan time is
  // the same on one thread and two).
  r.threads = 1;
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

}  // namespace swapscope::gui
