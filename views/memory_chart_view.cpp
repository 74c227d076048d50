// SPDX-License-Identifier: MIT
#include "views/memory_chart_view.h"

#include "common/bytes.h"
#include "views/replot.h"
#include "views/text_wrap.h"

#include <algorithm>
#include <cmath>

#include <qcustomplot.h>
#include <QVBoxLayout>

namespace swapscope {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

/// Each fixed policy in its own colour, whether it is drawn beside a plan (thin) or, without a
/// run database, as one of the curves the analysis compares (the plan itself is near-black).
QColor policyColor(const MemorySeries& s) {
  if (s.measured) return QColor(0xe3, 0x77, 0xc2);
  if (s.policy.rfind("keep-all", 0) == 0) return QColor(0xd6, 0x27, 0x28);
  if (s.policy.rfind("swap-all", 0) == 0) return QColor(0x1f, 0x77, 0xb4);
  if (s.policy == "vdnn-conv") return QColor(0x2c, 0xa0, 0x2c);
  if (s.policy == "recompute-light") return QColor(0x8c, 0x56, 0x4b);
  if (!s.reference) return QColor(0x1f, 0x1f, 0x1f);
  return QColor(0x2c, 0xa0, 0x2c);
}

// The spans' orange (0xff7f0e) at 16 % over the plot's white, its outline at 35 % over that, and
// a selected span at 59 %, pre-blended: stacked spans never overlap, so opaque colours look the
// same as translucent ones and cost far less to fill.
const QColor kSpanColor(0xff, 0xeb, 0xd9);
const QColor kSpanOutline(0xff, 0xc5, 0x91);
const QColor kSpanSelected(0xff, 0xb4, 0x71);
// Recomputed FMs' spans: olive (0xbcbd22), pre-blended the same way.
const QColor kRemakeColor(0xf4, 0xf5, 0xdc);
const QColor kRemakeOutline(0xe0, 0xe1, 0x9a);

}  // namespace

/// The data's spans, stacked: the band of each FM off the device sits on the ones before it, so
/// the shaded height at a step is the bytes the plan holds on the host there, with the bytes it
/// will re-make above them in their own colour. Drawn beneath the grid in one batched call per
/// colour: a QCustomPlot item per span (hundreds for ResNet-152) made the Memory view's replot
/// the slowest part of a budget change.
class MemoryChartView::SpanLayer : public QCPLayerable {
 public:
  SpanLayer(QCustomPlot* plot, const std::vector<SwapSpan>* spans, const int* selected)
      : QCPLayerable(plot, QStringLiteral("background")), m_spans(spans), m_selected(selected) {}
  int m_drawn = 0, m_drawnSelected = 0, m_drawnRecomputed = 0;  ///< what the last draw drew

 protected:
  void applyDefaultAntialiasingHint(QCPPainter* painter) const override {
    painter->setAntialiasing(false);  // axis-aligned rectangles
  }
  QRect clipRect() const override { return mParentPlot->axisRect()->rect(); }
  void draw(QCPPainter* painter) override {
    const QCPAxis* x = mParentPlot->xAxis;
    const QCPAxis* y = mParentPlot->yAxis;
    QVector<QRectF> rects, remade, selected;
    double offset = 0;
    for (const SwapSpan& span : *m_spans) {
      const double height = static_cast<double>(span.bytes) / kMiB;
      const QRectF r =
          QRectF(
              QPointF(x->coordToPixel(span.release_step + 0.5), y->coordToPixel(offset + height)),
              QPointF(x->coordToPixel(span.prefetch_step - 0.5), y->coordToPixel(offset)))
              .normalized();
      offset += height;
      (*m_selected >= 0 && span.layer == *m_selected ? selected
       : span.recomputed                             ? remade
                                                     : rects)
          .push_back(r);
    }
    painter->setPen(QPen(kSpanOutline, 0));
    painter->setBrush(kSpanColor);
    painter->drawRects(rects);
    painter->setPen(QPen(kRemakeOutline, 0));
    painter->setBrush(kRemakeColor);
    painter->drawRects(remade);
    painter->setPen(QPen(kSpanOutline, 0));
    painter->setBrush(kSpanSelected);
    painter->drawRects(selected);
    m_drawn = static_cast<int>(rects.size() + remade.size() + selected.size());
    m_drawnRecomputed = static_cast<int>(remade.size());
    m_drawnSelected = static_cast<int>(selected.size());
  }

 private:
  const std::vector<SwapSpan>* m_spans;
  const int* m_selected;
};

int MemoryChartView::drawnSpans() const {
  return m_spanLayer->m_drawn;
}

int MemoryChartView::drawnSelectedSpans() const {
  return m_spanLayer->m_drawnSelected;
}

QString MemoryChartView::noteText() const {
  return m_note->visible() ? m_note->text() : QString();
}

int MemoryChartView::drawnRecomputedSpans() const {
  return m_spanLayer->m_drawnRecomputed;
}

MemoryChartView::MemoryChartView(QWidget* parent)
    : PlanView(parent), m_plot(new QCustomPlot(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_plot);
  m_plot->xAxis->setLabel("step (forward 1..N, backward N+1..2N)");
  m_plot->yAxis->setLabel("resident memory (MiB)");
  // The legend gets its own row above the axis rect: it can never cover the budget line.
  m_plot->legend->setVisible(true);
  m_plot->axisRect()->insetLayout()->take(m_plot->legend);
  m_plot->plotLayout()->insertRow(0);
  m_plot->plotLayout()->addElement(0, 0, m_plot->legend);
  m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
  m_plot->legend->setWrap(4);  // a measured curve makes five entries: a second row
  m_plot->plotLayout()->setRowStretchFactor(0, 0.001);
  m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  m_spanLayer = new SpanLayer(m_plot, &m_data.spans, &m_selected);
  m_budgetLine = new QCPItemStraightLine(m_plot);
  m_budgetLine->setPen(QPen(Qt::black, 1.5, Qt::DashLine));
  m_budgetLine->setLayer("overlay");
  m_turnLine = new QCPItemStraightLine(m_plot);
  m_turnLine->setPen(QPen(Qt::gray, 1, Qt::DotLine));
  m_note = new QCPItemText(m_plot);
  m_note->position->setType(QCPItemPosition::ptAxisRectRatio);
  m_note->position->setCoords(0.5, 0.4);
  m_note->setColor(QColor(0xc0, 0x20, 0x20));
  m_note->setFont(QFont(font().family(), 11, QFont::Bold));
  m_note->setVisible(false);
  m_budgetAbove = new QCPItemText(m_plot);
  m_budgetAbove->position->setType(QCPItemPosition::ptAxisRectRatio);
  m_budgetAbove->position->setCoords(0.99, 0.01);
  m_budgetAbove->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
  m_budgetAbove->setText({});
  m_budgetAbove->setLayer("overlay");
  m_budgetAbove->setVisible(false);
  connect(m_plot, &QCustomPlot::mouseWheel, this, [this] { m_userZoomed = true; });
  connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
    if ((e->buttons() & Qt::LeftButton) && (e->pos() - m_pressPos).manhattanLength() > 4)
      m_userZoomed = true;
  });
  connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this] {
    m_userZoomed = false;
    fitAxes();
    replotWhenShown(m_plot);
  });
  connect(m_plot, &QCustomPlot::mousePress, this,
          [this](QMouseEvent* e) { m_pressPos = e->pos(); });
  connect(m_plot, &QCustomPlot::mouseRelease, this, &MemoryChartView::onClick);
  // Laid out again at every replot: the note follows the axis rect's width.
  connect(m_plot, &QCustomPlot::afterLayout, this, &MemoryChartView::wrapNote);
}

void MemoryChartView::wrapNote() {
  // The note is clipped to the axis rect: its lines are kept inside it, with a margin.
  wrapInto(m_note, m_plot->axisRect(), m_noteText, kNoteMargin);
}

void MemoryChartView::setOverlay(std::shared_ptr<const MeasuredOverlay> overlay) {
  m_overlay = std::move(overlay);
  setData(MemoryChartData(m_plan));
}

void MemoryChartView::setPlan(const ShownPlan& plan) {
  setData(std::any_cast<const MemoryChartData&>(plan.data));
}

void MemoryChartView::setData(const MemoryChartData& data) {
  m_plan = data;
  m_data = data;
  if (m_overlay && m_overlay->memory && m_overlay->memory->bytes.size() == m_data.step_layer.size())
    m_data.series.push_back(*m_overlay->memory);
  const MemoryChartData& chart = m_data;
  m_plot->clearGraphs();
  double top = 0;
  for (const MemorySeries& s : chart.series) {
    QCPGraph* g = m_plot->addGraph();
    g->setName(QString::fromStdString(s.policy) +
               QStringLiteral(": peak %1 MiB").arg(static_cast<double>(s.peak) / kMiB, 0, 'f', 1));
    QPen pen(policyColor(s), s.reference ? 1.0 : (s.measured ? 1.5 : 2.0));
    if (s.reference) pen.setStyle(Qt::DashDotLine);
    if (s.measured) pen.setStyle(Qt::DashLine);  // the prediction stays visible beneath it
    g->setPen(pen);
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
  // The budget's legend entry: an empty graph with the budget line's pen.
  m_budgetKey = m_plot->addGraph();
  m_budgetKey->setPen(m_budgetLine->pen());
  m_turnLine->point1->setCoords(chart.forward_steps + 0.5, 0);
  m_turnLine->point2->setCoords(chart.forward_steps + 0.5, 1);
  m_noteText = QString::fromStdString(chart.untrainable);
  wrapNote();
  m_note->setVisible(!chart.untrainable.empty());
  m_curveTop = top;
  setBudget(chart.budget);
  selectLayer(m_selected);
}

void MemoryChartView::setBudget(std::int64_t budget) {
  m_data.budget = budget;
  const double y = static_cast<double>(budget) / kMiB;
  m_budgetLine->point1->setCoords(0, y);
  m_budgetLine->point2->setCoords(1, y);
  const bool above = budgetAboveChart();
  const QString shown = QString::fromStdString(formatBytes(budget));
  if (m_budgetKey) {
    // In the unit that shows it (1 B, 48.0 MiB, 1.00 TiB): MiB with one decimal printed a
    // budget of bytes as 0.0 MiB and a TiB as seven digits.
    m_budgetKey->setName(
        QStringLiteral("budget %1%2")
            .arg(shown, above ? QStringLiteral(" (above the curves)") : QString()));
  }
  m_budgetAbove->setText(QStringLiteral("budget %1 above").arg(shown));
  m_budgetAbove->setVisible(above);
  if (!m_userZoomed) fitAxes();
  replotWhenShown(m_plot);
}

bool MemoryChartView::budgetAboveChart() const {
  const double budget = static_cast<double>(m_data.budget) / kMiB;
  return m_curveTop > 0 && budget > kBudgetHeadroom * m_curveTop;
}

void MemoryChartView::fitAxes() {
  m_plot->xAxis->setRange(0, 2.0 * m_data.forward_steps + 1);
  // The axis follows the curves; a budget not far above them is shown too, a larger one is
  // named above the chart instead of squashing the curves to the bottom.
  const double budget = static_cast<double>(m_data.budget) / kMiB;
  const double top = budgetAboveChart() ? m_curveTop : std::max(m_curveTop, budget);
  m_plot->yAxis->setRange(0, std::max(top, 1e-3) * 1.08);
}

void MemoryChartView::selectLayer(int layer) {
  m_selected = layer;
  for (QCPItemStraightLine* line : m_selectionLines)
    m_plot->removeItem(line);
  m_selectionLines.clear();
  if (layer >= 0) {
    for (std::size_t s = 0; s < m_data.step_layer.size(); ++s) {
      if (m_data.step_layer[s] != layer) continue;
      auto* line = new QCPItemStraightLine(m_plot);
      line->setPen(QPen(QColor(0x94, 0x67, 0xbd), 1.5));
      line->point1->setCoords(static_cast<double>(s + 1), 0);
      line->point2->setCoords(static_cast<double>(s + 1), 1);
      m_selectionLines.push_back(line);
    }
  }
  replotWhenShown(m_plot);
}

void MemoryChartView::onClick(QMouseEvent* event) {
  // A drag is not a click.
  if (event->button() != Qt::LeftButton || (event->pos() - m_pressPos).manhattanLength() > 4)
    return;
  const double x = m_plot->xAxis->pixelToCoord(event->pos().x());
  const long step = std::lround(x);
  if (step < 1 || step > static_cast<long>(m_data.step_layer.size())) return;
  const int layer = m_data.step_layer[static_cast<std::size_t>(step - 1)];
  if (layer < 0) return;
  selectLayer(layer);
  emit layerSelected(layer);
}

}  // namespace swapscope
