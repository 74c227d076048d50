// SPDX-License-Identifier: MIT
#include "gui/live_run_panel.h"

#include <qcustomplot.h>
#include <QHBoxLayout>
#include <iterator>

namespace swapscope::gui {
namespace {

QCustomPlot* livePlot(QWidget* parent, const QString& title, const QString& x, const QString& y) {
  auto* plot = new QCustomPlot(parent);
  plot->setMinimumSize(260, 180);
  plot->plotLayout()->insertRow(0);
  plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, title));
  plot->xAxis->setLabel(x);
  plot->yAxis->setLabel(y);
  return plot;
}

const QColor kBatchColors[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e),
                               QColor(0x2c, 0xa0, 0x2c), QColor(0xd6, 0x27, 0x28),
                               QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b)};

}  // namespace

LiveRunPanel::LiveRunPanel(QWidget* parent)
    : QWidget(parent),
      m_times(livePlot(this, tr("iteration times"), tr("iteration at k"), tr("ms"))),
      m_pool(livePlot(this, tr("pool bytes, latest iteration"), tr("ms"), tr("MiB"))),
      m_stalls(livePlot(this, tr("compute idle before each step"), tr("step"), tr("ms"))) {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_times, 1);
  layout->addWidget(m_pool, 1);
  layout->addWidget(m_stalls, 1);
  m_times->legend->setVisible(true);
  m_times->legend->setFont(QFont(font().family(), font().pointSize() - 1));
  auto* pool = m_pool->addGraph();
  pool->setLineStyle(QCPGraph::lsStepLeft);
  pool->setPen(QPen(QColor(0x1f, 0x1f, 0x1f), 1.5));
  auto* bars = new QCPBars(m_stalls->xAxis, m_stalls->yAxis);
  bars->setPen(Qt::NoPen);
  bars->setBrush(QColor(0xd0, 0x18, 0x18));
}

void LiveRunPanel::setData(const LiveRunData& d) {
  // A new run starts from nothing; then each report appends its iteration's point, and only a
  // newly recorded iteration redraws the pool bytes and the stalls.
  if (m_times->graphCount() > static_cast<int>(d.times.size())) m_times->clearGraphs();
  for (std::size_t i = 0; i < d.times.size(); ++i) {
    const LiveRunData::Batch& b = d.times[i];
    QCPGraph* g =
        static_cast<int>(i) < m_times->graphCount() ? m_times->graph(static_cast<int>(i)) : nullptr;
    if (!g) {
      g = m_times->addGraph();
      g->setName(tr("k = %1").arg(b.k));
      const QColor c = kBatchColors[i % std::size(kBatchColors)];
      g->setPen(QPen(c, 1.5));
      g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 5));
    }
    QVector<double> x, y;
    for (std::size_t j = static_cast<std::size_t>(g->dataCount()); j < b.seconds.size(); ++j) {
      x.push_back(b.iteration[j]);
      y.push_back(b.seconds[j] * 1e3);
    }
    if (!x.isEmpty()) g->addData(x, y, /*alreadySorted=*/true);
  }
  m_times->rescaleAxes();
  m_times->yAxis->setRangeLower(0);
  m_times->replot();
  if (d.k == m_shownK && d.iteration == m_shownIteration) return;
  m_shownK = d.k;
  m_shownIteration = d.iteration;
  QVector<double> t(d.pool_ms.begin(), d.pool_ms.end()), mib;
  for (const double b : d.pool_bytes)
    mib.push_back(b / (1024.0 * 1024.0));
  m_pool->graph(0)->setData(t, mib, true);
  m_pool->rescaleAxes();
  m_pool->yAxis->setRangeLower(0);
  static_cast<QCPTextElement*>(m_pool->plotLayout()->element(0, 0))
      ->setText(d.iteration < 0 ? tr("pool bytes, latest iteration")
                                : tr("pool bytes, k = %1, iteration %2").arg(d.k).arg(d.iteration));
  m_pool->replot();
  auto* bars = static_cast<QCPBars*>(m_stalls->plottable(0));
  bars->setData(QVector<double>(d.stall_steps.begin(), d.stall_steps.end()),
                QVector<double>(d.stall_ms.begin(), d.stall_ms.end()));
  static_cast<QCPTextElement*>(m_stalls->plotLayout()->element(0, 0))
      ->setText(tr("compute idle before each step, latest iteration: %1 ms in all")
                    .arg(d.stall_total_ms, 0, 'f', 2));
  m_stalls->rescaleAxes();
  m_stalls->yAxis->setRangeLower(0);
  m_stalls->replot();
}

}  // namespace swapscope::gui
