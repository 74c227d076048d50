// SPDX-License-Identifier: MIT
#include "views/layers_view.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include "common/bytes.h"
#include "common/format.h"

namespace swapscope {
namespace {

QString timeText(const perf::Estimate& e, int step) {
  if (step <= 0) return {};
  if (e.missing) return QStringLiteral("missing");
  QString s = QString::fromStdString(formatMilliseconds(e.seconds));
  if (e.extrapolated) s += QStringLiteral(" (x)");
  if (e.transferred) s += QStringLiteral(" (t)");
  return s;
}

QString timeTip(const perf::Estimate& e, int step) {
  if (step <= 0) return QStringLiteral("this layer has no such step");
  QStringList notes;
  if (e.missing) notes << QStringLiteral("no curve for this layer type: 0 s assumed");
  if (e.extrapolated) notes << QStringLiteral("extrapolated: outside the profiled range");
  if (e.transferred) notes << QStringLiteral("transferred: another network's per-type curve");
  return notes.isEmpty()
             ? QStringLiteral("step %1, predicted from this layer's own curve").arg(step)
             : QStringLiteral("step %1: ").arg(step) + notes.join(QStringLiteral("; "));
}

QVariant flagColor(const perf::Estimate& e, int step) {
  if (step <= 0) return {};
  if (e.missing) return QColor(0xf4, 0xb6, 0xb6);
  if (e.extrapolated) return QColor(0xfb, 0xee, 0xb0);
  if (e.transferred) return QColor(0xc9, 0xdd, 0xf4);
  return {};
}

QString stepText(int step) {
  return step > 0 ? QString::number(step) : QString();
}

QString stallText(double seconds, int step) {
  if (step <= 0) return {};
  return seconds > 0 ? QString::fromStdString(formatMilliseconds(seconds)) : QStringLiteral("0");
}

}  // namespace

LayersTableModel::LayersTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void LayersTableModel::setData(const LayersData& data) {
  const bool sameShape = data.network_key == m_data.network_key &&
                         data.rows.size() == m_data.rows.size() && !m_data.rows.empty();
  if (sameShape) {
    m_data = data;
    emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
    return;
  }
  beginResetModel();
  m_data = data;
  endResetModel();
}

int LayersTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_data.rows.size());
}

int LayersTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant LayersTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  static const char* const names[ColumnCount] = {"id",
                                                 "layer",
                                                 "type",
                                                 "output FM",
                                                 "fwd FLOPs",
                                                 "bwd FLOPs",
                                                 "fwd (ms)",
                                                 "bwd (ms)",
                                                 "FM",
                                                 "release",
                                                 "prefetch / re-make",
                                                 "stall before fwd (ms)",
                                                 "stall before bwd (ms)"};
  static const char* const tips[ColumnCount] = {
      "layer id",
      "layer name",
      "layer type",
      "output feature map at the plan's k",
      "forward FLOPs at k",
      "backward FLOPs at k (data and weight gradients)",
      "predicted forward time; (x) extrapolated, (t) transferred",
      "predicted backward time; (x) extrapolated, (t) transferred",
      "kept on the device, swapped to the host, pinned (kept by the planner though swappable), or "
      "recomputed (released after forward, re-made in backward)",
      "the forward step whose end releases the swapped or recomputed FM",
      "the backward step the swapped FM is prefetched for, or that re-makes the recomputed FM",
      "simulated wait before the forward step (t_ready)",
      "simulated wait before the backward step (t_ready)"};
  if (section < 0 || section >= ColumnCount) return {};
  if (role == Qt::DisplayRole) return QString::fromLatin1(names[section]);
  if (role == Qt::ToolTipRole) return QString::fromLatin1(tips[section]);
  return {};
}

QVariant LayersTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
  const LayerRowData& r = m_data.rows[static_cast<std::size_t>(index.row())];
  const int col = index.column();
  if (role == LayerRole) return r.layer;
  if (role == SortRole) {
    switch (col) {
      case Id:
        return r.layer;
      case Name:
        return QString::fromStdString(r.name);
      case Type:
        return QString::fromStdString(r.type);
      case FmBytes:
        return static_cast<qlonglong>(r.fm_bytes);
      case FwdFlops:
        return static_cast<qlonglong>(r.fwd_flops);
      case BwdFlops:
        return static_cast<qlonglong>(r.bwd_flops);
      case FwdTime:
        return r.fwd_step > 0 ? r.fwd.seconds : -1.0;
      case BwdTime:
        return r.bwd_step > 0 ? r.bwd.seconds : -1.0;
      case State:
        return QString::fromLatin1(fmStateName(r.state));
      case ReleaseStep:
        return r.release_step;
      case PrefetchStep:
        return r.prefetch_step > 0 ? r.prefetch_step : r.remake_step;
      case FwdStall:
        return r.fwd_stall;
      case BwdStall:
        return r.bwd_stall;
      default:
        return {};
    }
  }
  if (role == Qt::DisplayRole) {
    switch (col) {
      case Id:
        return r.layer;
      case Name:
        return QString::fromStdString(r.name);
      case Type:
        return QString::fromStdString(r.type);
      case FmBytes:
        return QString::fromStdString(formatBytes(r.fm_bytes));
      case FwdFlops:
        return QString::fromStdString(formatSi(static_cast<double>(r.fwd_flops)));
      case BwdFlops:
        return QString::fromStdString(formatSi(static_cast<double>(r.bwd_flops)));
      case FwdTime:
        return timeText(r.fwd, r.fwd_step);
      case BwdTime:
        return timeText(r.bwd, r.bwd_step);
      case State:
        return r.swappable || r.state != FmState::Kept ? QString::fromLatin1(fmStateName(r.state))
                                                       : QStringLiteral("kept (not swappable)");
      case ReleaseStep:
        return stepText(r.release_step);
      case PrefetchStep:
        return stepText(r.prefetch_step > 0 ? r.prefetch_step : r.remake_step);
      case FwdStall:
        return stallText(r.fwd_stall, r.fwd_step);
      case BwdStall:
        return stallText(r.bwd_stall, r.bwd_step);
      default:
        return {};
    }
  }
  if (role == Qt::BackgroundRole) {
    if (col == FwdTime) return flagColor(r.fwd, r.fwd_step);
    if (col == BwdTime) return flagColor(r.bwd, r.bwd_step);
    if ((col == FwdStall && r.fwd_stall > 0) || (col == BwdStall && r.bwd_stall > 0))
      return QColor(0xf8, 0xc8, 0xc8);
    if (col == State && r.state == FmState::Swapped) return QColor(0xd8, 0xec, 0xd8);
    if (col == State && r.state == FmState::Pinned) return QColor(0xe6, 0xde, 0xf2);
    if (col == State && r.state == FmState::Recomputed) return QColor(0xf6, 0xe8, 0xb8);
    return {};
  }
  if (role == Qt::ToolTipRole) {
    if (col == FwdTime) return timeTip(r.fwd, r.fwd_step);
    if (col == BwdTime) return timeTip(r.bwd, r.bwd_step);
    if (col == FmBytes) return QStringLiteral("%1 bytes").arg(r.fm_bytes);
    return {};
  }
  if (role == Qt::TextAlignmentRole) {
    if (col == Name || col == Type || col == State)
      return QVariant::fromValue(Qt::AlignLeft | Qt::AlignVCenter);
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  }
  return {};
}

LayersView::LayersView(QWidget* parent)
    : PlanView(parent),
      m_model(new LayersTableModel(this)),
      m_proxy(new QSortFilterProxyModel(this)),
      m_table(new QTableView(this)),
      m_filter(new QLineEdit(this)),
      m_status(new QLabel(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  m_filter->setPlaceholderText(
      QStringLiteral("Filter: layer name, type or FM state (swapped, pinned, recomputed, kept)"));
  m_filter->setClearButtonEnabled(true);
  layout->addWidget(m_filter);
  layout->addWidget(m_table);
  layout->addWidget(m_status);
  m_proxy->setSourceModel(m_model);
  m_proxy->setSortRole(LayersTableModel::SortRole);
  m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
  m_proxy->setFilterKeyColumn(-1);  // any column
  m_proxy->setDynamicSortFilter(true);
  m_table->setModel(m_proxy);
  m_table->setSortingEnabled(true);
  m_table->sortByColumn(LayersTableModel::Id, Qt::AscendingOrder);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->verticalHeader()->setVisible(false);
  m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->setAlternatingRowColors(true);
  connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
  connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (m_selecting || !current.isValid()) return;
            emit layerSelected(current.data(LayersTableModel::LayerRole).toInt());
          });
}

void LayersView::setPlan(const ShownPlan& plan) {
  setData(std::any_cast<const LayersData&>(plan.data));
  if (m_selected >= 0) selectLayer(m_selected);
}

void LayersView::setData(const LayersData& layers) {
  const bool first = m_model->rowCount() == 0;
  m_model->setData(layers);
  if (layers.trainable) {
    int swapped = 0, pinned = 0, recomputed = 0;
    for (const LayerRowData& r : layers.rows) {
      swapped += r.state == FmState::Swapped;
      pinned += r.state == FmState::Pinned;
      recomputed += r.state == FmState::Recomputed;
    }
    m_status->setText(QStringLiteral("%1 layers at k = %2: %3 FMs swapped, %4 pinned, %5 "
                                     "recomputed. (x) extrapolated, (t) transferred.")
                          .arg(layers.rows.size())
                          .arg(layers.k)
                          .arg(swapped)
                          .arg(pinned)
                          .arg(recomputed));
  } else {
    m_status->setText(QStringLiteral("No plan: ") + QString::fromStdString(layers.reason));
  }
  if (first && m_model->rowCount() > 0) m_table->resizeColumnsToContents();
}

void LayersView::selectLayer(int layer) {
  m_selected = layer;
  if (layer < 0 || layer >= m_model->rowCount()) {
    m_selecting = true;
    m_table->clearSelection();
    m_selecting = false;
    return;
  }
  const QModelIndex proxyIndex = m_proxy->mapFromSource(m_model->index(layer, 0));
  if (!proxyIndex.isValid()) return;  // filtered out
  m_selecting = true;
  m_table->selectionModel()->setCurrentIndex(
      proxyIndex, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  m_table->scrollTo(proxyIndex, QAbstractItemView::PositionAtCenter);
  m_selecting = false;
}

}  // namespace swapscope
