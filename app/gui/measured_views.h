// SPDX-License-Identifier: MIT
/// @brief The app's views of what run databases recorded (as opposed to what the planner
/// predicts): the Timeline (one recorded iteration of any open database) and the Compare view
/// (two open databases side by side). It keeps the open databases, the planning one first and
/// then those added for comparison, reads the added ones and builds each comparison on a worker
/// thread (the GUI thread never calls SQLite or fits a model), and writes a recorded iteration as
/// Chrome trace JSON for Perfetto (on the worker too, the file or the error then said by
/// status()).
#pragma once

#include <QObject>
#include <QString>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "common/files.h"
#include "gui/input_files.h"
#include "store/run_db.h"

class QThreadPool;
class QWidget;

namespace swapscope {
class CompareView;
class TimelineView;
}  // namespace swapscope

namespace swapscope::gui {

class MeasuredViews : public QObject {
  Q_OBJECT
 public:
  /// `dialogParent` is where the replace question of Open in Perfetto is asked; `inputs` the
  /// window's files that no output replaces, to which each database added is added.
  explicit MeasuredViews(QWidget* dialogParent,
                         std::shared_ptr<InputFiles> inputs = std::make_shared<InputFiles>());
  ~MeasuredViews() override;

  TimelineView* timeline() const { return m_timeline; }
  CompareView* compare() const { return m_compare; }

  /// The planning database, loaded (index 0 of runs()); replaces the previous one.
  void setPrimary(std::shared_ptr<const store::RunData> run);
  /// Reads `path` (read-only, every check of the engine's reader) on the worker and adds it;
  /// failed() with the reader's message when it cannot.
  void addDatabase(const QString& path);
  /// The k the Timeline shows once the planning database is loaded (--k); failed() when that
  /// database recorded no iteration at k.
  void setTimelineBatch(std::int64_t k) { m_pendingK = k; }
  /// Headless: the replace question is not asked (an existing trace file is refused).
  void setHeadless(bool headless) { m_headless = headless; }

  /// The open databases, the planning one first.
  std::vector<std::shared_ptr<const store::RunData>> runs() const;
  /// A database is being read, a comparison built or a trace written.
  bool busy() const { return m_reading > 0 || m_comparing || m_writing > 0; }

  /// Where Open in Perfetto writes the Timeline's iteration: next to its database,
  /// "<name>-k<K>-it<I>.trace.json". Empty when nothing is shown.
  QString tracePath() const;
  /// Writes store::chromeTrace of the Timeline's iteration to `path` under the CLI's output
  /// rules (every open database and every input of the window is an input, never replaced), on the
  /// calling thread (Open in Perfetto does the same on the worker). Error(BadInput) when refused.
  void writeTrace(const QString& path, bool force);

 signals:
  void failed(const QString& title, const QString& message);
  void status(const QString& message);
  /// Nothing is being read or compared any more.
  void idle();

 private:
  /// Brings the Timeline and Compare views up to the open databases; `showPrimary`: the
  /// Timeline shows the planning database (at `k`, else its largest recorded k).
  void runsChanged(bool showPrimary = false, std::optional<std::int64_t> k = std::nullopt);
  /// What writing the Timeline's iteration to `path` needs, taken on the GUI thread; the
  /// returned work writes it (on any thread) and returns the path.
  std::function<std::string()> traceWriter(const QString& path, bool force) const;
  void requestCompare();
  void openInPerfetto();
  void checkIdle();

  QWidget* m_parent;
  std::shared_ptr<InputFiles> m_inputs;
  QThreadPool* m_pool;
  TimelineView* m_timeline;
  CompareView* m_compare;
  std::shared_ptr<const store::RunData> m_primary;
  std::vector<std::shared_ptr<const store::RunData>> m_added;
  int m_pairA = 0, m_pairB = 1;
  int m_reading = 0;
  bool m_comparing = false;
  int m_writing = 0;  ///< traces being written
  quint64 m_compareGeneration = 0;
  std::optional<std::int64_t> m_pendingK;
  bool m_headless = false;
};

}  // namespace swapscope::gui
