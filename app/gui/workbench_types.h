// SPDX-License-Identifier: MIT
/// @brief The values the desktop app's services pass between threads: a loaded run database, a
/// planning context (one fitted model and one network with their planner) and a plan. All are
/// immutable once made and shared by pointer, so a worker thread and the GUI thread can hold the
/// same one.
#pragma once

#include <QMetaType>
#include <QString>
#include <any>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/network_analysis.h"
#include "graph/network.h"
#include "perfmodel/model.h"
#include "perfmodel/planner.h"
#include "store/plan_file.h"
#include "store/run_db.h"
#include "views/model_data.h"
#include "views/tradeoff_data.h"

namespace swapscope::gui {

/// A run database read on a worker thread: its rows, the performance model fitted to them and
/// the network it profiled.
struct LoadedRun {
  std::string path;                            ///< as the user named it (the plan file's source_db)
  std::shared_ptr<const store::RunData> rows;  ///< the database's tables
  std::shared_ptr<const perf::PerfModel> model;
  std::shared_ptr<const Network> network;
  /// What the Model view draws: the model's fit to the run (it does not move with the budget).
  std::shared_ptr<const ModelData> model_view;
  /// A profile recorded on a busy machine: what the Summary warns (perf::stabilityWarning).
  std::string profile_warning;
  /// A profile that did not finish: what the Summary warns (perf::unfinishedProfileWarning).
  std::string unfinished_warning;
  /// A database that is not a profile (a plan's run): what the Summary and the dock warn, as
  /// `swapscope plan` does (perf::notAProfileWarning); empty for a profile.
  std::string not_profile_warning;
};

/// One fitted model and one network, with what every plan for them shares: the planner (whose
/// methods are const and re-entrant) and the analyzer's keep-all and swap-all plans.
struct PlanContext {
  std::shared_ptr<const LoadedRun> run;
  std::shared_ptr<const Network> network;
  bool transferred = false;  ///< the network is not the one the database profiled
  NetworkAnalysis analysis;
  std::unique_ptr<const perf::Planner> planner;  ///< refers to *run->model and *network
  std::int64_t device_memory = 0;                ///< the profile's device, or 0 when unknown

  /// Builds the planner and the analysis; Error as the engine throws it.
  static std::shared_ptr<const PlanContext> make(std::shared_ptr<const LoadedRun> run,
                                                 std::shared_ptr<const Network> network);
};

/// What the plan views draw for one plan, built on the worker that planned it (the builders are
/// Qt-free), so the GUI thread only hands them to the widgets.
struct PlanViews {
  /// Per row of viewTable(), in its order: what the row's build made (empty without one).
  std::vector<std::any> data;
  /// The data of type T (a plan view's data, e.g. MemoryChartData); null when no row builds one.
  template <class T>
  const T* get() const {
    for (const std::any& d : data)
      if (const T* t = std::any_cast<T>(&d)) return t;
    return nullptr;
  }
};

/// A plan for one request, tagged with the sequence number of the request that asked for it.
struct PlanOutcome {
  quint64 seq = 0;
  perf::PlanRequest request;
  std::shared_ptr<const PlanContext> context;
  std::shared_ptr<const perf::PlanResult> result;
  std::shared_ptr<const PlanViews> views;  ///< with the result
  QString error;                           ///< the planner failed (the result is then null)
  /// The plan file of a trainable result (what `swapscope plan --out` writes for the same
  /// inputs), built when asked for: only Export needs it, not every plan of a drag.
  std::optional<store::PlanFile> planFile() const;
};

/// One budget of a sweep, as the trade-off view takes it.
struct SweepPoint {
  int sweep = 0;  ///< which sweep (a newer one makes older points stale)
  int index = 0, count = 0;
  swapscope::SweepPoint point;
};

/// The t_iter-against-k curve of one plan (the trade-off view's right panel).
struct BatchCurveOutcome {
  quint64 seq = 0;  ///< the plan request it belongs to
  BatchCurve curve;
};

/// Builds what every plan view draws for `result` (planned with `context` for `request`): each
/// row of viewTable() with a build.
PlanViews makePlanViews(const PlanContext& context, const perf::PlanRequest& request,
                        const perf::PlanResult& result);

}  // namespace swapscope::gui

Q_DECLARE_METATYPE(swapscope::gui::LoadedRun)
Q_DECLARE_METATYPE(swapscope::gui::PlanOutcome)
Q_DECLARE_METATYPE(swapscope::gui::SweepPoint)
Q_DECLARE_METATYPE(swapscope::gui::BatchCurveOutcome)
