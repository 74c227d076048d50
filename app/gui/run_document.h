// SPDX-License-Identifier: MIT
/// @brief A run database opened for the desktop app: read (read-only, every check of the
/// engine's reader) and fitted on a worker thread, so the GUI thread never calls SQLite.
#pragma once

#include <QObject>
#include <QString>
#include <atomic>
#include <memory>

#include "gui/workbench_types.h"

class QThreadPool;

namespace swapscope::gui {

class RunDocument : public QObject {
  Q_OBJECT
 public:
  explicit RunDocument(QObject* parent = nullptr);
  ~RunDocument() override;

  /// Starts reading `path`; answers with loaded() or loadFailed(). A newer open() makes the
  /// answer of an older one stale: it is dropped.
  void open(const QString& path);
  /// The last database loaded, or null.
  std::shared_ptr<const LoadedRun> current() const { return m_current; }

  /// Reads and fits on the calling thread (what the worker runs); Error as the reader throws it.
  static LoadedRun read(const std::string& path);

 signals:
  void loaded(const swapscope::gui::LoadedRun& data);
  void loadFailed(const QString& message);

 private:
  QThreadPool* m_pool;
  std::shared_ptr<const LoadedRun> m_current;
  quint64 m_generation = 0;
};

}  // namespace swapscope::gui
