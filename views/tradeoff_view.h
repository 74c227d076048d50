// SPDX-License-Identifier: MIT
/// @brief The trade-off view: two panels on one QCustomPlot.
/// - Left, against the budget (log scale, MiB): the throughput of the plan at each budget of a
///   background sweep, and its chosen k on the right-hand axis; infeasible budgets are grey
///   crosses on the budget axis; a dashed line marks the current budget.
/// - Right, against k at the current budget: t_iter (ms) and, on the right-hand axis, throughput;
///   a dashed line marks the chosen k.
///
/// Wiring (for the main window):
/// - a new network, policy or mode: `clearSweep()`, then `addPoint(budget, k, throughput,
///   feasible)` for each sweep point as it arrives (drawn at once; any order);
/// - every plan shown: `setPlan` (its budget is the current one; an untrainable plan is its
///   reason as the k curve) and, when a BatchCurve is ready (makeBatchCurve, off the GUI thread),
///   `setBatchCurve(curve)`;
/// - clicking a sweep point emits `budgetChosen(budget)` (bytes, exactly a swept budget);
///   clicking a point of the k curve emits `batchChosen(k)`;
/// - it shows no layers: it never emits `layerSelected` and ignores `selectLayer`.
/// - `plot()` is the QCustomPlot to save.
/// Each panel follows its data until the user pans or zooms it; a double click fits it again.
#pragma once

#include "views/plan_view.h"
#include "views/tradeoff_data.h"

class QCustomPlot;
class QCPAxisRect;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;
class QCPAbstractPlottable;
class QMouseEvent;

namespace swapscope {

class TradeoffView : public PlanView {
  Q_OBJECT
 public:
  explicit TradeoffView(QWidget* parent = nullptr);

  void clearSweep();
  void addPoint(std::int64_t budget, std::int64_t k, double throughput, bool feasible);
  void addPoint(const SweepPoint& p) { addPoint(p.budget, p.k, p.throughput, p.feasible); }
  void setCurrentBudget(std::int64_t budget);
  void setBatchCurve(const BatchCurve& curve);
  /// The plan's budget is the current one; an untrainable plan's reason is the k curve.
  void setPlan(const ShownPlan& plan) override;

  const TradeoffSweep& sweep() const { return m_sweep; }
  const BatchCurve& batchCurve() const { return m_curve; }
  QCustomPlot* plot() const { return m_plot; }
  /// Points drawn (for tests): feasible and infeasible sweep points, and k curve points.
  int sweepPointsDrawn() const;
  int batchPointsDrawn() const;

 signals:
  void budgetChosen(qint64 budget);
  void batchChosen(qint64 k);

 private:
  void redrawSweep();
  void fitSweep();
  void fitCurve();
  void onClick(QCPAbstractPlottable* plottable, int dataIndex, QMouseEvent* event);

  QCustomPlot* m_plot;
  QCPAxisRect* m_left = nullptr;
  QCPAxisRect* m_right = nullptr;
  QCPGraph* m_throughput = nullptr;   ///< left: feasible sweep points
  QCPGraph* m_k = nullptr;            ///< left, right-hand axis: chosen k
  QCPGraph* m_infeasible = nullptr;   ///< left: crosses at the bottom
  QCPGraph* m_tIter = nullptr;        ///< right: t_iter against k
  QCPGraph* m_kThroughput = nullptr;  ///< right, right-hand axis: throughput against k
  QCPItemStraightLine* m_budgetLine = nullptr;
  QCPItemStraightLine* m_kLine = nullptr;
  QCPItemText* m_curveMessage = nullptr;
  QString m_curveMessageText;  ///< in one line; wrapped to the k chart's width at each layout
  TradeoffSweep m_sweep;
  BatchCurve m_curve;
  std::int64_t m_budget = 0;
  bool m_autoLeft = true, m_autoRight = true, m_settingRange = false;
};

}  // namespace swapscope
