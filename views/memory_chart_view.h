// SPDX-License-Identifier: MIT
/// @brief A QCustomPlot chart of resident memory over the 2N steps of one iteration: the chosen
/// plan's curve, keep-all and swap-all as thin references, the budget as a horizontal line, the
/// forward/backward turn as a vertical one, and each swapped FM's span off the device shaded
/// (stacked, one band per FM of the FM's height, from its release to its prefetch), then each
/// recomputed FM's span from its release to its re-making, in its own colour.
/// The legend sits above the plot, so it never hides the budget line. The axes follow the data
/// (a budget more than 1.5 times the highest curve is named above the chart, not drawn to
/// scale) until the user zooms or drags; from then on they stay put (double-click to fit
/// again).
#pragma once

#include <QPoint>
#include <memory>
#include <vector>

#include "views/measured_overlay.h"
#include "views/memory_chart_data.h"
#include "views/plan_view.h"

class QCustomPlot;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;
class QMouseEvent;

namespace swapscope {

class MemoryChartView : public PlanView {
  Q_OBJECT
 public:
  explicit MemoryChartView(QWidget* parent = nullptr);

  /// Replaces everything drawn.
  void setData(const MemoryChartData& data);
  /// setData with the plan's MemoryChartData.
  void setPlan(const ShownPlan& plan) override;
  /// A run's measurement (its `memory` series: the measured pool bytes), drawn over every
  /// plan's curves of as many steps until replaced; null removes it.
  void setOverlay(std::shared_ptr<const MeasuredOverlay> overlay) override;
  /// What is drawn: the plan's chart with the measured series, when there is one.
  const MemoryChartData& data() const { return m_data; }
  /// Moves only the budget line (cheap: for dragging).
  void setBudget(std::int64_t budget);

  QCustomPlot* plot() const { return m_plot; }
  /// Shaded swap spans of the data (one per swapped FM): what the next replot draws.
  int spanCount() const { return static_cast<int>(m_data.spans.size()); }
  /// Spans the last replot drew, and of those, the selected layer's.
  int drawnSpans() const;
  int drawnSelectedSpans() const;
  /// Of the spans the last replot drew, the recomputed FMs' (drawn in their own colour).
  int drawnRecomputedSpans() const;
  /// The layer highlighted, or -1.
  int selectedLayer() const { return m_selected; }
  /// Whether the user has zoomed or dragged (the axes no longer follow the data).
  bool userZoomed() const { return m_userZoomed; }
  /// The note written across the chart (why the budget is untrainable), as the next replot
  /// draws it: broken into lines that fit the axis rect; empty when there is none.
  QString noteText() const;

 public slots:
  void selectLayer(int layer) override;

 private:
  void fitAxes();
  /// The budget is far above the curves (more than kBudgetHeadroom times their top): the axis
  /// does not follow it.
  bool budgetAboveChart() const;
  static constexpr double kBudgetHeadroom = 1.5;
  void onClick(QMouseEvent* event);
  /// Breaks the note into lines that fit the axis rect's width now.
  void wrapNote();
  static constexpr int kNoteMargin = 8;

  QCustomPlot* m_plot;
  QCPItemStraightLine* m_budgetLine = nullptr;
  QCPItemStraightLine* m_turnLine = nullptr;
  QCPItemText* m_note = nullptr;
  QString m_noteText;                    ///< the note in one line, as the data gives it
  QCPItemText* m_budgetAbove = nullptr;  ///< "budget ... above" when the line is off the chart
  QCPGraph* m_budgetKey = nullptr;       ///< the budget's legend entry (an empty graph)
  std::vector<QCPItemStraightLine*> m_selectionLines;
  class SpanLayer;
  SpanLayer* m_spanLayer = nullptr;  ///< draws the spans (owned by the plot)
  MemoryChartData m_data;            ///< with the measured series
  MemoryChartData m_plan;            ///< as set
  std::shared_ptr<const MeasuredOverlay> m_overlay;
  double m_curveTop = 0;  ///< highest point of the curves, MiB
  int m_selected = -1;
  bool m_userZoomed = false;
  QPoint m_pressPos;
};

}  // namespace swapscope
