// SPDX-License-Identifier: MIT
/// @brief Every file the app reads or a job it started writes: the run databases it opened or
/// was asked to open (the planning one, those added for comparison, one a profile or a run from
/// the Run menu writes), each with SQLite's companion files, and the network files it planned.
/// No output of the app (--export-plan, --screenshot, Export plan, Save figure, Open in
/// Perfetto, the database of a profile or a run) replaces one of them, with --force or without:
/// files::checkOutputPath compares them by identity and by resolved name.
#pragma once

#include <QString>
#include <string>

#include "common/files.h"

namespace swapscope::gui {

class InputFiles {
 public:
  /// A run database, with its -wal, -shm and -journal files (cli::addInput); `what` names it in
  /// messages ("the run database --compare").
  void addDatabase(const QString& path, const std::string& what);
  /// A network JSON file or an ONNX model; `what` names it in messages.
  void addNetwork(const QString& path, const std::string& what = "the network file");
  /// The rules for an output: replace an existing file when `force`, never an input.
  files::OutputRules rules(bool force) const;

 private:
  bool contains(const std::string& path) const;

  files::OutputRules m_rules;
};

}  // namespace swapscope::gui
