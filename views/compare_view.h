// SPDX-License-Identifier: MIT
/// @brief The Compare view: two open run databases side by side, from a CompareData
/// (views/compare_data.h, the engine's perf::compareRuns as `swapscope compare` prints it). Two
/// sortable tables: the per-step median differences at the largest k both recorded (largest
/// |B - A| first) and the fitted curves per layer type at common work with the PCIe fits; four
/// plots, A and B overlaid in the same two colours: the curves at common work, the PCIe lines,
/// the iteration times per k and the pool's bytes over one iteration. Selecting a curve row
/// marks its bars; selecting a step row names it above the tables.
///
/// Wiring (for the main window): `setRunNames(names, a, b)` with every open database;
/// `pairChosen(a, b)` when the user picks another pair; `setData()` with the comparison built
/// off the GUI thread, or `setMessage()` while there is none.
#pragma once

#include <QStringList>
#include <QWidget>

#include "views/compare_data.h"

class QComboBox;
class QCustomPlot;
class QLabel;
class QStandardItemModel;
class QTableView;

namespace swapscope {

class CompareView : public QWidget {
  Q_OBJECT
 public:
  explicit CompareView(QWidget* parent = nullptr);

  /// The databases to choose from and the pair chosen (indices into `names`).
  void setRunNames(const QStringList& names, int a, int b);
  int runA() const;
  int runB() const;
  void setData(const CompareData& data);
  /// Replaces the comparison with a message (fewer than two databases, a comparison running).
  void setMessage(const QString& message);
  const CompareData& data() const { return m_data; }
  /// The two runs' identity lines and the per-step table's title, as shown.
  QString identityText() const;
  QString stepTitle() const;

  /// The tables' models: display text, and the raw value (seconds, bytes/s, FLOPs) under
  /// Qt::UserRole, which is also what the columns sort by; the step table's B-A column holds
  /// |B - A| there, so that it sorts by the size of the difference.
  QTableView* stepTable() const { return m_stepTable; }
  QTableView* curveTable() const { return m_curveTable; }
  QStandardItemModel* stepModel() const { return m_steps; }
  QStandardItemModel* curveModel() const { return m_curves; }
  QCustomPlot* curvesPlot() const { return m_curvesPlot; }
  QCustomPlot* pciePlot() const { return m_pciePlot; }
  QCustomPlot* timesPlot() const { return m_timesPlot; }
  QCustomPlot* poolPlot() const { return m_poolPlot; }

 signals:
  void pairChosen(int a, int b);

 private:
  void fillTables();
  void fillPlots();
  void highlightCurve(int row);

  CompareData m_data;
  QComboBox* m_aBox;
  QComboBox* m_bBox;
  QLabel* m_identity;
  QWidget* m_body = nullptr;  ///< the tables and plots: hidden while there is no comparison
  QLabel* m_stepTitle;
  QStandardItemModel* m_steps;
  QStandardItemModel* m_curves;
  QTableView* m_stepTable;
  QTableView* m_curveTable;
  QCustomPlot* m_curvesPlot;
  QCustomPlot* m_pciePlot;
  QCustomPlot* m_timesPlot;
  QCustomPlot* m_poolPlot;
};

}  // namespace swapscope
