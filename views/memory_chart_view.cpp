// SPDX-License-Identifier: MIT
#include "views/memory_chart_view.h"

#include <algorithm>

#include <qcustomplot.h>
#include <QVBoxLayout>

namespace swapscope {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

QColor policyColor(const std::string& policy) {
  if (policy == "keep-all") return QColor(0xd6, 0x27, 0x28);
  if (policy == "swap-all") return QColor(0x1f, 0x77, 0xb4);
  return QColor(0x2c, 0xa0, 0x2c);
}

}  // namespace

MemoryChartView::MemoryChartView(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_plot);
  m_plot->xAxis->setLabel("step (forward 1..N, backward N+1..2N)");
  m_plot->yAxis->setLabel("resident memory (MiB)");
  m_plot->legend->setVisible(true);
  m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  m_budgetLine = new QCPItemStraightLine(m_plot);
  m_budgetLine->setPen(QPen(Qt::black, 1.5, Qt::DashLine));
  m_turnLine = new QCPItemStraightLine(m_plot);
  m_turnLine->setPen(QPen(Qt::gray, 1, Qt::DotLine));
}

void MemoryChartView::setData(const MemoryChartData& chart) {
  m_plot->clearGraphs();
  double top = 0;
  for (const MemorySeries& s : chart.series) {
    QCPGraph* g = m_plot->addGraph();
    // k_max depends on the budget, which moves without a new setData: the legend shows only the
    // peak, which depends on k alone.
    g->setName(QString::fromStdString(s.policy) +
               QStringLiteral(": peak %1 MiB").arg(static_cast<double>(s.peak) / kMiB, 0, 'f', 1));
    g->setPen(QPen(policyColor(s.policy), 1.5));
    g->setLineStyle(QCPGraph::lsStepLeft);
    QVector<double> x(static_cast<int>(s.bytes.size()));
    QVector<double> y(static_cast<int>(s.bytes.size()));
    for (int i = 0; i < x.size(); ++i) {
      x[i] = i + 1;
      y[i] = s.bytes[static_cast<std::size_t>(i)] / kMiB;
      top = std::max(top, y[i]);
    }
    g->setData(x, y, /*alreadySorted=*/true);
  }
  m_turnLine->point1->setCoords(chart.forward_steps + 0.5, 0);
  m_turnLine->point2->setCoords(chart.forward_steps + 0.5, 1);
  m_plot->xAxis->setRange(0, 2.0 * chart.forward_steps + 1);
  m_curveTop = top;
  setBudget(chart.budget);
}

void MemoryChartView::setBudget(std::int64_t budget) {
  const double y = static_cast<double>(budget) / kMiB;
  m_budgetLine->point1->setCoords(0, y);
  m_budgetLine->point2->setCoords(1, y);
  m_plot->yAxis->setRange(0, std::max(m_curveTop, y) * 1.08);
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace swapscope
