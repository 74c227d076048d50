// SPDX-License-Identifier: MIT
// The files of the window: the command line's options applied (its inputs recorded and its
// outputs checked first), the run database and ONNX model opened, and the plan, a figure or the
// window written under the CLI's output rules.
#include "gui/main_window.h"

#include <qcustomplot.h>
#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QTabWidget>
#include <algorithm>
#include <cstdio>
#include <utility>

#include "common/error.h"
#include "common/files.h"
#include "common/resolved_path.h"
#include "gui/figure.h"
#include "gui/measured_views.h"
#include "gui/run_document.h"
#include "gui/view_registry.h"
#include "options/file_options.h"
#include "store/plan_file.h"

namespace swapscope::gui {
namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

}  // namespace

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
  std::string plan = o.export_plan.toStdString();
  const std::string shot = o.screenshot.toStdString();
  if (plan == cli::kStandardOutput) plan.clear();  // printed: no file is written
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
    setPolicy(o.policy);
    m_mode->setCurrentIndex(m_mode->findData(int(o.mode)));
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
    setNetworkSource(!m_onnxFile.isEmpty() ? NetworkSource::Onnx
                     : m_netFile.isEmpty() ? NetworkSource::Zoo
                                           : NetworkSource::File);
    enableNetworkFields(networkSource());  // the source's signal is blocked here
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
  setNetworkSource(NetworkSource::Onnx);
  onNetworkSourceChanged();
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
  // As `swapscope plan`: a budget or k that cannot train is the user's input (exit 2); a
  // paper-mode search that finds no k meeting constraint (6) is the model's answer (exit 1).
  if (!file) {
    if (!m_shown->result->trainable) perf::throwNoPlan(*m_shown->result);
    throwBadInput("--export-plan: no plan to export (open a run database first)");
  }
  if (path == cli::kStandardOutput) {
    // As `swapscope plan --out -`: the plan file's text, its source_db relative to the current
    // folder.
    const std::string text = store::planFileText(*file, cli::kStandardOutput);
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
      throw Error(ErrorKind::Runtime, "cannot write the plan to standard output (--export-plan -)");
    return;
  }
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
