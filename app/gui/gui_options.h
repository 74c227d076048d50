// SPDX-License-Identifier: MIT
/// @brief The desktop app's command line:
///   swapscope-gui [DB.swapdb] [--model M | --net F | --onnx F] [--input CxHxW --classes N]
///                 [--budget SIZE]
///                 [--budget-gib G] [--batch K] [--policy P] [--mode M] [--view V]
///                 [--select LAYER] [--compare DB2.swapdb]... [--k K] [--export-plan FILE]
///                 [--screenshot FILE] [--force]
/// Sizes use the CLI's syntax (common/bytes.h); names use the CLI's choices.
#pragma once

#include <QString>
#include <QStringList>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "perfmodel/planner.h"

namespace swapscope::gui {

struct GuiOptions {
  QString db;
  /// --model/--net/--onnx/--input/--classes as the CLI's network options take them (argv form).
  std::vector<std::string> network_args;
  std::optional<std::int64_t> budget;
  std::optional<std::int64_t> batch;
  Policy policy = Policy::AccUdnn;
  perf::PlanMode mode = perf::PlanMode::Argmin;
  QString view;  ///< one of viewNames() (app/gui/view_registry.h), or empty
  QString select;
  /// Run databases opened beside the first for the Compare and Timeline views (--compare).
  QStringList compare;
  /// The recorded k the Timeline shows (--k); default: the largest recorded.
  std::optional<std::int64_t> timeline_k;
  QString export_plan;
  QString screenshot;
  bool force = false;
  bool help = false;
  QString help_text;
  bool headless() const { return !export_plan.isEmpty() || !screenshot.isEmpty(); }
};

/// Parses the arguments (argv[0] first). Error(BadInput) naming the option and the value.
GuiOptions parseGuiOptions(const QStringList& arguments);

/// Builds the network the CLI's --model/--net/--onnx/--input/--classes options name (argv form),
/// with the CLI's own checks and messages.
Network loadNetworkArgs(const std::vector<std::string>& args);

}  // namespace swapscope::gui
