// SPDX-License-Identifier: MIT
#include "gui/run_dialog.h"

#include <QCloseEvent>
#include <QComboBox>
#include <QCoreApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressDialog>
#include <QPushButton>
#include <QSpinBox>
#include <QStatusBar>
#include <cmath>

#include "cli/run_output.h"
#include "common/bytes.h"
#include "common/error.h"
#include "common/format.h"
#include "graph/zoo.h"
#include "gui/main_window.h"
#include "runtime/device.h"

namespace swapscope::gui {
namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

QString secondsText(double s) {
  if (s < 90) return QString("%1 s").arg(std::lround(s));
  return QString("%1 min").arg(std::lround(s / 60));
}

/// An output-database row: a line edit and a Browse… button.
QWidget* outputRow(QWidget* parent, QLineEdit* edit) {
  auto* row = new QWidget(parent);
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* browse = new QPushButton(QObject::tr("Browse..."), row);
  layout->addWidget(edit, 1);
  layout->addWidget(browse);
  QObject::connect(browse, &QPushButton::clicked, row, [row, edit] {
    // The dialog asks before an existing file is chosen.
    const QString f = QFileDialog::getSaveFileName(row, QObject::tr("Run database"), edit->text(),
                                                   QObject::tr("Run databases (*.swapdb)"));
    if (!f.isEmpty()) edit->setText(f);
  });
  return row;
}

/// Whether `path` may be written: a new file, or an existing one the user agrees to replace
/// (`force` then). False when the user declines.
bool confirmOutput(QWidget* parent, const QString& path, bool& force) {
  force = false;
  if (!QFileInfo::exists(path)) return true;
  const auto answer = QMessageBox::question(
      parent, QObject::tr("Replace the run database?"),
      QObject::tr("%1 exists. Replace it? Its measurements are lost.").arg(path));
  force = answer == QMessageBox::Yes;
  return force;
}

}  // namespace

RunController::RunController(MainWindow* window)
    : QObject(window), m_window(window), m_job(new RunJob(this)) {
  QMenu* menu = window->menuBar()->addMenu(tr("&Run"));
  menu->addAction(tr("&Profile..."), this, [this] { askProfile(); });
  menu->addAction(tr("Run &plan..."), this, [this] { askRunPlan(); });
  window->installEventFilter(this);
  connect(m_job, &RunJob::progress, this, &RunController::onProgress);
  connect(m_job, &RunJob::finished, this, &RunController::onFinished);
  confirmClose = [this] {
    return QMessageBox::question(m_window, tr("A run is in progress"),
                                 tr("Stop it after the current iteration and close? The run "
                                    "database is kept, marked incomplete.")) == QMessageBox::Yes;
  };
}

RunController::~RunController() = default;

void RunController::showProgress(const QString& title, Kind kind) {
  m_kind = kind;
  if (!m_progress) {
    m_progress = new QProgressDialog(m_window);
    m_progress->setWindowModality(Qt::WindowModal);
    m_progress->setMinimumDuration(0);
    m_progress->setAutoClose(false);
    m_progress->setAutoReset(false);
    connect(m_progress, &QProgressDialog::canceled, this, [this] {
      m_job->cancel();
      m_progress->setLabelText(tr("Stopping after the current iteration..."));
      m_progress->show();  // stays up until the job has ended
    });
  }
  m_progress->reset();
  m_progress->setWindowTitle(title);
  m_progress->setLabelText(tr("Starting..."));
  m_progress->setRange(0, 0);  // busy until the first iteration ends
  m_progress->setValue(0);
  m_progress->show();
}

void RunController::onProgress(const collect::RunProgress& p) {
  if (!m_progress || m_job->cancelRequested()) return;
  const int done = p.batch_index * p.iterations + p.iteration;
  m_progress->setRange(0, p.batches * p.iterations);
  m_progress->setValue(done);
  QString text = m_kind == Kind::Profile ? tr("k = %1 (%2 of %3), iteration %4 of %5 (%6)")
                                               .arg(p.k)
                                               .arg(p.batch_index + 1)
                                               .arg(p.batches)
                                               .arg(p.iteration)
                                               .arg(p.iterations)
                                               .arg(collect::runStageName(p.stage))
                                         : tr("k = %1, iteration %2 of %3 (%4)")
                                               .arg(p.k)
                                               .arg(p.iteration)
                                               .arg(p.iterations)
                                               .arg(collect::runStageName(p.stage));
  text += tr("\n%1 per iteration, about %2 left")
              .arg(QString::fromStdString(formatMilliseconds(p.iteration_seconds)),
                   secondsText(p.eta_seconds));
  m_progress->setLabelText(text);
}

void RunController::onFinished(const JobOutcome& outcome) {
  if (m_progress) m_progress->hide();
  if (!m_planFile.isEmpty()) {
    QFile::remove(m_planFile);
    m_planFile.clear();
  }
  // Another device than the plan's: said with the result, as `swapscope run` warns.
  const QString warning =
      outcome.warning.isEmpty() ? QString() : tr("; warning: %1").arg(outcome.warning);
  if (outcome.status == store::RunStatus::Complete) {
    m_window->statusBar()->showMessage(tr("wrote %1 (complete)%2").arg(outcome.db, warning));
    if (m_kind == Kind::Profile) m_window->openDatabase(outcome.db);  // ready to plan
  } else if (outcome.status == store::RunStatus::Incomplete) {
    m_window->statusBar()->showMessage(
        tr("wrote %1 (incomplete: %2)%3").arg(outcome.db, outcome.message, warning));
  } else if (!m_closeWhenDone) {
    auto* box = new QMessageBox(
        QMessageBox::Warning,
        m_kind == Kind::Profile ? tr("The profile failed") : tr("The run failed"),
        outcome.created ? tr("%1\n\n%2 is marked failed.").arg(outcome.message, outcome.db)
                        : outcome.message,
        QMessageBox::Ok, m_window);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
  }
  emit jobFinished(outcome);
  if (m_closeWhenDone) m_window->close();
}

void RunController::startProfile(ProfileJob job) {
  m_closeWhenDone = false;
  const QString title = tr("Profiling %1").arg(qs(job.network->name()));
  m_job->startProfile(std::move(job));
  showProgress(title, Kind::Profile);
}

void RunController::startPlanShown(const QString& db, int iterations, int warmup, bool force,
                                   const std::string& device) {
  if (!m_window->shownPlan()) throwBadInput("no plan is shown: open a run database to plan first");
  // The plan shown, through the engine's plan-file writer, to a file the job reads.
  const QString plan = QDir::temp().filePath(
      QString("swapscope-run-plan-%1.json").arg(QCoreApplication::applicationPid()));
  m_window->exportPlan(plan, true);
  m_closeWhenDone = false;
  PlanJob job;
  // A zoo model or network JSON planned with the database's model runs that network, not the
  // one the database profiled.
  if (const auto& context = m_window->shownPlan()->context; context && context->transferred)
    job.network = context->network;
  job.plan = plan.toStdString();
  job.device = device;
  job.config.iterations = iterations;
  job.config.warmup = warmup;
  job.db = db.toStdString();
  job.force = force;
  std::vector<std::string> args = {
      "--plan", job.plan, "--iters", std::to_string(iterations), "--warmup", std::to_string(warmup),
      "--db",   job.db};
  if (force) args.push_back("--force");
  job.command_line = cli::quotedCommandLine("run", args);
  m_job->startPlan(std::move(job));
  m_planFile = plan;
  showProgress(tr("Running the plan"), Kind::Plan);
}

void RunController::askProfile() {
  if (m_job->running()) return;
  QDialog dialog(m_window);
  dialog.setWindowTitle(tr("Profile"));
  auto* form = new QFormLayout(&dialog);
  auto* network = new QComboBox(&dialog);
  for (const ZooEntry& e : zooEntries())
    network->addItem(qs(e.name));
  network->setCurrentText("fmnist-cnn");
  auto* budget = new QLineEdit("256MiB", &dialog);
  auto* device = new QComboBox(&dialog);
  for (const rt::BackendInfo& b : rt::listBackends()) {
    if (b.available) device->addItem(qs(b.name));
  }
  auto* iterations = new QSpinBox(&dialog);
  iterations->setRange(1, 100000);
  iterations->setValue(3);
  auto* warmup = new QSpinBox(&dialog);
  warmup->setRange(0, 1000);
  warmup->setValue(1);
  auto* maxBatch = new QSpinBox(&dialog);
  maxBatch->setRange(0, 1 << 24);
  maxBatch->setValue(128);
  maxBatch->setSpecialValueText(tr("no cap"));
  auto* output = new QLineEdit(QDir::current().filePath("profile.swapdb"), &dialog);
  form->addRow(tr("Network"), network);
  form->addRow(tr("Budget"), budget);
  form->addRow(tr("Device"), device);
  form->addRow(tr("Recorded iterations per k"), iterations);
  form->addRow(tr("Warm-up iterations per k"), warmup);
  form->addRow(tr("Largest k"), maxBatch);
  form->addRow(tr("Run database"), outputRow(&dialog, output));
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
  buttons->button(QDialogButtonBox::Ok)->setText(tr("Profile"));
  form->addRow(buttons);
  connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  while (dialog.exec() == QDialog::Accepted) {
    try {
      ProfileJob job;
      const std::string name = network->currentText().toStdString();
      job.network = std::make_shared<const Network>(buildZooModel(name));
      job.config.budget = parseByteSize(budget->text().toStdString(), "the budget");
      job.config.iterations = iterations->value();
      job.config.warmup = warmup->value();
      job.config.max_batch = maxBatch->value();
      job.device = device->currentText().toStdString();
      job.db = output->text().toStdString();
      if (job.db.empty()) throwBadInput("choose the run database to write");
      if (!confirmOutput(&dialog, output->text(), job.force)) continue;
      std::vector<std::string> args = {"--model",     name,
                                       "--budget",    budget->text().toStdString(),
                                       "--device",    job.device,
                                       "--iters",     std::to_string(job.config.iterations),
                                       "--warmup",    std::to_string(job.config.warmup),
                                       "--max-batch", std::to_string(job.config.max_batch),
                                       "--db",        job.db};
      if (job.force) args.push_back("--force");
      job.command_line = cli::quotedCommandLine("profile", args);
      startProfile(std::move(job));
      return;
    } catch (const Error& e) {
      QMessageBox::warning(&dialog, tr("Cannot profile"), qs(e.what()));
    }
  }
}

void RunController::askRunPlan() {
  if (m_job->running()) return;
  if (!m_window->shownPlan()) {
    QMessageBox::information(m_window, tr("Run plan"),
                             tr("No plan is shown: open a run database to plan first."));
    return;
  }
  QDialog dialog(m_window);
  dialog.setWindowTitle(tr("Run plan"));
  auto* form = new QFormLayout(&dialog);
  auto* iterations = new QSpinBox(&dialog);
  iterations->setRange(1, 100000);
  iterations->setValue(5);
  auto* warmup = new QSpinBox(&dialog);
  warmup->setRange(0, 1000);
  warmup->setValue(1);
  auto* output = new QLineEdit(QDir::current().filePath("run.swapdb"), &dialog);
  auto* device = new QComboBox(&dialog);
  for (const rt::BackendInfo& b : rt::listBackends()) {
    if (b.available) device->addItem(qs(b.name));
  }
  form->addRow(tr("Device"), device);
  form->addRow(tr("Measured iterations"), iterations);
  form->addRow(tr("Warm-up iterations"), warmup);
  form->addRow(tr("Run database"), outputRow(&dialog, output));
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
  buttons->button(QDialogButtonBox::Ok)->setText(tr("Run"));
  form->addRow(buttons);
  connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  while (dialog.exec() == QDialog::Accepted) {
    try {
      bool force = false;
      if (output->text().isEmpty()) throwBadInput("choose the run database to write");
      if (!confirmOutput(&dialog, output->text(), force)) continue;
      startPlanShown(output->text(), iterations->value(), warmup->value(), force,
                     device->currentText().toStdString());
      return;
    } catch (const Error& e) {
      QMessageBox::warning(&dialog, tr("Cannot run the plan"), qs(e.what()));
    }
  }
}

bool RunController::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_window && event->type() == QEvent::Close && m_job->running()) {
    if (m_closeWhenDone || (confirmClose && confirmClose())) {
      // The job may have ended while the question was open: then close now.
      if (!m_job->running()) return QObject::eventFilter(watched, event);
      m_closeWhenDone = true;
      m_job->cancel();
      if (m_progress) m_progress->setLabelText(tr("Stopping after the current iteration..."));
    }
    event->ignore();  // closes once the job has ended (onFinished)
    return true;
  }
  return QObject::eventFilter(watched, event);
}

}  // namespace swapscope::gui
