// SPDX-License-Identifier: MIT
#include "views/tradeoff_view.h"
#include "views/replot.h"
#include "views/text_wrap.h"

#include <algorithm>
#include <cmath>

#include <qcustomplot.h>
#include <QVBoxLayout>

namespace swapscope {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
const QColor kThroughputColor(0x1f, 0x77, 0xb4);
const QColor kKColor(0xff, 0x7f, 0x0e);
const QColor kTimeColor(0x2c, 0xa0, 0x2c);

QCPGraph* addGraph(QCustomPlot* plot, QCPAxis* x, QCPAxis* y, const QColor& color,
                   QCPScatterStyle::ScatterShape shape, QCPGraph::LineStyle line) {
  QCPGraph* g = plot->addGraph(x, y);
  g->setPen(QPen(color, 1.5));
  g->setScatterStyle(QCPScatterStyle(shape, color, color, 6));
  g->setLineStyle(line);
  return g;
}

void colorAxis(QCPAxis* axis, const QColor& color) {
  axis->setLabelColor(color);
  axis->setTickLabelColor(color);
  axis->setBasePen(QPen(color));
  axis->setTickPen(QPen(color));
  axis->setSubTickPen(QPen(color));
}

void setLog(QCPAxis* axis, bool log) {
  if ((axis->scaleType() == QCPAxis::stLogarithmic) == log) return;
  axis->setScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  if (log) {
    axis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
  } else {
    axis->setTicker(QSharedPointer<QCPAxisTicker>::create());
  }
}

/// [lo, hi] with 5 % room above and below (on a log axis: by a factor).
QCPRange padded(double lo, double hi, bool log) {
  if (log) return QCPRange(lo / 1.15, hi * 1.15);
  const double pad = hi > lo ? (hi - lo) * 0.05 : std::max(1.0, std::abs(hi) * 0.05);
  return QCPRange(lo - pad, hi + pad);
}

QCPItemStraightLine* verticalLine(QCustomPlot* plot, QCPAxisRect* rect) {
  auto* line = new QCPItemStraightLine(plot);
  line->setClipAxisRect(rect);
  line->point1->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
  line->point2->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
  line->setPen(QPen(Qt::black, 1.2, Qt::DashLine));
  line->setVisible(false);
  return line;
}

}  // namespace

TradeoffView::TradeoffView(QWidget* parent) : PlanView(parent), m_plot(new QCustomPlot(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_plot);
  m_plot->plotLayout()->clear();
  m_left = new QCPAxisRect(m_plot);
  m_right = new QCPAxisRect(m_plot);
  const QFont titleFont(font().family(), font().pointSize() + 1);
  m_plot->plotLayout()->addElement(
      0, 0,
      new QCPTextElement(m_plot, QStringLiteral("throughput and k against budget"), titleFont));
  m_plot->plotLayout()->addElement(
      0, 1,
      new QCPTextElement(m_plot, QStringLiteral("at the current budget, against k"), titleFont));
  m_plot->plotLayout()->addElement(1, 0, m_left);
  m_plot->plotLayout()->addElement(1, 1, m_right);
  m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);

  QCPAxis* budget = m_left->axis(QCPAxis::atBottom);
  QCPAxis* thr = m_left->axis(QCPAxis::atLeft);
  QCPAxis* kAxis = m_left->axis(QCPAxis::atRight);
  budget->setLabel(QStringLiteral("budget (MiB)"));
  setLog(budget, true);
  thr->setLabel(QStringLiteral("throughput (samples/s)"));
  kAxis->setLabel(QStringLiteral("chosen k"));
  kAxis->setVisible(true);
  colorAxis(thr, kThroughputColor);
  colorAxis(kAxis, kKColor);
  m_throughput =
      addGraph(m_plot, budget, thr, kThroughputColor, QCPScatterStyle::ssDisc, QCPGraph::lsLine);
  m_k = addGraph(m_plot, budget, kAxis, kKColor, QCPScatterStyle::ssSquare, QCPGraph::lsStepLeft);
  m_k->setPen(QPen(kKColor, 1.2, Qt::DashLine));
  m_infeasible =
      addGraph(m_plot, budget, thr, Qt::gray, QCPScatterStyle::ssCross, QCPGraph::lsNone);
  m_infeasible->setScatterStyle(
      QCPScatterStyle(QCPScatterStyle::ssCross, QPen(Qt::gray, 2), Qt::NoBrush, 8));

  QCPAxis* kx = m_right->axis(QCPAxis::atBottom);
  QCPAxis* ty = m_right->axis(QCPAxis::atLeft);
  QCPAxis* ry = m_right->axis(QCPAxis::atRight);
  kx->setLabel(QStringLiteral("minibatch k"));
  ty->setLabel(QStringLiteral("t_iter (ms)"));
  ry->setLabel(QStringLiteral("throughput (samples/s)"));
  ry->setVisible(true);
  colorAxis(ty, kTimeColor);
  colorAxis(ry, kThroughputColor);
  m_tIter = addGraph(m_plot, kx, ty, kTimeColor, QCPScatterStyle::ssDisc, QCPGraph::lsLine);
  m_kThroughput =
      addGraph(m_plot, kx, ry, kThroughputColor, QCPScatterStyle::ssDiamond, QCPGraph::lsLine);
  m_kThroughput->setPen(QPen(kThroughputColor, 1.2, Qt::DashLine));

  m_budgetLine = verticalLine(m_plot, m_left);
  m_kLine = verticalLine(m_plot, m_right);
  m_curveMessage = new QCPItemText(m_plot);
  m_curveMessage->setClipAxisRect(m_right);
  m_curveMessage->position->setType(QCPItemPosition::ptAxisRectRatio);
  m_curveMessage->position->setAxisRect(m_right);
  m_curveMessage->position->setCoords(0.5, 0.5);
  m_curveMessage->setVisible(false);
  // Laid out again at every replot: the message follows the k chart's width.
  connect(m_plot, &QCustomPlot::afterLayout, this,
          [this] { wrapInto(m_curveMessage, m_right, m_curveMessageText, 8); });

  for (QCPAxis* a : {budget, thr, kAxis}) {
    connect(a, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this](const QCPRange&) {
      if (!m_settingRange) m_autoLeft = false;
    });
  }
  for (QCPAxis* a : {kx, ty, ry}) {
    connect(a, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this](const QCPRange&) {
      if (!m_settingRange) m_autoRight = false;
    });
  }
  connect(m_plot, &QCustomPlot::plottableClick, this, &TradeoffView::onClick);
  connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this](QMouseEvent* e) {
    if (m_left->rect().contains(e->pos())) {
      m_autoLeft = true;
      fitSweep();
    } else if (m_right->rect().contains(e->pos())) {
      m_autoRight = true;
      fitCurve();
    }
    replotWhenShown(m_plot);
  });
}

void TradeoffView::clearSweep() {
  m_sweep = {};
  m_autoLeft = true;
  redrawSweep();
}

void TradeoffView::addPoint(std::int64_t budget, std::int64_t k, double throughput, bool feasible) {
  m_sweep.add({budget, feasible ? k : 0, feasible ? throughput : 0, 0, feasible});
  redrawSweep();
}

void TradeoffView::redrawSweep() {
  QVector<double> bx, by, kx, ky, ix, iy;
  for (const SweepPoint& p : m_sweep.points) {
    const double x = static_cast<double>(p.budget) / kMiB;
    if (p.feasible) {
      bx.push_back(x);
      by.push_back(p.throughput);
      kx.push_back(x);
      ky.push_back(static_cast<double>(p.k));
    } else {
      ix.push_back(x);
      iy.push_back(0);
    }
  }
  m_throughput->setData(bx, by, true);
  m_k->setData(kx, ky, true);
  m_infeasible->setData(ix, iy, true);
  if (m_autoLeft) fitSweep();
  replotWhenShown(m_plot);
}

void TradeoffView::fitSweep() {
  m_settingRange = true;
  double lo = 0, hi = 0, thr = 0, kMax = 1;
  bool any = false;
  for (const SweepPoint& p : m_sweep.points) {
    const double x = static_cast<double>(p.budget) / kMiB;
    lo = any ? std::min(lo, x) : x;
    hi = any ? std::max(hi, x) : x;
    any = true;
    thr = std::max(thr, p.throughput);
    kMax = std::max(kMax, static_cast<double>(p.k));
  }
  if (m_budget > 0) {
    const double x = static_cast<double>(m_budget) / kMiB;
    lo = any ? std::min(lo, x) : x;
    hi = any ? std::max(hi, x) : x;
    any = true;
  }
  if (any) m_left->axis(QCPAxis::atBottom)->setRange(padded(lo, hi, true));
  m_left->axis(QCPAxis::atLeft)->setRange(0, thr > 0 ? thr * 1.1 : 1);
  m_left->axis(QCPAxis::atRight)->setRange(0, kMax * 1.1);
  m_settingRange = false;
}

void TradeoffView::setCurrentBudget(std::int64_t budget) {
  m_budget = budget;
  const double x = static_cast<double>(budget) / kMiB;
  m_budgetLine->point1->setCoords(x, 0);
  m_budgetLine->point2->setCoords(x, 1);
  m_budgetLine->setVisible(budget > 0);
  if (m_autoLeft) fitSweep();
  replotWhenShown(m_plot);
}

void TradeoffView::setBatchCurve(const BatchCurve& curve) {
  m_curve = curve;
  QVector<double> kx, ty, kx2, ry;
  for (const BatchPoint& p : curve.points) {
    if (!p.trainable) continue;
    kx.push_back(static_cast<double>(p.k));
    ty.push_back(p.t_iter * 1e3);
    kx2.push_back(static_cast<double>(p.k));
    ry.push_back(p.throughput);
  }
  m_tIter->setData(kx, ty, true);
  m_kThroughput->setData(kx2, ry, true);
  const bool log = !curve.points.empty() && curve.points.back().k >= 32;
  m_settingRange = true;  // a new scale type moves the range: not the user's zoom
  setLog(m_right->axis(QCPAxis::atBottom), log);
  m_settingRange = false;
  m_kLine->setVisible(curve.chosen_k > 0);
  m_kLine->point1->setCoords(static_cast<double>(curve.chosen_k), 0);
  m_kLine->point2->setCoords(static_cast<double>(curve.chosen_k), 1);
  const bool empty = kx.isEmpty();
  m_curveMessage->setVisible(empty);
  m_curveMessageText = curve.reason.empty() ? QStringLiteral("no k fits this budget")
                                            : QString::fromStdString(curve.reason);
  wrapInto(m_curveMessage, m_right, m_curveMessageText, 8);
  if (m_autoRight) fitCurve();
  replotWhenShown(m_plot);
}

void TradeoffView::fitCurve() {
  m_settingRange = true;
  double kLo = 1, kHi = 1, tHi = 0, rHi = 0;
  bool any = false;
  for (const BatchPoint& p : m_curve.points) {
    if (!p.trainable) continue;
    const double k = static_cast<double>(p.k);
    kLo = any ? std::min(kLo, k) : k;
    kHi = any ? std::max(kHi, k) : k;
    any = true;
    tHi = std::max(tHi, p.t_iter * 1e3);
    rHi = std::max(rHi, p.throughput);
  }
  QCPAxis* kx = m_right->axis(QCPAxis::atBottom);
  kx->setRange(padded(kLo, kHi, kx->scaleType() == QCPAxis::stLogarithmic));
  m_right->axis(QCPAxis::atLeft)->setRange(0, tHi > 0 ? tHi * 1.1 : 1);
  m_right->axis(QCPAxis::atRight)->setRange(0, rHi > 0 ? rHi * 1.1 : 1);
  m_settingRange = false;
}

int TradeoffView::sweepPointsDrawn() const {
  return m_throughput->dataCount() + m_infeasible->dataCount();
}

int TradeoffView::batchPointsDrawn() const {
  return m_tIter->dataCount();
}

void TradeoffView::onClick(QCPAbstractPlottable* plottable, int dataIndex, QMouseEvent*) {
  auto* graph = qobject_cast<QCPGraph*>(plottable);
  if (!graph || dataIndex < 0 || dataIndex >= graph->dataCount()) return;
  const double key = graph->data()->at(dataIndex)->key;
  if (graph == m_throughput || graph == m_k || graph == m_infeasible) {
    if (auto p = m_sweep.nearest(key * kMiB)) emit budgetChosen(p->budget);
  } else if (graph == m_tIter || graph == m_kThroughput) {
    emit batchChosen(std::llround(key));
  }
}

void TradeoffView::setPlan(const ShownPlan& plan) {
  setCurrentBudget(plan.request.budget);
  if (!plan.result.trainable) {
    BatchCurve none;
    none.budget = plan.request.budget;
    none.reason = plan.result.reason;
    setBatchCurve(none);
  }
}

}  // namespace swapscope
