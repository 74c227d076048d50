// SPDX-License-Identifier: MIT
// RunController's measurement: a run of a plan read off the GUI thread and overlaid on the plan
// views while the plan shown is the plan it ran (or the Summary says which plan it ran).
#include <QStatusBar>
#include <QThreadPool>

#include "common/bytes.h"
#include "gui/main_window.h"
#include "gui/off_thread.h"
#include "gui/run_controller.h"
#include "views/measured_overlay.h"
#include "views/memory_chart_data.h"
#include "views/plan_view.h"
#include "views/streams_data.h"

namespace swapscope::gui {

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

}  // namespace swapscope::gui
