// SPDX-License-Identifier: MIT
#include "views/streams_view.h"
#include "views/replot.h"
#include "views/text_wrap.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <qcustomplot.h>
#include <QToolTip>
#include <QVBoxLayout>

#include "common/format.h"

namespace swapscope {
namespace {

constexpr double kMs = 1e3;
constexpr double kHalfHeight = 0.35;  ///< a bar spans lane +- this
/// With a measured iteration: the simulated bars span lane + [kSimLow, kHalfHeight], the measured
/// ones the thinner row lane + [kMeasuredLow, kMeasuredHigh] beneath them.
constexpr double kSimLow = -0.05;
constexpr double kMeasuredLow = -0.42, kMeasuredHigh = -0.15;
const char* const kKindProperty = "swapscopeItem";

double laneY(StreamLane lane) {
  switch (lane) {
    case StreamLane::Compute:
      return 2;
    case StreamLane::SwapOut:
      return 1;
    case StreamLane::SwapIn:
      return 0;
  }
  return 0;
}

QColor barColor(StreamBarKind kind) {
  switch (kind) {
    case StreamBarKind::Forward:
      return QColor(0x4c, 0x72, 0xb0);
    case StreamBarKind::Backward:
      return QColor(0xdd, 0x84, 0x52);
    case StreamBarKind::Update:
      return QColor(0x93, 0x93, 0x93);
    case StreamBarKind::Offload:
      return QColor(0x55, 0xa8, 0x68);
    case StreamBarKind::Prefetch:
      return QColor(0x81, 0x72, 0xb3);
    case StreamBarKind::Load:
      return QColor(0xb8, 0xb8, 0xb8);
    case StreamBarKind::Remake:
      return QColor(0xbc, 0xbd, 0x22);  // the Memory view's recomputed spans, full strength
  }
  return Qt::gray;
}

QString ms(double seconds) {
  return QString::fromStdString(formatMilliseconds(seconds)) + QStringLiteral(" ms");
}

bool isTransfer(StreamBarKind kind) {
  return kind == StreamBarKind::Offload || kind == StreamBarKind::Prefetch;
}

constexpr int kBarKinds = 7;

/// Every bar and stall of a StreamsData, drawn in one pass: one drawRects call per bar kind and
/// one for the stalls, those outside the time axis's range skipped, the selected layer's bars
/// outlined.
class BarLayer : public QCPLayerable {
 public:
  BarLayer(QCustomPlot* plot, const StreamsData* data,
           const std::shared_ptr<const MeasuredOverlay>* overlay, const int* selected)
      : QCPLayerable(plot), m_data(data), m_overlay(overlay), m_selected(selected) {}
  /// What the last draw drew: stall markers, and offload + prefetch bars; of the measured
  /// iteration, its bars (every kind) and its stall markers.
  int m_drawnStalls = 0, m_drawnTransfers = 0, m_drawnMeasuredBars = 0, m_drawnMeasuredStalls = 0;

 protected:
  void applyDefaultAntialiasingHint(QCPPainter* painter) const override {
    // Axis-aligned rectangles on whole pixels (antialiased, a redraw took several times as
    // long); one narrower than half a pixel is drawn when zoomed in.
    painter->setAntialiasing(false);
  }
  QRect clipRect() const override { return mParentPlot->axisRect()->rect(); }
  void draw(QCPPainter* painter) override {
    const QCPAxis* x = mParentPlot->xAxis;
    const QCPAxis* y = mParentPlot->yAxis;
    const QCPRange range = x->range();
    std::array<QVector<QRectF>, kBarKinds> rects;
    QVector<QRectF> selected;
    const StreamsData& m = measuredStreams(m_overlay->get());
    const bool measured = m.hasMeasured();
    const double low = measured ? kSimLow : -kHalfHeight;
    for (const StreamBar& b : m_data->bars) {
      if (b.finish * kMs < range.lower || b.start * kMs > range.upper) continue;
      const double lane = laneY(b.lane);
      QRectF r(QPointF(x->coordToPixel(b.start * kMs), y->coordToPixel(lane + kHalfHeight)),
               QPointF(x->coordToPixel(b.finish * kMs), y->coordToPixel(lane + low)));
      r = r.normalized();
      rects[static_cast<std::size_t>(b.kind)].push_back(r);
      if (*m_selected >= 0 && b.layer == *m_selected) selected.push_back(r);
    }
    // Compute bars touch each other: a light edge separates them. Transfers are often a pixel
    // wide: an edge of their own colour keeps them visible.
    const QPen separator(QColor(255, 255, 255, 90), 0);
    for (int k = 0; k < kBarKinds; ++k) {
      const auto kind = static_cast<StreamBarKind>(k);
      const auto& list = rects[static_cast<std::size_t>(k)];
      if (list.isEmpty()) continue;
      painter->setBrush(barColor(kind));
      painter->setPen(isTransfer(kind) ? QPen(barColor(kind).darker(115), 0) : separator);
      painter->drawRects(list);
    }
    // The measured iteration: a thinner, lighter row beneath each lane.
    std::array<QVector<QRectF>, kBarKinds> measuredRects;
    m_drawnMeasuredBars = 0;
    for (const StreamBar& b : m.measured_bars) {
      if (b.finish * kMs < range.lower || b.start * kMs > range.upper) continue;
      const double lane = laneY(b.lane);
      QRectF r(QPointF(x->coordToPixel(b.start * kMs), y->coordToPixel(lane + kMeasuredHigh)),
               QPointF(x->coordToPixel(b.finish * kMs), y->coordToPixel(lane + kMeasuredLow)));
      r = r.normalized();
      measuredRects[static_cast<std::size_t>(b.kind)].push_back(r);
      if (*m_selected >= 0 && b.layer == *m_selected) selected.push_back(r);
      ++m_drawnMeasuredBars;
    }
    for (int k = 0; k < kBarKinds; ++k) {
      const auto kind = static_cast<StreamBarKind>(k);
      const auto& list = measuredRects[static_cast<std::size_t>(k)];
      if (list.isEmpty()) continue;
      QColor fill = barColor(kind);
      fill.setAlpha(150);
      painter->setBrush(fill);
      painter->setPen(isTransfer(kind) ? QPen(barColor(kind).darker(115), 0) : separator);
      painter->drawRects(list);
    }
    if (!selected.isEmpty()) {
      painter->setBrush(Qt::NoBrush);
      painter->setPen(QPen(Qt::black, 2.5));
      painter->drawRects(selected);
    }
    // Stalls on the compute lane, over the bars.
    QVector<QRectF> stalls;
    const double lane = laneY(StreamLane::Compute);
    for (const StallMarker& s : m_data->stalls) {
      if (s.end * kMs < range.lower || s.start * kMs > range.upper) continue;
      QRectF r(QPointF(x->coordToPixel(s.start * kMs), y->coordToPixel(lane + kHalfHeight)),
               QPointF(x->coordToPixel(s.end * kMs), y->coordToPixel(lane + low)));
      r = r.normalized();
      if (r.width() < 1) r.setWidth(1);  // every stall shows, however short
      stalls.push_back(r);
    }
    // Opaque, without an outline: a stall is the compute lane's idle time, with no bar beneath
    // it (translucent or outlined, the stalls of ResNet-152 cost several times all the bars).
    painter->setBrush(QColor(0xd0, 0x18, 0x18));
    painter->setPen(Qt::NoPen);
    painter->drawRects(stalls);
    m_drawnStalls = static_cast<int>(stalls.size());
    // The measured stalls in the measured row, a darker red.
    QVector<QRectF> measuredStalls;
    for (const StallMarker& s : m.measured_stalls) {
      if (s.end * kMs < range.lower || s.start * kMs > range.upper) continue;
      QRectF r(QPointF(x->coordToPixel(s.start * kMs), y->coordToPixel(lane + kMeasuredHigh)),
               QPointF(x->coordToPixel(s.end * kMs), y->coordToPixel(lane + kMeasuredLow)));
      r = r.normalized();
      if (r.width() < 1) r.setWidth(1);
      measuredStalls.push_back(r);
    }
    painter->setBrush(QColor(0x80, 0x00, 0x00));
    painter->drawRects(measuredStalls);
    m_drawnMeasuredStalls = static_cast<int>(measuredStalls.size());
    m_drawnTransfers =
        static_cast<int>(rects[static_cast<std::size_t>(StreamBarKind::Offload)].size() +
                         rects[static_cast<std::size_t>(StreamBarKind::Prefetch)].size());
  }

 private:
  const StreamsData* m_data;
  const std::shared_ptr<const MeasuredOverlay>* m_overlay;
  const int* m_selected;
};

}  // namespace

StreamsView::StreamsView(QWidget* parent) : PlanView(parent), m_plot(new QCustomPlot(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_plot);
  m_plot->setMouseTracking(true);
  m_plot->xAxis->setLabel(QStringLiteral("time in the simulated iteration (ms)"));
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  ticker->addTick(laneY(StreamLane::Compute), QStringLiteral("compute"));
  ticker->addTick(laneY(StreamLane::SwapOut), QStringLiteral("swap-out"));
  ticker->addTick(laneY(StreamLane::SwapIn), QStringLiteral("swap-in"));
  m_plot->yAxis->setTicker(ticker);
  m_plot->yAxis->setRange(-0.6, 2.9);
  m_plot->yAxis->grid()->setVisible(false);
  m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  m_plot->axisRect()->setRangeDrag(Qt::Horizontal);
  m_plot->axisRect()->setRangeZoom(Qt::Horizontal);
  m_message = new QCPItemText(m_plot);
  m_message->position->setType(QCPItemPosition::ptAxisRectRatio);
  m_message->position->setCoords(0.5, 0.5);
  m_message->setVisible(false);
  m_message->setProperty(kKindProperty, QStringLiteral("message"));
  // Laid out again at every replot: the message follows the chart's width.
  connect(m_plot, &QCustomPlot::afterLayout, this,
          [this] { wrapInto(m_message, m_plot->axisRect(), m_messageText, 8); });
  m_plot->plotLayout()->insertRow(0);
  m_title = new QCPTextElement(m_plot, QString(), QFont(font().family(), font().pointSize() + 1));
  m_bars = new BarLayer(m_plot, &m_data, &m_overlay, &m_selected);
  m_plot->plotLayout()->addElement(0, 0, m_title);

  connect(m_plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
          [this](const QCPRange&) {
            if (!m_settingRange) m_autoRange = false;
            placeStallLabels();
          });
  // Labels are placed in pixels: after every layout (resize, save at another size).
  connect(m_plot, &QCustomPlot::afterLayout, this, &StreamsView::placeStallLabels);
  connect(m_plot, &QCustomPlot::mouseMove, this, &StreamsView::onMouseMove);
  connect(m_plot, &QCustomPlot::mousePress, this, &StreamsView::onMousePress);
  connect(m_plot, &QCustomPlot::mouseRelease, this, &StreamsView::onMouseRelease);
  connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this](QMouseEvent*) {
    m_autoRange = true;
    fitAll();
    replotWhenShown(m_plot);
  });
}

void StreamsView::setOverlay(std::shared_ptr<const MeasuredOverlay> overlay) {
  m_overlay = std::move(overlay);
  setData(StreamsData(m_data));
}

void StreamsView::setPlan(const ShownPlan& plan) {
  setData(std::any_cast<const StreamsData&>(plan.data));
}

void StreamsView::setData(const StreamsData& data) {
  const bool sameNetwork = data.network_key == m_data.network_key;
  m_data = data;
  const StreamsData& m = measured();
  if (!sameNetwork) m_autoRange = true;

  // Stall labels are pooled: a drag of the budget re-plans many times and their count rarely
  // changes. Only those with room are shown (placeStallLabels).
  while (m_stallLabels.size() < m_data.stalls.size()) {
    auto* t = new QCPItemText(m_plot);
    t->setProperty(kKindProperty, QStringLiteral("stall-label"));
    t->setSelectable(false);
    t->setColor(QColor(0xb0, 0x00, 0x00));
    t->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
    m_stallLabels.push_back(t);
  }
  const double yc = laneY(StreamLane::Compute);
  for (std::size_t i = 0; i < m_stallLabels.size(); ++i) {
    m_stallLabels[i]->setVisible(false);
    if (i >= m_data.stalls.size()) continue;
    const StallMarker& s = m_data.stalls[i];
    m_stallLabels[i]->position->setCoords((s.start + s.end) / 2 * kMs, yc + kHalfHeight + 0.05);
    m_stallLabels[i]->setText(ms(s.seconds()));
  }

  m_message->setVisible(!m_data.trainable);
  if (!m_data.trainable) {
    m_messageText = QStringLiteral("No plan: ") + QString::fromStdString(m_data.reason);
    wrapInto(m_message, m_plot->axisRect(), m_messageText, 8);
  }
  QString title = m_data.trainable
                      ? QString::fromStdString(m_data.title) +
                            QStringLiteral(
                                ": t_iter %1, stall %2 (hand-offs included), %3 stall, "
                                "%4 swap transfers")
                                .arg(ms(m_data.t_iter), ms(m_data.total_stall))
                                .arg(m_data.stalledSteps() == 1
                                         ? QStringLiteral("1 step")
                                         : QStringLiteral("%1 steps").arg(m_data.stalledSteps()))
                                .arg(m_data.swapTransfers())
                      : QString::fromStdString(m_data.title);
  if (m.hasMeasured()) {
    const int stalled = StreamsData::stepsMarked(m.measured_stalls);
    title +=
        QStringLiteral(
            "\nthin rows, %1: t_iter %2, stall %3, %4 stalled (> %5 % of "
            "t_iter)")
            .arg(QString::fromStdString(m.measured_title), ms(m.measured_t_iter),
                 ms(m.measured_stall))
            .arg(stalled == 1 ? QStringLiteral("1 step") : QStringLiteral("%1 steps").arg(stalled))
            .arg(m.measured_threshold * 100, 0, 'f', 0);
  }
  m_title->setText(title);
  if (m.hasMeasured() != m_measuredLabel) {
    // Only a change of overlay touches the label (the Timeline sets its own).
    m_measuredLabel = m.hasMeasured();
    m_plot->xAxis->setLabel(
        m_measuredLabel ? QStringLiteral("time in the iteration, simulated and measured (ms)")
                        : QStringLiteral("time in the simulated iteration (ms)"));
  }
  if (m_autoRange) fitAll();
  placeStallLabels();
  replotWhenShown(m_plot);
}

void StreamsView::fitAll() {
  m_settingRange = true;
  const double tIter = std::max(m_data.t_iter, measured().measured_t_iter);
  const double end = tIter > 0 ? tIter * kMs : 1.0;
  m_plot->xAxis->setRange(-0.01 * end, end * 1.01);
  m_settingRange = false;
  placeStallLabels();
}

void StreamsView::placeStallLabels() {
  // Label the longest stalls first, and only where the label has room: zoomed out, a network
  // with hundreds of short stalls shows the few that matter; zoomed in, every one.
  const QFontMetrics fm(font());
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < m_data.stalls.size() && i < m_stallLabels.size(); ++i)
    order.push_back(i);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return m_data.stalls[a].seconds() > m_data.stalls[b].seconds();
  });
  std::vector<std::pair<double, double>> taken;
  for (const std::size_t i : order) {
    const StallMarker& s = m_data.stalls[i];
    const double centre = m_plot->xAxis->coordToPixel((s.start + s.end) / 2 * kMs);
    const double half = fm.horizontalAdvance(m_stallLabels[i]->text()) / 2.0 + 4;
    // Whole labels only, inside the axis rectangle: a label that would be cut at an edge (a
    // stall at t = 0) moves inside it while its stall is on screen.
    const QRect area = m_plot->axisRect()->rect();
    const bool shown = centre >= area.left() && centre <= area.right();
    const double x =
        std::clamp(centre, area.left() + half, std::max(area.left() + half, area.right() - half));
    bool free = shown && x - half >= area.left() && x + half <= area.right();
    if (free) {
      m_stallLabels[i]->position->setCoords(m_plot->xAxis->pixelToCoord(x),
                                            m_stallLabels[i]->position->value());
    }
    for (const auto& [lo, hi] : taken) {
      if (x + half > lo && x - half < hi) {
        free = false;
        break;
      }
    }
    m_stallLabels[i]->setVisible(free);
    if (free) taken.emplace_back(x - half, x + half);
  }
}

int StreamsView::stallMarkerCount() const {
  return static_cast<const BarLayer*>(m_bars)->m_drawnStalls;
}

int StreamsView::transferBarCount() const {
  return static_cast<const BarLayer*>(m_bars)->m_drawnTransfers;
}

int StreamsView::measuredBarCount() const {
  return static_cast<const BarLayer*>(m_bars)->m_drawnMeasuredBars;
}

int StreamsView::measuredStallCount() const {
  return static_cast<const BarLayer*>(m_bars)->m_drawnMeasuredStalls;
}

QString StreamsView::toolTipAt(double timeMs, double laneValue, double slackMs) const {
  const auto lane = static_cast<int>(std::lround(laneValue));
  if (std::abs(laneValue - lane) > kHalfHeight + 0.1 || lane < 0 || lane > 2) return {};
  const StreamLane which = lane == 2   ? StreamLane::Compute
                           : lane == 1 ? StreamLane::SwapOut
                                       : StreamLane::SwapIn;
  // The measured row beneath the lane, when there is one.
  const StreamsData& m = this->measured();
  const bool measured = m.hasMeasured() && laneValue - lane < (kSimLow + kMeasuredHigh) / 2;
  const double t = timeMs / kMs;
  if (which == StreamLane::Compute) {
    for (const StallMarker& s : measured ? m.measured_stalls : m_data.stalls) {
      if (t >= s.start && t <= s.end) {
        return QStringLiteral("%6stall before step %1 (%2)\nfrom %3 to %4: %5 waiting for t_ready")
            .arg(s.step)
            .arg(QString::fromStdString(s.label), ms(s.start), ms(s.end), ms(s.seconds()),
                 measured ? QStringLiteral("measured: ") : QString());
      }
    }
  }
  const StreamBar* b =
      measured ? m.measuredBarAt(which, t, slackMs / kMs) : m_data.barAt(which, t, slackMs / kMs);
  if (!b) return {};
  QString text = QStringLiteral("%1 (layer %2)\n%3")
                     .arg(QString::fromStdString(b->label))
                     .arg(b->layer)
                     .arg(QLatin1String(streamBarKindName(b->kind)));
  if (b->kind == StreamBarKind::Update) text = QStringLiteral("SGD update");
  if (b->lane == StreamLane::Compute && b->step > 0) {
    text += QStringLiteral(", step %1").arg(b->step);
  } else if (b->lane != StreamLane::Compute) {
    text += QStringLiteral(" of %1 MiB, opened at step %2")
                .arg(static_cast<double>(b->bytes) / (1024.0 * 1024.0), 0, 'f', 2)
                .arg(b->step);
  }
  text += QStringLiteral("\n%4start %1, finish %2 (%3)")
              .arg(ms(b->start), ms(b->finish), ms(b->finish - b->start),
                   measured ? QStringLiteral("measured: ") : QString());
  if (b->lane == StreamLane::Compute && b->step > 0)
    text += QStringLiteral("\nstall before it: %1").arg(ms(b->stall));
  return text;
}

void StreamsView::onMouseMove(QMouseEvent* event) {
  const double x = m_plot->xAxis->pixelToCoord(event->pos().x());
  const double y = m_plot->yAxis->pixelToCoord(event->pos().y());
  const double slack = std::abs(m_plot->xAxis->pixelToCoord(3) - m_plot->xAxis->pixelToCoord(0));
  const QString tip = toolTipAt(x, y, slack);
  if (tip.isEmpty()) {
    QToolTip::hideText();
  } else {
    QToolTip::showText(event->globalPosition().toPoint(), tip, m_plot);
  }
}

void StreamsView::onMousePress(QMouseEvent* event) {
  m_pressPos = event->pos();
}

void StreamsView::onMouseRelease(QMouseEvent* event) {
  if ((event->pos() - m_pressPos).manhattanLength() > 3) return;  // a drag, not a click
  const double t = m_plot->xAxis->pixelToCoord(event->pos().x()) / kMs;
  const double y = m_plot->yAxis->pixelToCoord(event->pos().y());
  const auto lane = static_cast<int>(std::lround(y));
  if (std::abs(y - lane) > kHalfHeight || lane < 0 || lane > 2) return;
  const StreamLane which = lane == 2   ? StreamLane::Compute
                           : lane == 1 ? StreamLane::SwapOut
                                       : StreamLane::SwapIn;
  const double slack = std::abs(m_plot->xAxis->pixelToCoord(3) - m_plot->xAxis->pixelToCoord(0));
  const StreamBar* b = m_data.barAt(which, t, slack / kMs);
  if (!b || b->layer < 0) return;
  selectLayer(b->layer);
  emit layerSelected(b->layer);
}

void StreamsView::selectLayer(int layer) {
  m_selected = layer;
  replotWhenShown(m_plot);
}

}  // namespace swapscope
