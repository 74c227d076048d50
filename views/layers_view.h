// SPDX-License-Identifier: MIT
/// @brief The layers table: a LayersTableModel (one row per layer of a LayersData) behind a
/// QSortFilterProxyModel in a QTableView, with a filter box. Sorting is by value (bytes, FLOPs,
/// seconds), not by the displayed text. Predicted times are marked "(x)" and shaded yellow when
/// extrapolated beyond the profiled range, "(t)" and shaded blue when transferred from another
/// network's per-type curve, and "missing" in red when no curve exists.
///
/// Wiring (for the main window):
/// - `setData(makeLayersData(net, planner.costs(), model, request, planResult))` on every
///   planReady. With the same network_key (only the budget, k or policy moved) the rows are
///   updated in place, so the sort, the filter, the selection and the scroll position stay.
/// - `layerSelected(int)` is emitted when the user selects a row; `selectLayer(int)` selects
///   and scrolls to that layer's row without emitting (a row hidden by the filter stays hidden).
/// - `table()` is the widget to save (QWidget::grab); the table has no QCustomPlot.
#pragma once

#include <QAbstractTableModel>

#include "views/layers_data.h"
#include "views/plan_view.h"

class QLineEdit;
class QSortFilterProxyModel;
class QTableView;
class QLabel;

namespace swapscope {

class LayersTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Id,
    Name,
    Type,
    FmBytes,
    FwdFlops,
    BwdFlops,
    FwdTime,
    BwdTime,
    State,
    ReleaseStep,
    PrefetchStep,
    FwdStall,
    BwdStall,
    ColumnCount
  };
  /// Qt::UserRole: the value sorted by (a number for numeric columns, else the text).
  static constexpr int SortRole = Qt::UserRole;
  /// Qt::UserRole + 1: the row's layer id.
  static constexpr int LayerRole = Qt::UserRole + 1;

  explicit LayersTableModel(QObject* parent = nullptr);
  void setData(const LayersData& data);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  LayersData m_data;
};

class LayersView : public PlanView {
  Q_OBJECT
 public:
  explicit LayersView(QWidget* parent = nullptr);

  void setData(const LayersData& layers);
  /// setData with the plan's LayersData; the layer selected stays selected.
  void setPlan(const ShownPlan& plan) override;
  LayersTableModel* model() const { return m_model; }
  QSortFilterProxyModel* proxy() const { return m_proxy; }
  QTableView* table() const { return m_table; }
  QLineEdit* filter() const { return m_filter; }

 public slots:
  void selectLayer(int layer) override;

 private:
  LayersTableModel* m_model;
  QSortFilterProxyModel* m_proxy;
  QTableView* m_table;
  QLineEdit* m_filter;
  QLabel* m_status;
  bool m_selecting = false;
  int m_selected = -1;  ///< the layer selectLayer was last given
};

}  // namespace swapscope
