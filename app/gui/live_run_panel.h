// SPDX-License-Identifier: MIT
/// @brief The Run dock's charts, drawn as a profile or a plan's run commits its iterations.
#pragma once

#include <QWidget>
#include <cstdint>

#include "gui/live_run.h"

class QCustomPlot;

namespace swapscope::gui {

/// The Run panel's charts (LiveRunData): iteration times per k, the pool bytes over the latest
/// recorded iteration, and its stalls per step.
class LiveRunPanel : public QWidget {
 public:
  explicit LiveRunPanel(QWidget* parent = nullptr);
  /// Brings the charts up to `data`, which holds what the previous call's did and more (a
  /// progress report's iteration) or less (a new run: drawn from nothing): the new iterations'
  /// points are appended, and the pool and stall charts are redrawn only for a newly recorded
  /// iteration.
  void setData(const LiveRunData& data);
  QCustomPlot* times() const { return m_times; }
  QCustomPlot* pool() const { return m_pool; }
  QCustomPlot* stalls() const { return m_stalls; }

 private:
  QCustomPlot* m_times;
  QCustomPlot* m_pool;
  QCustomPlot* m_stalls;
  /// The recorded iteration the pool and stall charts show (-1: none).
  std::int64_t m_shownK = 0;
  int m_shownIteration = -1;
};

}  // namespace swapscope::gui
