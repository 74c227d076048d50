// SPDX-License-Identifier: MIT
/// @brief The Timeline view: one recorded iteration of an open run database, drawn by the
/// Streams view's own widget (StreamsView: three lanes, compute, swap-out and swap-in, the
/// stalls marked), so a measurement reads as the prediction does, with the pool's in-use bytes
/// beneath on the same time axis. It draws a TimelineData (views/timeline_data.h), built here
/// from the loaded rows (no SQLite on the GUI thread: the runs come loaded).
///
/// Wiring (for the main window):
/// - `setRuns(runs)` with every open database, the planning one first; the choice of database,
///   k and iteration is the view's own (combo boxes above the lanes), or `select()`.
/// - `perfettoRequested()` is emitted by the "Open in Perfetto" button; the window writes
///   store::chromeTrace of `data()` (the same k and iteration) next to the database.
/// - A click on a bar outlines that layer's bars, as in the Streams view; `layerSelected(int)`
///   names the layer of the database shown, whose network may not be the one planned: the
///   window links it (and `selectLayer(int)`) to the plan views while it is.
#pragma once

#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

#include "store/run_db.h"
#include "views/timeline_data.h"

class QComboBox;
class QCustomPlot;
class QCPGraph;
class QCPItemStraightLine;
class QLabel;
class QPushButton;

namespace swapscope {

class StreamsView;

class TimelineView : public QWidget {
  Q_OBJECT
 public:
  explicit TimelineView(QWidget* parent = nullptr);

  /// The open databases (the planning one first). Keeps the database shown when it is still
  /// among them, with its k and iteration; otherwise, or with `showFirst`, shows iteration 0 of
  /// the first at `firstK` (default: its largest recorded k). Error(BadInput) as select() says
  /// when the first recorded no iteration at `firstK`; it is then shown at its largest k.
  void setRuns(std::vector<std::shared_ptr<const store::RunData>> runs, bool showFirst = false,
               std::optional<std::int64_t> firstK = std::nullopt);
  /// Shows iteration `iteration` at `k` of run `run` (an index into setRuns' list).
  /// Error(BadInput) naming the file and the k values recorded when there is no such iteration
  /// (what `swapscope trace` says); what is shown then stays.
  void select(int run, std::int64_t k, int iteration);

  /// What is shown; `data().lanes` is empty before the first database.
  const TimelineData& data() const { return m_data; }
  /// The database shown, or null.
  const store::RunData* run() const;
  int runIndex() const { return m_run; }
  StreamsView* lanes() const { return m_lanes; }
  QCustomPlot* poolPlot() const { return m_pool; }
  QComboBox* databaseBox() const { return m_dbBox; }
  QComboBox* batchBox() const { return m_kBox; }
  QComboBox* iterationBox() const { return m_itBox; }
  QPushButton* perfettoButton() const { return m_perfetto; }

 public slots:
  void selectLayer(int layer);

 signals:
  void layerSelected(int layer);
  void perfettoRequested();
  /// A database, k or iteration was chosen in the combo boxes and could not be shown.
  void failed(const QString& message);

 private:
  void display(const TimelineData& data);
  void showFirstAtLargestK();
  void fillBatches();
  void fillIterations();
  void onChosen();

  std::vector<std::shared_ptr<const store::RunData>> m_runs;
  int m_run = -1;
  TimelineData m_data;
  QComboBox* m_dbBox;
  QComboBox* m_kBox;
  QComboBox* m_itBox;
  QPushButton* m_perfetto;
  QLabel* m_summary;
  StreamsView* m_lanes;
  QCustomPlot* m_pool;
  QCPGraph* m_poolGraph = nullptr;
  QCPItemStraightLine* m_budgetLine = nullptr;
  bool m_filling = false;
};

}  // namespace swapscope
