// SPDX-License-Identifier: MIT
#include "gui/run_controller.h"

#include <QCloseEvent>
#include <QComboBox>
#include <QCoreApplication>
#include <QDialog>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QFormLayout>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressDialog>
#include <QPushButton>
#include <QSpinBox>
#include <QStatusBar>
#include <QThreadPool>
#include <cmath>
#include <sstream>

#include "common/batch_limit.h"
#include "common/bytes.h"
#include "common/error.h"
#include "common/files.h"
#include "common/format.h"
#include "graph/zoo.h"
#include "gui/main_window.h"
#include "gui/off_thread.h"
#include "gui/run_form.h"
#include "options/run_output.h"

namespace swapscope::gui {
namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

QString secondsText(double s) {
  if (s < 90) return QString("%1 s").arg(std::lround(s));
  return QString("%1 min").arg(std::lround(s / 60));
}

/// The arguments that name `net` to the CLI: --model NAME, with --input and --classes where they
/// are not the model's defaults. Empty when no zoo model gives `net` (a network JSON).
std::vector<std::string> networkArgs(const Network& net) {
  const ZooEntry* entry = findZooEntry(net.name());
  if (!entry) return {};
  std::vector<std::string> args = {"--model", net.name()};
  ZooOptions options;
  if (net.sampleShape() != entry->default_input) {
    options.input = net.sampleShape();
    std::string shape;
    for (const std::int64_t d : net.sampleShape().dims) {
      if (!shape.empty()) shape += 'x';  // appended: GCC 12 at -O3 misreads "x" + a temporary
      shape += std::to_string(d);
    }
    args.insert(args.end(), {"--input", shape});
  }
  if (net.classes() != entry->default_classes) {
    options.classes = net.classes();
    args.insert(args.end(), {"--classes", std::to_string(net.classes())});
  }
  try {
    if (buildZooModel(net.name(), options).structureHash() == net.structureHash()) return args;
  } catch (const Error&) {
  }
  return {};
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
  connect(window, &MainWindow::planShown, this, [this] {
    // A run of a plan opened to plan: its own measurement.
    const PlanOutcome* shown = m_window->shownPlan();
    if (shown && shown->context && shown->context->run && shown->context->run->rows) {
      const auto& run = shown->context->run->rows;
      if (run != m_measuredRun && run->meta.kind == "run" && !run->plans.empty()) {
        setMeasurement(run);
        return;
      }
    }
    // The views keep the overlay across plans: only a change of whether the plan shown is the
    // run's replaces it (a budget drag passes over many plans that are not).
    if (showsMeasuredPlan() == m_overlayShown) return;
    applyMeasurement();
  });
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
  if (!m_dock) {
    m_dock = new QDockWidget(tr("Run"), m_window);
    m_dock->setObjectName("run-dock");
    m_panel = new LiveRunPanel(m_dock);
    m_dock->setWidget(m_panel);
    m_window->addDockWidget(Qt::BottomDockWidgetArea, m_dock);
  }
  m_live = {};
  m_panel->setData(m_live);
  m_dock->setWindowTitle(title);
  m_dock->show();
  m_progress->reset();
  m_progress->setWindowTitle(title);
  m_progress->setLabelText(tr("Starting..."));
  m_progress->setRange(0, 0);  // busy until the first iteration ends
  m_progress->setValue(0);
  m_progress->show();
}

void RunController::onProgress(const collect::RunProgress& p) {
  if (m_panel) {
    addLiveReport(m_live, p.k, p.iteration, p.iteration_seconds, p.rows.get());
    m_panel->setData(m_live);
  }
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
  QString warning =
      outcome.warning.isEmpty() ? QString() : tr("; warning: %1").arg(outcome.warning);
  // --force's earlier database, kept where this run did not replace it.
  if (!outcome.kept.isEmpty()) warning += QStringLiteral("; ") + outcome.kept;
  if (outcome.status == store::RunStatus::Complete) {
    m_window->statusBar()->showMessage(tr("wrote %1 (complete)%2").arg(outcome.db, warning));
    if (m_kind == Kind::Profile) m_window->openDatabase(outcome.db);  // ready to plan
    if (m_kind == Kind::Plan && !m_closeWhenDone) openMeasurement(outcome.db);
  } else if (outcome.status == store::RunStatus::Incomplete) {
    m_window->statusBar()->showMessage(
        tr("wrote %1 (incomplete: %2)%3").arg(outcome.db, outcome.message, warning));
    // The iterations it recorded are a measurement too.
    if (m_kind == Kind::Plan && !m_closeWhenDone) openMeasurement(outcome.db);
  } else if (!m_closeWhenDone) {
    auto* box = new QMessageBox(
        QMessageBox::Warning,
        m_kind == Kind::Profile ? tr("The profile failed") : tr("The run failed"),
        outcome.created
            ? tr("%1\n\n%2 is marked failed.%3")
                  .arg(outcome.message, outcome.db,
                       outcome.kept.isEmpty() ? QString() : QStringLiteral("\n") + outcome.kept)
            : outcome.message,
        QMessageBox::Ok, m_window);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
  }
  emit jobFinished(outcome);
  if (m_closeWhenDone) m_window->close();
}

void RunController::claimOutput(const std::string& db) {
  // Never a file the window reads, whatever the replace question's answer (an existing file
  // the user did not agree to replace is the engine's refusal, reported as the job's); once the
  // job starts, its database is one of them.
  files::checkOutputPath(db, "the run database", m_window->outputRules(/*force=*/true));
  m_window->inputs().addDatabase(qs(db), "the run database a job writes");
}

void RunController::startProfile(ProfileJob job) {
  claimOutput(job.db);
  m_closeWhenDone = false;
  const QString title = tr("Profiling %1").arg(qs(job.network->name()));
  m_job->startProfile(std::move(job));
  showProgress(title, Kind::Profile);
}

void RunController::startPlanShown(const QString& db, int iterations, int warmup, bool force,
                                   const std::string& device) {
  if (!m_window->shownPlan()) throwBadInput("no plan is shown: open a run database to plan first");
  claimOutput(db.toStdString());
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
  // The CLI commands that do the same: `plan` writes the plan shown (the same file for the same
  // inputs), `run` runs it on the device without a collector, as the app does.
  const PlanOutcome& shown = *m_window->shownPlan();
  const perf::PlanRequest& r = shown.request;
  const std::string planFile =
      (QFileInfo(db).path() + "/" + QFileInfo(db).completeBaseName() + ".plan.json").toStdString();
  const std::vector<std::string> net =
      job.network ? networkArgs(*job.network) : std::vector<std::string>{};
  std::vector<std::string> planArgs = {"--db",     shown.context->run->path,
                                       "--budget", std::to_string(r.budget),
                                       "--policy", std::string(policyName(r.policy))};
  if (r.batch) {
    planArgs.insert(planArgs.end(), {"--batch", std::to_string(*r.batch)});
  } else {
    planArgs.insert(planArgs.end(), {"--mode", std::string(perf::planModeName(r.mode))});
  }
  planArgs.insert(planArgs.end(), net.begin(), net.end());
  if (r.gpus > 1) {
    planArgs.insert(planArgs.end(), {"--gpus", std::to_string(r.gpus), "--link-bandwidth",
                                     std::to_string(static_cast<std::int64_t>(r.link_bandwidth))});
  }
  if (r.dataset_size > 0) {
    std::ostringstream epochs;
    epochs << r.epochs;
    planArgs.insert(planArgs.end(),
                    {"--epochs", epochs.str(), "--dataset-size", std::to_string(r.dataset_size)});
  }
  planArgs.insert(planArgs.end(), {"--out", planFile});
  std::vector<std::string> args = {"--plan", planFile};
  args.insert(args.end(), net.begin(), net.end());
  args.insert(args.end(),
              {"--device", device, "--collector", "off", "--iters", std::to_string(iterations),
               "--warmup", std::to_string(warmup), "--db", job.db});
  if (force) args.push_back("--force");
  job.command_line =
      cli::quotedCommandLine("plan", planArgs) + " && " + cli::quotedCommandLine("run", args);
  m_job->startPlan(std::move(job));
  m_planFile = plan;
  showProgress(tr("Running the plan"), Kind::Plan);
}

void RunController::askProfile() {
  if (m_job->running()) return;
  RunForm f(m_window, tr("Profile"), tr("Profile"), 3, "profile.swapdb");
  auto* network = new QComboBox(&f.dialog);
  for (const ZooEntry& e : zooEntries())
    network->addItem(qs(e.name));
  network->setCurrentText("fmnist-cnn");
  auto* budget = new QLineEdit("256MiB", &f.dialog);
  auto* maxBatch = new QSpinBox(&f.dialog);
  maxBatch->setRange(0, static_cast<int>(kMaxBatch));  // the limit of every verb
  maxBatch->setValue(128);
  maxBatch->setSpecialValueText(tr("no cap"));
  f.form->addRow(tr("Network"), network);
  f.form->addRow(tr("Budget"), budget);
  f.addCommonRows(tr("Recorded iterations per k"), tr("Warm-up iterations per k"));
  f.form->insertRow(f.form->rowCount() - 2, tr("Largest k"), maxBatch);
  while (f.dialog.exec() == QDialog::Accepted) {
    try {
      ProfileJob job;
      const std::string name = network->currentText().toStdString();
      job.network = std::make_shared<const Network>(buildZooModel(name));
      job.config.budget = parseByteSize(budget->text().toStdString(), "the budget");
      job.config.iterations = f.iterations->value();
      job.config.warmup = f.warmup->value();
      job.config.max_batch = maxBatch->value();
      job.device = f.device->currentText().toStdString();
      job.db = f.output->text().toStdString();
      if (job.db.empty()) throwBadInput("choose the run database to write");
      if (!confirmOutput(&f.dialog, f.output->text(), job.force)) continue;
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
      QMessageBox::warning(&f.dialog, tr("Cannot profile"), qs(e.what()));
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
  RunForm f(m_window, tr("Run plan"), tr("Run"), 5, "run.swapdb");
  f.addCommonRows(tr("Measured iterations"), tr("Warm-up iterations"));
  while (f.dialog.exec() == QDialog::Accepted) {
    try {
      bool force = false;
      if (f.output->text().isEmpty()) throwBadInput("choose the run database to write");
      if (!confirmOutput(&f.dialog, f.output->text(), force)) continue;
      startPlanShown(f.output->text(), f.iterations->value(), f.warmup->value(), force,
                     f.device->currentText().toStdString());
      return;
    } catch (const Error& e) {
      QMessageBox::warning(&f.dialog, tr("Cannot run the plan"), qs(e.what()));
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
