// SPDX-License-Identifier: MIT
/// @brief The table of the window's views, one row each, in tab order: its `--view` choice, its
/// tab, and how it is made. A plan view (views/plan_view.h) is made by the window and draws every
/// plan shown from what its row builds on the worker that planned; a recorded-run view
/// (Timeline, Compare) is MeasuredViews' widget. The window's tabs, `--view`'s choices and its
/// messages, Save figure, the screenshot tests (tests/CMakeLists.txt reads the names from
/// view_registry.cpp) and docs/gui.md's list of views (a test compares them) follow this table.
#pragma once

#include <QString>
#include <QStringList>
#include <any>
#include <vector>

#include "perfmodel/planner.h"

class QWidget;

namespace swapscope {
class PlanView;
}

namespace swapscope::gui {

struct PlanContext;
class MeasuredViews;

struct ViewRow {
  const char* name = "";   ///< the `--view` choice and Save figure's file name
  const char* title = "";  ///< the tab
  /// A plan view: makes it (the window owns it). Null for a recorded-run view.
  PlanView* (*make)() = nullptr;
  /// What the plan view draws for one plan (its ShownPlan::data), built on the worker that
  /// planned (Qt-free builders only). Null: the view draws from the request and result alone.
  std::any (*build)(const PlanContext& context, const perf::PlanRequest& request,
                    const perf::PlanResult& result) = nullptr;
  /// Drawn with every plan even while hidden (cheap, and what scripts read); the other plan
  /// views are drawn when shown.
  bool eager = false;
  /// A recorded-run view: MeasuredViews' widget for it.
  QWidget* (*recorded)(MeasuredViews& measured) = nullptr;
};

/// Every view, in tab order.
const std::vector<ViewRow>& viewTable();
/// The rows' names, in tab order (the `--view` choices).
QStringList viewNames();
/// "memory, streams, ... or compare", as --help lists the choices.
QString viewChoices();

}  // namespace swapscope::gui
