// SPDX-License-Identifier: MIT
/// @brief The model view: what the performance model was fitted to and how well it fits. A combo
/// box picks the PCIe page or one fitted group (a layer type or a layer, in one direction).
/// - A group: above, time (ms) against work (FLOPs or bytes) on log-log axes, the measured
///   medians coloured by k, the chosen form as a solid line and the other two forms dashed
///   (the legend gives each form's cross-validated and largest error); below, the chosen form's
///   residuals, (predicted - measured) / measured in %.
/// - PCIe: above, each direction's recorded copies as time (ms) against size (MiB), filled where
///   the copy ran alone and hollow where the other direction was busy, with the fitted line and
///   that line slowed by the duplex factor; below, the residuals of the lone copies.
///
/// Wiring (for the main window):
/// - `setData(makeModelData(run, model))` when a database is loaded (the model does not move
///   with the budget); `setPlannedNetwork(net)` when the planned network changes, so that
///   selection maps between its layer ids and the run's layers.
/// - `selectLayer(int)` (a layer id of the planned network) shows that layer's own group when
///   the planned network is the profiled one, else its type's group, and rings its points;
///   nothing is emitted. Clicking a measured point of the profiled network emits
///   `layerSelected(id)`.
/// - `plot()` is the QCustomPlot to save. Zoom: drag and wheel; a double click fits again. The
///   zoom of a page is kept while setData brings the same run again.
#pragma once

#include <optional>

#include "graph/network.h"
#include "views/model_data.h"
#include "views/plan_view.h"

class QComboBox;
class QCustomPlot;
class QCPAxisRect;
class QCPAbstractPlottable;
class QMouseEvent;

namespace swapscope {

class ModelView : public PlanView {
  Q_OBJECT
 public:
  explicit ModelView(QWidget* parent = nullptr);

  void setData(const ModelData& data);
  void setPlannedNetwork(const Network& net);
  /// Nothing: the model's fit does not move with the plan.
  void setPlan(const ShownPlan& plan) override;
  const ModelData& data() const { return m_data; }
  /// Shows a page: -1 the PCIe page, else the index into data().groups.
  void showPage(int group);
  int currentPage() const { return m_page; }
  QCustomPlot* plot() const { return m_plot; }
  QComboBox* pageBox() const { return m_box; }
  /// Measured points drawn on the current page (for tests).
  int measuredPointsDrawn() const;

 public slots:
  void selectLayer(int layer) override;

 private:
  void draw();
  void drawGroup(const ModelGroupData& g);
  void drawPcie();
  void onClick(QCPAbstractPlottable* plottable, int dataIndex, QMouseEvent* event);

  QComboBox* m_box;
  QCustomPlot* m_plot;
  QCPAxisRect* m_main = nullptr;
  QCPAxisRect* m_residuals = nullptr;
  ModelData m_data;
  std::optional<Network> m_planned;
  bool m_plannedIsProfiled = false;
  int m_page = -1;
  int m_selectedRunLayer = -1;
  bool m_keepRange = false;
};

}  // namespace swapscope
