// SPDX-License-Identifier: MIT
/// @brief A QCustomPlot chart of resident memory over the steps of one iteration, one line per
/// policy, with the budget as a horizontal line and the forward/backward turn as a vertical one.
#pragma once

#include <QWidget>

#include "views/memory_chart_data.h"

class QCustomPlot;
class QCPItemStraightLine;

namespace swapscope {

class MemoryChartView : public QWidget {
  Q_OBJECT
 public:
  explicit MemoryChartView(QWidget* parent = nullptr);

  /// Replaces everything drawn.
  void setData(const MemoryChartData& data);
  /// Moves only the budget line (cheap: for dragging).
  void setBudget(std::int64_t budget);

  QCustomPlot* plot() const { return m_plot; }

 private:
  QCustomPlot* m_plot;
  QCPItemStraightLine* m_budgetLine = nullptr;
  QCPItemStraightLine* m_turnLine = nullptr;
  double m_curveTop = 0;  ///< highest point of the curves, MiB
};

}  // namespace swapscope
