// SPDX-License-Identifier: MIT
#include "gui/run_dialog.h"

#include <qcustomplot.h>
#include <QCloseEvent>
#include <QComboBox>
#include <QCoreApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
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
#include <QThreadPool>
#include <cmath>
#include <sstream>

#include "cli/run_output.h"
#include "common/batch_limit.h"
#include "common/bytes.h"
#include "common/error.h"
#include "common/files.h"
#include "common/format.h"
#include "graph/zoo.h"
#include "gui/main_window.h"
#include "gui/off_thread.h"
#include "runtime/device.h"
#include "views/memory_chart_data.h"
#include "views/plan_view.h"
#include "views/streams_data.h"

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

/// What the Profile and Run plan dialogs share: the device (the backends this build can use
/// here), recorded and warm-up iterations, the run database and the buttons. A dialog adds its
/// own rows to `form` before addCommonRows.
struct RunForm {
  RunForm(QWidget* parent, const QString& title, const QString& ok, int iterationsDefault,
          const QString& dbName)
      : dialog(parent),
        form(new QFormLayout(&dialog)),
        device(new QComboBox(&dialog)),
        iterations(new QSpinBox(&dialog)),
        warmup(new QSpinBox(&dialog)),
        output(new QLineEdit(QDir::current().filePath(dbName), &dialog)),
        buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog)) {
    dialog.setWindowTitle(title);
    for (const rt::BackendInfo& b : rt::listBackends()) {
      if (b.available) device->addItem(qs(b.name));
    }
    iterations->setRange(1, 100000);
    iterations->setValue(iterationsDefault);
    warmup->setRange(0, 1000);
    warmup->setValue(1);
    buttons->button(QDialogButtonBox::Ok)->setText(ok);
    QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  }
  /// Device, iterations, warm-up, the run database and the buttons, after the dialog's rows.
  void addCommonRows(const QString& iterationsLabel, const QString& warmupLabel) {
    form->addRow(QObject::tr("Device"), device);
    form->addRow(iterationsLabel, iterations);
    form->addRow(warmupLabel, warmup);
    form->addRow(QObject::tr("Run database"), outputRow(&dialog, output));
    form->addRow(buttons);
  }

  QDialog dialog;
  QFormLayout* form;
  QComboBox* device;
  QSpinBox* iterations;
  QSpinBox* warmup;
  QLineEdit* output;
  QDialogButtonBox* buttons;
};

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
    for (const std::int64_t d : net.sampleShape().dims)
      shape += (shape.empty() ? "" : "x") + std::to_string(d);
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

QCustomPlot* livePlot(QWidget* parent, const QString& title, const QString& x, const QString& y) {
  auto* plot = new QCustomPlot(parent);
  plot->setMinimumSize(260, 180);
  plot->plotLayout()->insertRow(0);
  plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, title));
  plot->xAxis->setLabel(x);
  plot->yAxis->setLabel(y);
  return plot;
}

const QColor kBatchColors[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e),
                               QColor(0x2c, 0xa0, 0x2c), QColor(0xd6, 0x27, 0x28),
                               QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b)};

}  // namespace

LiveRunPanel::LiveRunPanel(QWidget* parent)
    : QWidget(parent),
      m_times(livePlot(this, tr("iteration times"), tr("iteration at k"), tr("ms"))),
      m_pool(livePlot(this, tr("pool bytes, latest iteration"), tr("ms"), tr("MiB"))),
      m_stalls(livePlot(this, tr("compute idle before each step"), tr("step"), tr("ms"))) {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_times, 1);
  layout->addWidget(m_pool, 1);
  layout->addWidget(m_stalls, 1);
  m_times->legend->setVisible(true);
  m_times->legend->setFont(QFont(font().family(), font().pointSize() - 1));
  auto* pool = m_pool->addGraph();
  pool->setLineStyle(QCPGraph::lsStepLeft);
  pool->setPen(QPen(QColor(0x1f, 0x1f, 0x1f), 1.5));
  auto* bars = new QCPBars(m_stalls->xAxis, m_stalls->yAxis);
  bars->setPen(Qt::NoPen);
  bars->setBrush(QColor(0xd0, 0x18, 0x18));
}

void LiveRunPanel::setData(const LiveRunData& d) {
  // A new run starts from nothing; then each report appends its iteration's point, and only a
  // newly recorded iteration redraws the pool bytes and the stalls.
  if (m_times->graphCount() > static_cast<int>(d.times.size())) m_times->clearGraphs();
  for (std::size_t i = 0; i < d.times.size(); ++i) {
    const LiveRunData::Batch& b = d.times[i];
    QCPGraph* g =
        static_cast<int>(i) < m_times->graphCount() ? m_times->graph(static_cast<int>(i)) : nullptr;
    if (!g) {
      g = m_times->addGraph();
      g->setName(tr("k = %1").arg(b.k));
      const QColor c = kBatchColors[i % std::size(kBatchColors)];
      g->setPen(QPen(c, 1.5));
      g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 5));
    }
    QVector<double> x, y;
    for (std::size_t j = static_cast<std::size_t>(g->dataCount()); j < b.seconds.size(); ++j) {
      x.push_back(b.iteration[j]);
      y.push_back(b.seconds[j] * 1e3);
    }
    if (!x.isEmpty()) g->addData(x, y, /*alreadySorted=*/true);
  }
  m_times->rescaleAxes();
  m_times->yAxis->setRangeLower(0);
  m_times->replot();
  if (d.k == m_shownK && d.iteration == m_shownIteration) return;
  m_shownK = d.k;
  m_shownIteration = d.iteration;
  QVector<double> t(d.pool_ms.begin(), d.pool_ms.end()), mib;
  for (const double b : d.pool_bytes)
    mib.push_back(b / (1024.0 * 1024.0));
  m_pool->graph(0)->setData(t, mib, true);
  m_pool->rescaleAxes();
  m_pool->yAxis->setRangeLower(0);
  static_cast<QCPTextElement*>(m_pool->plotLayout()->element(0, 0))
      ->setText(d.iteration < 0 ? tr("pool bytes, latest iteration")
                                : tr("pool bytes, k = %1, iteration %2").arg(d.k).arg(d.iteration));
  m_pool->replot();
  auto* bars = static_cast<QCPBars*>(m_stalls->plottable(0));
  bars->setData(QVector<double>(d.stall_steps.begin(), d.stall_steps.end()),
                QVector<double>(d.stall_ms.begin(), d.stall_ms.end()));
  static_cast<QCPTextElement*>(m_stalls->plotLayout()->element(0, 0))
      ->setText(tr("compute idle before each step, latest iteration: %1 ms in all")
                    .arg(d.stall_total_ms, 0, 'f', 2));
  m_stalls->rescaleAxes();
  m_stalls->yAxis->setRangeLower(0);
  m_stalls->replot();
}

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
    if (shown && shown->context && shown->context->run && shown->context->run->run) {
      const auto& run = shown->context->run->run;
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

void RunController::openMeasurement(const QString& path) {
  const quint64 generation = ++m_measurementGeneration;
  runOffGuiThread(
      QThreadPool::globalInstance(), this,
      [file = path.toStdString()] { return store::RunReader(file).load(); },
      [generation](RunController& self, std::shared_ptr<const store::RunData> run,
                   const QString& error) {
        if (generation != self.m_measurementGeneration) return;  // a newer one
        if (!run) {
          self.m_window->statusBar()->showMessage(error);
          emit self.measurementFailed(error);
          return;
        }
        self.setMeasurement(std::move(run));
      });
}

void RunController::setMeasurement(std::shared_ptr<const store::RunData> run) {
  m_measuredRun = std::move(run);
  m_check = perf::planCheck(*m_measuredRun);
  m_measuredPlan.reset();
  if (m_check) {
    try {
      m_measuredPlan = store::planFromJson(nlohmann::json::parse(m_measuredRun->plans.back().json),
                                           m_measuredRun->path + " (table plans)");
    } catch (const std::exception& e) {
      m_window->statusBar()->showMessage(QString::fromStdString(e.what()));
      m_check.reset();
    }
  }
  applyMeasurement();
}

bool RunController::showsMeasuredPlan() const {
  const PlanOutcome* shown = m_window->shownPlan();
  if (!m_measuredPlan || !m_check || !shown || !shown->views || !shown->result ||
      !shown->result->trainable)
    return false;
  const store::PlanFile& m = *m_measuredPlan;
  // What is at hand first: the plan file is made only for a plan of the run's budget and k.
  if (shown->request.budget != m.budget || policyName(shown->request.policy) != m.policy ||
      shown->result->best.k != m.k)
    return false;
  // The plan shown is the plan the run ran: the same network, budget, policy, k and swap set.
  const std::optional<store::PlanFile> file = shown->planFile();
  return file && file->structure_hash == m.structure_hash && file->swap_set == m.swap_set;
}

void RunController::applyMeasurement() {
  if (!m_measuredRun) return;
  const store::RunData& run = *m_measuredRun;
  const bool same = showsMeasuredPlan();
  auto overlay = std::make_shared<MeasuredOverlay>();
  if (same) {
    const PlanViews& views = *m_window->shownPlan()->views;
    // The measured series and iteration are checked against, and added to, copies of the plan
    // shown's: made once, while the plan shown stays the run's.
    MemoryChartData chart = *views.get<MemoryChartData>();
    if (addMeasuredMemory(chart, run, m_check->k)) overlay->memory = std::move(chart.series.back());
    StreamsData streams = *views.get<StreamsData>();
    if (addMeasuredStreams(streams, run, m_check->k)) {
      streams.bars.clear();  // only the measured iteration is the overlay's
      streams.stalls.clear();
      overlay->streams = std::move(streams);
    }
    addMeasuredSummary(overlay->summary, *m_check, run);
  } else if (!m_measuredPlan || !m_check) {
    overlay->summary.warnings.push_back(
        run.path + " recorded no plan with a measured iteration: " + "nothing to overlay");
  } else {
    const store::PlanFile& p = *m_measuredPlan;
    overlay->summary.warnings.push_back("the measurement in " + run.path + " is of another plan (" +
                                        p.network_name + ", " + p.policy + ", " +
                                        formatBytes(p.budget) + ", k = " + std::to_string(p.k) +
                                        "): plan that to overlay it");
  }
  // Another device than the plan's is said whichever plan is shown (addMeasuredSummary says it
  // with the measurement).
  if (!same && m_check && !m_check->device_mismatch.empty())
    overlay->summary.warnings.push_back("device: " + m_check->device_mismatch);
  // One value, shared by the views that draw it (Memory, Streams and Summary).
  for (PlanView* view : m_window->planViews())
    if (view) view->setOverlay(overlay);
  m_overlayShown = same;
  emit measurementApplied();
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
