// SPDX-License-Identifier: MIT
/// @brief What every plan view (Memory, Streams, Trade-off, Layers, Model, Summary) is to the
/// window: a widget named after its `--view` choice that draws the plan shown, may draw a run's
/// measurement over it, highlights one selected layer and says when the user picks one. The
/// window holds its plan views through this interface only; the table of views
/// (app/gui/view_registry.h) makes them and builds what each draws.
#pragma once

#include <QString>
#include <QWidget>
#include <any>
#include <memory>

#include "perfmodel/planner.h"

namespace swapscope {

struct MeasuredOverlay;

/// The plan shown, as a plan view is given it: the request, the planner's result and what the
/// view's row of the table built from them on the worker that planned (its own data type, e.g.
/// MemoryChartData; empty for a view that builds nothing per plan).
struct ShownPlan {
  const perf::PlanRequest& request;
  const perf::PlanResult& result;
  const std::any& data;
};

class PlanView : public QWidget {
  Q_OBJECT
 public:
  using QWidget::QWidget;

  /// The view's `--view` choice (its row's name).
  QString name() const { return objectName(); }
  /// Draws `plan` in place of the plan drawn before.
  virtual void setPlan(const ShownPlan& plan) = 0;
  /// A run's measurement, drawn over every plan until replaced; null removes it. A view that
  /// draws no measurement ignores it.
  virtual void setOverlay(std::shared_ptr<const MeasuredOverlay> overlay);

 public slots:
  /// Highlights `layer` (-1 clears) without emitting layerSelected. A view without layers
  /// ignores it.
  virtual void selectLayer(int layer);

 signals:
  /// The user picked `layer` in this view.
  void layerSelected(int layer);
};

}  // namespace swapscope
