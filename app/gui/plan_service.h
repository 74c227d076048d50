// SPDX-License-Identifier: MIT
/// @brief Plans off the GUI thread for the desktop app. One PlanContext (a fitted model, a
/// network and their Planner) at a time; the Planner's methods are const and re-entrant
/// (perfmodel/planner.h), so the worker threads share it without locks.
///
/// requestPlan() while the budget is dragged: at most one plan runs and one waits; a newer
/// request replaces the waiting one, and a result whose sequence number is not the newest is
/// dropped, so planReady() always describes the last request made. requestSweep(): about 64
/// budgets on a log scale from the untrainable minimum to the device memory, planned by a second
/// worker on every core at once (perf::sweep: a budget per core, each the plan it has alone),
/// one sweepPoint() per budget as it is done, in no set order; the sweep waits while
/// a requested plan is waiting or running (between its budgets, and inside a budget's plan at the
/// planner's pause points: PlanRequest::pause_point), so that it never slows the plan the user is
/// looking at. Once the budget has settled (no new plan for kCurveSettleMs after a fresh plan) a
/// third worker plans the same request at each k of a grid (the trade-off view's t_iter against k);
/// like plans, only the newest such request is kept.
#pragma once

#include <QObject>
#include <QTimer>
#include <atomic>
#include <memory>
#include <optional>

#include "gui/workbench_types.h"

class QThreadPool;

namespace swapscope::gui {

/// The plan `recorded` (what a run database ran: its k and swap set) for `request`, when the
/// request asks for its policy, budget and k (a fixed k) of the network it was made for
/// (`context` not transferred): the planner's plan at that k when its swap set is the recorded
/// one, else the recorded swap set simulated at k (perf::Planner::evaluate), so that the plan
/// shown is the plan the run ran even where a model fitted to other measurements would choose
/// another. The planner's plan where the recorded one cannot be simulated (a recompute set
/// the planner's plan does not have). nullopt when it does not apply (another request or
/// network, sub-batches): the caller then plans the request.
std::optional<perf::PlanResult> planRecorded(const PlanContext& context,
                                             const perf::PlanRequest& request,
                                             const store::PlanFile& recorded);

class PlanService : public QObject {
  Q_OBJECT
 public:
  explicit PlanService(QObject* parent = nullptr);
  ~PlanService() override;

  /// Builds the context for (run, network) on the worker; contextReady() or contextFailed().
  /// Plans asked for meanwhile wait for it. `network` null: the profiled network.
  void setNetwork(std::shared_ptr<const LoadedRun> run, std::shared_ptr<const Network> network);
  std::shared_ptr<const PlanContext> context() const { return m_context; }

  /// Plans `request` with the current context; returns its sequence number.
  quint64 requestPlan(const perf::PlanRequest& request);
  /// The plan a run database ran (null: none): a request for its policy, budget and k is
  /// answered with it (planRecorded) rather than re-planned, on the network it was made for.
  void setRecordedPlan(std::shared_ptr<const store::PlanFile> plan) {
    m_recorded = std::move(plan);
  }
  /// Whether a requested plan waits or runs.
  bool planning() const { return m_running || m_pending.has_value(); }

  /// Plans `base` at `points` budgets, log-spaced from the context's minimum budget to `top`
  /// (the device memory; when 0, 64 times the minimum). Cancels a sweep in progress; returns
  /// the sweep's number.
  int requestSweep(const perf::PlanRequest& base, std::int64_t top, int points = 64);
  void cancelSweep();

  /// How long the budget must rest before the k curve of its plan is made.
  static constexpr int kCurveSettleMs = 150;

 signals:
  void contextReady();
  void contextFailed(const QString& message);
  void planReady(const swapscope::gui::PlanOutcome& outcome);
  void sweepPoint(const swapscope::gui::SweepPoint& point);
  void sweepFinished(int sweep);
  /// The k curve of the plan of request `seq` (only for the newest plan made).
  void batchCurveReady(const swapscope::gui::BatchCurveOutcome& curve);

 private:
  void startNext();
  void startCurve();

  QThreadPool* m_planPool;
  QThreadPool* m_sweepPool;
  QThreadPool* m_curvePool;
  bool m_curveRunning = false;
  /// The newest plan whose k curve is still to be made.
  std::optional<PlanOutcome> m_curvePending;
  std::shared_ptr<const PlanContext> m_context;
  std::shared_ptr<const store::PlanFile> m_recorded;
  quint64 m_contextGeneration = 0;
  bool m_contextPending = false;
  quint64 m_seq = 0;
  /// m_seq for the workers: a k curve whose plan is no longer the newest stops early.
  std::shared_ptr<std::atomic<quint64>> m_latest = std::make_shared<std::atomic<quint64>>(0);
  bool m_running = false;
  std::optional<std::pair<quint64, perf::PlanRequest>> m_pending;
  std::shared_ptr<std::atomic<int>> m_sweepId;
  /// True while a requested plan waits or runs: the sweep's worker waits meanwhile.
  std::shared_ptr<std::atomic<bool>> m_interactive = std::make_shared<std::atomic<bool>>(false);
  QTimer m_curveSettle;
};

}  // namespace swapscope::gui
