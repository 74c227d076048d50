// SPDX-License-Identifier: MIT
#include "gui/run_job.h"

#include <QMetaObject>
#include <QPointer>

#include "common/error.h"
#include "runtime/device.h"

namespace swapscope::gui {

namespace {

/// Where the finished run is, and the earlier database it did not replace.
void recordWhere(const store::RunWriter& writer, JobOutcome& out) {
  out.db = QString::fromStdString(writer.path());
  out.kept = QString::fromStdString(writer.keptNote());
}

}  // namespace

RunJob::RunJob(QObject* parent) : QObject(parent) {}

RunJob::~RunJob() {
  m_cancel.store(true);
  if (m_thread.joinable()) m_thread.join();
}

void RunJob::cancel() {
  m_cancel.store(true);
}

void RunJob::start(
    const std::string& db,
    std::function<void(const collect::RunProgressFn&, const std::atomic<bool>*, JobOutcome&)>
        work) {
  if (m_running) throw Error(ErrorKind::Runtime, "a profile or run is already in progress");
  if (m_thread.joinable()) m_thread.join();  // the previous job's thread, already done
  m_cancel.store(false);
  m_running = true;
  m_thread = std::thread([this, db, work = std::move(work)] {
    const collect::RunProgressFn report = [this](const collect::RunProgress& p) {
      QMetaObject::invokeMethod(
          this, [this, p] { emit progress(p); }, Qt::QueuedConnection);
    };
    JobOutcome out;
    out.db = QString::fromStdString(db);
    try {
      work(report, &m_cancel, out);
      // The status and message as the database records them, where the run is.
      const store::RunMeta meta = store::RunReader(out.db.toStdString()).meta();
      out.status = meta.status;
      out.message = QString::fromStdString(meta.status_message);
    } catch (const std::exception& e) {
      out.status = store::RunStatus::Failed;
      out.message = QString::fromStdString(e.what());
    }
    // The object outlives the thread (its destructor joins), so the call is delivered unless
    // the object is being destroyed, in which case Qt drops it.
    QMetaObject::invokeMethod(
        this,
        [this, out] {
          m_running = false;
          emit finished(out);
        },
        Qt::QueuedConnection);
  });
}

void RunJob::startProfile(ProfileJob job) {
  const std::string db = job.db;
  start(db, [job = std::move(job)](const collect::RunProgressFn& report,
                                   const std::atomic<bool>* cancel, JobOutcome& out) {
    const std::unique_ptr<rt::Device> device = rt::openDevice(job.device);
    // Refused before the file is created: a budget below k = 1, a profile that does not fit.
    collect::checkProfileFits(*device, *job.network, job.config);
    store::RunMeta meta = collect::runMeta(*device, "profile", job.config.budget, "swap-all");
    meta.command_line = job.command_line;
    meta.versions["Swapscope"] = SWAPSCOPE_VERSION;
    store::RunWriter writer(job.db, meta, job.force);
    out.created = true;
    out.db = QString::fromStdString(writer.path());  // the recording name while it replaces
    try {
      collect::runProfile(*device, *job.network, job.config, writer, report, cancel);
    } catch (...) {
      recordWhere(writer, out);
      throw;
    }
    recordWhere(writer, out);
  });
}

void RunJob::startPlan(PlanJob job) {
  const std::string db = job.db;
  start(db, [job = std::move(job)](const collect::RunProgressFn& report,
                                   const std::atomic<bool>* cancel, JobOutcome& out) {
    const store::PlanFile plan = store::readPlanFile(job.plan);
    const Network net =
        job.network ? *job.network : collect::planNetwork(plan, job.plan, "choose the network");
    const SwapSet swapped = collect::planSwapSet(net, plan, job.plan);
    const std::unique_ptr<rt::Device> device = rt::openDevice(job.device);
    out.warning = QString::fromStdString(collect::planDeviceMismatch(plan, *device));
    collect::PlanRun run(*device, net, plan, job.plan, swapped, job.config);
    store::RunMeta meta = collect::runMeta(*device, "run", plan.budget, plan.policy);
    meta.command_line = job.command_line;
    meta.versions["Swapscope"] = SWAPSCOPE_VERSION;
    meta.extra["plan"] = store::planToJson(plan).dump();
    store::RunWriter writer(job.db, meta, job.force);
    out.created = true;
    out.db = QString::fromStdString(writer.path());  // the recording name while it replaces
    try {
      collect::runPlan(run, &writer, report, cancel);
    } catch (...) {
      recordWhere(writer, out);
      throw;
    }
    recordWhere(writer, out);
  });
}

}  // namespace swapscope::gui
