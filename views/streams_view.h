// SPDX-License-Identifier: MIT
/// @brief The streams view: the simulated iteration of a plan as three lanes (compute, swap-out,
/// swap-in) on a QCustomPlot, one rectangle per step and per transfer (drawn by one layerable
/// in a few batched calls: thousands of QCustomPlot items took most of a redraw), every t_ready
/// stall marked in red with its duration. It draws a StreamsData (views/streams_data.h) and nothing
/// else.
///
/// Wiring (for the main window):
/// - `setData(makeStreamsData(net, planResult, &model, &planner.costs()))` on every planReady;
///   when the new data's network_key equals the previous one (only the budget, k or policy
///   moved), the time axis keeps the user's zoom; a double click fits the whole iteration again.
/// - `layerSelected(int)` is emitted when the user clicks a bar of a layer (a step, or a transfer
///   of that layer's FM); `selectLayer(int)` outlines that layer's bars without emitting
///   anything (-1 clears). Connect both ways with the other views.
/// - `plot()` is the QCustomPlot to save (savePng / savePdf / toPixmap).
/// Interactions: drag and wheel pan and zoom the time axis; hovering a bar or a stall shows the
/// layer, step, direction, start, finish and stall.
#pragma once

#include <memory>
#include <vector>

#include "views/measured_overlay.h"
#include "views/plan_view.h"
#include "views/streams_data.h"

class QCustomPlot;
class QCPItemRect;
class QCPLayerable;
class QCPItemText;
class QCPTextElement;
class QMouseEvent;

namespace swapscope {

class StreamsView : public PlanView {
  Q_OBJECT
 public:
  explicit StreamsView(QWidget* parent = nullptr);

  /// Replaces what is drawn; keeps the time axis's zoom while the network stays the same.
  void setData(const StreamsData& data);
  /// setData with the plan's StreamsData.
  void setPlan(const ShownPlan& plan) override;
  /// A run's measurement (its `streams`: the measured_* fields of addMeasuredStreams), its
  /// iteration drawn beside every plan's simulated one until replaced; null removes it.
  void setOverlay(std::shared_ptr<const MeasuredOverlay> overlay) override;
  /// The plan's data as set (the measured iteration is the overlay's: measured()).
  const StreamsData& data() const { return m_data; }
  /// The measured iteration drawn (hasMeasured() false when there is none).
  const StreamsData& measured() const { return measuredStreams(m_overlay.get()); }
  QCustomPlot* plot() const { return m_plot; }
  /// For tests: the stall markers and the offload + prefetch bars the last replot drew.
  int stallMarkerCount() const;
  int transferBarCount() const;
  /// For tests: the measured iteration's bars (every kind) and stall markers the last replot drew.
  int measuredBarCount() const;
  int measuredStallCount() const;
  /// The tooltip text for a point in plot coordinates (time in ms, lane value); empty when the
  /// point is over no bar or stall.
  QString toolTipAt(double timeMs, double laneValue, double slackMs = 0) const;

 public slots:
  void selectLayer(int layer) override;

 private:
  void onMouseMove(QMouseEvent* event);
  void onMousePress(QMouseEvent* event);
  void onMouseRelease(QMouseEvent* event);
  void fitAll();
  void placeStallLabels();

  QCustomPlot* m_plot;
  StreamsData m_data;  ///< the plan's
  std::shared_ptr<const MeasuredOverlay> m_overlay;
  bool m_measuredLabel = false;    ///< the time axis is labelled for the overlay
  QCPLayerable* m_bars = nullptr;  ///< draws m_data's and the overlay's bars and stalls
  std::vector<QCPItemText*> m_stallLabels;
  QCPTextElement* m_title = nullptr;
  QCPItemText* m_message = nullptr;  ///< "untrainable: ..." when there is no plan
  QString m_messageText;             ///< in one line; wrapped to the chart's width at each layout
  int m_selected = -1;
  bool m_autoRange = true;  ///< the time axis follows t_iter until the user zooms
  bool m_settingRange = false;
  QPoint m_pressPos;
};

}  // namespace swapscope
