// SPDX-License-Identifier: MIT
#include "views/model_view.h"
#include "views/log_ticker.h"
#include "views/replot.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <qcustomplot.h>
#include <QComboBox>
#include <QVBoxLayout>

namespace swapscope {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
const QColor kPalette[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e),
                           QColor(0x2c, 0xa0, 0x2c), QColor(0xd6, 0x27, 0x28),
                           QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
                           QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f)};
const char* const kPointsProperty = "swapscopeMeasured";

QColor paletteColor(std::size_t i) {
  return kPalette[i % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

void setLog(QCPAxis* axis, bool log) {
  axis->setScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  if (log) {
    auto t = QSharedPointer<ReadableLogTicker>::create();
    axis->setTicker(t);
    axis->setNumberFormat(QStringLiteral("eb"));
    axis->setNumberPrecision(0);
  } else {
    axis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    axis->setNumberFormat(QStringLiteral("gb"));
    axis->setNumberPrecision(6);
  }
}

/// Shows `g` in the legend's cell (row, column): the pages lay their entries out in columns of
/// one kind each.
void placeInLegend(QCustomPlot* plot, QCPGraph* g, int row, int column) {
  plot->legend->addElement(row, column, new QCPPlottableLegendItem(plot->legend, g));
}

QString percent(double v) {
  return QString::number(v * 100, 'f', 1) + QStringLiteral(" %");
}

QString rate(double bytesPerSecond) {
  return QString::number(bytesPerSecond / 1e9, 'f', 2) + QStringLiteral(" GB/s");
}

}  // namespace

ModelView::ModelView(QWidget* parent)
    : PlanView(parent), m_box(new QComboBox(this)), m_plot(new QCustomPlot(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_box);
  layout->addWidget(m_plot);
  m_plot->plotLayout()->clear();
  m_main = new QCPAxisRect(m_plot);
  m_residuals = new QCPAxisRect(m_plot);
  m_plot->plotLayout()->addElement(
      0, 0, new QCPTextElement(m_plot, QString(), QFont(font().family(), font().pointSize() + 1)));
  // The legend in a row of its own between the title and the curves: it never covers a point
  // or a curve, whatever the page's data.
  m_plot->legend = new QCPLegend;
  m_plot->plotLayout()->addElement(1, 0, m_plot->legend);
  m_plot->plotLayout()->addElement(2, 0, m_main);
  m_plot->plotLayout()->addElement(3, 0, m_residuals);
  m_plot->plotLayout()->setRowStretchFactor(1, 0.001);
  m_plot->plotLayout()->setRowStretchFactor(2, 3);
  m_plot->plotLayout()->setRowStretchFactor(3, 1);
  auto* margins = new QCPMarginGroup(m_plot);
  m_main->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
  m_residuals->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
  m_plot->legend->setLayer(QStringLiteral("legend"));
  m_plot->legend->setVisible(true);
  m_plot->legend->setRowSpacing(0);
  m_plot->legend->setColumnSpacing(12);
  m_plot->setAutoAddPlottableToLegend(false);
  m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  m_residuals->axis(QCPAxis::atLeft)->setLabel(QStringLiteral("residual (%)"));
  // The residuals share the work axis with the curves.
  connect(m_main->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::rangeChanged),
          m_residuals->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::setRange));
  connect(m_box, qOverload<int>(&QComboBox::activated), this,
          [this](int i) { showPage(m_box->itemData(i).toInt()); });
  connect(m_plot, &QCustomPlot::plottableClick, this, &ModelView::onClick);
  connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this](QMouseEvent*) {
    m_keepRange = false;
    draw();
  });
}

void ModelView::setPlan(const ShownPlan&) {}

void ModelView::setData(const ModelData& data) {
  const bool same = data.path == m_data.path && data.structure_hash == m_data.structure_hash &&
                    data.groups.size() == m_data.groups.size();
  const std::string current = m_page >= 0 && m_page < static_cast<int>(m_data.groups.size())
                                  ? m_data.groups[static_cast<std::size_t>(m_page)].key
                                  : std::string();
  m_data = data;
  m_box->clear();
  m_box->addItem(QStringLiteral("PCIe: transfers and link model"), -1);
  for (std::size_t i = 0; i < m_data.groups.size(); ++i) {
    const ModelGroupData& g = m_data.groups[i];
    m_box->addItem(QString::fromStdString(g.label) +
                       QStringLiteral("  [%1, %2 points]")
                           .arg(QLatin1String(perf::fitFormName(g.chosen().form).data()))
                           .arg(g.points.size()),
                   static_cast<int>(i));
  }
  m_plannedIsProfiled = m_planned && m_planned->structureHash() == m_data.structure_hash;
  int page = current.empty() ? -1 : m_data.groupIndex(current);
  if (!same) {
    // A new run: start on its first per-type group (the PCIe page is one pick away).
    page = m_data.groups.empty() ? -1 : 0;
    m_selectedRunLayer = -1;
  }
  m_keepRange = same;
  m_page = page;
  m_box->setCurrentIndex(m_page + 1);
  draw();
}

void ModelView::setPlannedNetwork(const Network& net) {
  m_planned = net;
  m_plannedIsProfiled = net.structureHash() == m_data.structure_hash;
}

void ModelView::showPage(int group) {
  if (group < -1 || group >= static_cast<int>(m_data.groups.size())) return;
  if (group != m_page) m_keepRange = false;
  m_page = group;
  m_box->setCurrentIndex(group + 1);
  draw();
}

void ModelView::selectLayer(int layer) {
  if (!m_planned || layer < 0 || layer >= m_planned->size()) {
    m_selectedRunLayer = -1;
    draw();
    return;
  }
  const Layer& l = m_planned->layer(layer);
  m_selectedRunLayer = -1;
  for (std::size_t i = 0; i < m_data.layer_names.size(); ++i) {
    if (m_plannedIsProfiled && m_data.layer_names[i] == l.name)
      m_selectedRunLayer = static_cast<int>(i);
  }
  // The group the planner uses for this layer's forward step: its own curve when the network is
  // the profiled one, else its type's (FLOPs axis first, bytes axis for layers without FLOPs).
  int group = -1;
  if (m_plannedIsProfiled)
    group = m_data.groupIndex(modelGroupKey("layer", l.name, perf::StepKind::Forward));
  const std::string kind(layerKindName(l.kind));
  if (group < 0) group = m_data.groupIndex(modelGroupKey("type", kind, perf::StepKind::Forward));
  if (group < 0)
    group = m_data.groupIndex(modelGroupKey("type", kind + "@bytes", perf::StepKind::Forward));
  if (group >= 0 && group != m_page) {
    m_keepRange = false;
    m_page = group;
    m_box->setCurrentIndex(group + 1);
  }
  draw();
}

int ModelView::measuredPointsDrawn() const {
  int n = 0;
  for (int i = 0; i < m_plot->graphCount(); ++i) {
    const QCPGraph* g = m_plot->graph(i);
    if (g->valueAxis()->axisRect() == m_main && g->property(kPointsProperty).toBool())
      n += g->dataCount();
  }
  return n;
}

void ModelView::draw() {
  QCPRange keepX, keepY, keepR;
  const bool keep = m_keepRange;
  if (keep) {
    keepX = m_main->axis(QCPAxis::atBottom)->range();
    keepY = m_main->axis(QCPAxis::atLeft)->range();
    keepR = m_residuals->axis(QCPAxis::atLeft)->range();
  }
  m_plot->clearGraphs();
  m_plot->legend->clearItems();
  if (m_page >= 0 && m_page < static_cast<int>(m_data.groups.size())) {
    drawGroup(m_data.groups[static_cast<std::size_t>(m_page)]);
  } else {
    drawPcie();
  }
  if (keep) {
    m_main->axis(QCPAxis::atBottom)->setRange(keepX);
    m_main->axis(QCPAxis::atLeft)->setRange(keepY);
    m_residuals->axis(QCPAxis::atLeft)->setRange(keepR);
  }
  m_keepRange = true;  // from now on, the user's zoom of this page stays
  replotWhenShown(m_plot);
}

void ModelView::drawGroup(const ModelGroupData& g) {
  QCPAxis* x = m_main->axis(QCPAxis::atBottom);
  QCPAxis* y = m_main->axis(QCPAxis::atLeft);
  QCPAxis* rx = m_residuals->axis(QCPAxis::atBottom);
  QCPAxis* ry = m_residuals->axis(QCPAxis::atLeft);
  setLog(x, true);
  setLog(y, true);
  setLog(rx, true);
  setLog(ry, false);
  x->setLabel(g.bytes_axis ? QStringLiteral("work: output FM bytes")
                           : QStringLiteral("work: FLOPs"));
  y->setLabel(QStringLiteral("time (ms)"));
  rx->setLabel(x->label());
  const perf::Curve& chosen = g.chosen();
  if (auto* title = qobject_cast<QCPTextElement*>(m_plot->plotLayout()->element(0, 0))) {
    title->setText(QStringLiteral("%1 on %2: %3 chosen by leave-one-k-out cross-validation "
                                  "(%4 points)")
                       .arg(QString::fromStdString(g.label), QString::fromStdString(m_data.device),
                            QLatin1String(perf::fitFormName(chosen.form).data()))
                       .arg(g.points.size()));
  }

  // The measured medians, one graph per k.
  std::map<std::int64_t, std::vector<std::size_t>> byK;
  for (std::size_t i = 0; i < g.points.size(); ++i)
    byK[g.points[i].k].push_back(i);
  // The legend: the forms in the first column, the measured points three to a column after them.
  constexpr int kLegendRows = 3;
  int entry = 0;
  const auto placePoints = [&](QCPGraph* graph) {
    placeInLegend(m_plot, graph, entry % kLegendRows, 1 + entry / kLegendRows);
    ++entry;
  };
  std::size_t colour = 0;
  double tLo = 0, tHi = 0, rHi = 1;
  for (const auto& [k, idx] : byK) {
    const QColor c = paletteColor(colour++);
    QCPGraph* pts = m_plot->addGraph(x, y);
    QCPGraph* res = m_plot->addGraph(rx, ry);
    pts->setProperty(kPointsProperty, true);
    pts->setLineStyle(QCPGraph::lsNone);
    res->setLineStyle(QCPGraph::lsNone);
    pts->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 6));
    res->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 5));
    pts->setName(QStringLiteral("measured median, k = %1").arg(k));
    for (const std::size_t i : idx) {
      const MeasuredPoint& p = g.points[i];
      if (p.x <= 0 || p.t <= 0) continue;
      pts->addData(p.x, p.t * 1e3);
      tLo = tLo > 0 ? std::min(tLo, p.t * 1e3) : p.t * 1e3;
      tHi = std::max(tHi, p.t * 1e3);
      if (i < chosen.residuals.size()) {
        const double rel = chosen.residuals[i] / p.t * 100;
        res->addData(p.x, rel);
        rHi = std::max(rHi, std::abs(rel));
      }
    }
    placePoints(pts);
  }
  // The selected layer's points, ringed.
  if (m_selectedRunLayer >= 0) {
    QCPGraph* sel = m_plot->addGraph(x, y);
    sel->setLineStyle(QCPGraph::lsNone);
    sel->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(Qt::black, 2), Qt::NoBrush, 12));
    for (const MeasuredPoint& p : g.points) {
      if (p.layer == m_selectedRunLayer && p.x > 0 && p.t > 0) sel->addData(p.x, p.t * 1e3);
    }
    if (sel->dataCount() > 0) {
      const std::size_t id = static_cast<std::size_t>(m_selectedRunLayer);
      sel->setName(QStringLiteral("layer %1")
                       .arg(id < m_data.layer_names.size()
                                ? QString::fromStdString(m_data.layer_names[id])
                                : QString::number(m_selectedRunLayer)));
      placePoints(sel);
    }
  }
  // The three forms; the chosen one solid.
  for (std::size_t c = 0; c < g.curves.size() && c < g.grid_t.size(); ++c) {
    const perf::Curve& curve = g.curves[c];
    const bool isChosen = static_cast<int>(c) == g.best;
    QCPGraph* line = m_plot->addGraph(x, y);
    line->setPen(isChosen ? QPen(Qt::black, 2) : QPen(paletteColor(c + 4), 1.2, Qt::DashLine));
    QVector<double> gx, gy;
    for (std::size_t i = 0; i < g.grid_x.size(); ++i) {
      if (g.grid_t[c][i] <= 0) continue;
      gx.push_back(g.grid_x[i]);
      gy.push_back(g.grid_t[c][i] * 1e3);
    }
    line->setData(gx, gy, true);
    line->setName(QStringLiteral("%1%2: held-out error %3 (mean), fitted points within %4")
                      .arg(QLatin1String(perf::fitFormName(curve.form).data()),
                           isChosen ? QStringLiteral(" (chosen)") : QString(),
                           percent(curve.cv_rel_error), percent(curve.max_rel_error)));
    placeInLegend(m_plot, line, static_cast<int>(c), 0);
  }
  QCPGraph* zero = m_plot->addGraph(rx, ry);
  zero->setPen(QPen(Qt::gray, 1, Qt::DotLine));
  if (!g.grid_x.empty()) {
    zero->addData(g.grid_x.front(), 0);
    zero->addData(g.grid_x.back(), 0);
    x->setRange(g.grid_x.front(), g.grid_x.back());
  }
  if (tHi > 0) y->setRange(tLo / 1.6, tHi * 1.6);
  ry->setRange(-rHi * 1.15, rHi * 1.15);
}

void ModelView::drawPcie() {
  QCPAxis* x = m_main->axis(QCPAxis::atBottom);
  QCPAxis* y = m_main->axis(QCPAxis::atLeft);
  QCPAxis* rx = m_residuals->axis(QCPAxis::atBottom);
  QCPAxis* ry = m_residuals->axis(QCPAxis::atLeft);
  for (QCPAxis* a : {x, y, rx, ry})
    setLog(a, false);
  x->setLabel(QStringLiteral("bytes per copy (MiB)"));
  y->setLabel(QStringLiteral("time (ms)"));
  rx->setLabel(x->label());
  if (auto* title = qobject_cast<QCPTextElement*>(m_plot->plotLayout()->element(0, 0))) {
    // No copy ran beside one the other way: the factor of 1 is assumed, not measured.
    const QString both =
        m_data.duplex_points > 0
            ? QStringLiteral("x %1 (duplex factor)").arg(m_data.duplex_factor, 0, 'f', 2)
            : QStringLiteral("not measured (no copy ran beside one the other way)");
    title->setText(QStringLiteral("PCIe copies on %1; both directions at once: %2")
                       .arg(QString::fromStdString(m_data.device), both));
  }
  double xHi = 0, yHi = 0, rHi = 1;
  std::size_t colour = 0;
  for (const PcieDirection* d : {&m_data.h2d, &m_data.d2h}) {
    const QColor c = paletteColor(colour++);
    const QString name =
        d->to_host ? QStringLiteral("device-to-host") : QStringLiteral("host-to-device");
    QCPGraph* alone = m_plot->addGraph(x, y);
    QCPGraph* both = m_plot->addGraph(x, y);
    QCPGraph* res = m_plot->addGraph(rx, ry);
    for (QCPGraph* gr : {alone, both, res})
      gr->setLineStyle(QCPGraph::lsNone);
    alone->setProperty(kPointsProperty, true);
    both->setProperty(kPointsProperty, true);
    alone->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 5));
    both->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(c, 1.2), Qt::NoBrush, 6));
    res->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 4));
    QVector<double> ax, ay, bx, by, resx, resy;
    for (const PcieTransfer& t : d->transfers) {
      const double mib = t.bytes / kMiB;
      (t.overlapped ? bx : ax).push_back(mib);
      (t.overlapped ? by : ay).push_back(t.seconds * 1e3);
      xHi = std::max(xHi, mib);
      yHi = std::max(yHi, t.seconds * 1e3);
      if (!t.overlapped && t.seconds > 0 && d->fit.bandwidth > 0) {
        const double rel = (d->fit.seconds(t.bytes) - t.seconds) / t.seconds * 100;
        resx.push_back(mib);
        resy.push_back(rel);
        rHi = std::max(rHi, std::abs(rel));
      }
    }
    alone->setData(ax, ay);
    both->setData(bx, by);
    res->setData(resx, resy);
    alone->setName(name + QStringLiteral(": %1 copies alone").arg(ax.size()));
    both->setName(name + QStringLiteral(": %1 while the other direction ran").arg(bx.size()));
    // The legend: a column per direction, a row per kind of entry.
    const int column = d->to_host ? 1 : 0;
    placeInLegend(m_plot, alone, 0, column);
    placeInLegend(m_plot, both, 1, column);
    // A direction with no copies recorded borrows the other's line: drawn once, as that one's.
    if (d->fit.bandwidth > 0 && !d->fit.from_other_direction) {
      QCPGraph* line = m_plot->addGraph(x, y);
      line->setPen(QPen(c.darker(130), 2));
      const double top = std::max(xHi, 1e-3) * 1.05;
      for (const double b : {0.0, top})
        line->addData(b, d->fit.seconds(b * kMiB) * 1e3);
      line->setName(name + QStringLiteral(" fit: %1 + %2 us")
                               .arg(rate(d->fit.bandwidth))
                               .arg(d->fit.latency * 1e6, 0, 'f', 1));
      placeInLegend(m_plot, line, 2, column);
      // The line slowed by the duplex factor, where one was measured.
      if (m_data.duplex_points > 0) {
        QCPGraph* duplex = m_plot->addGraph(x, y);
        duplex->setPen(QPen(c.darker(130), 1.2, Qt::DashLine));
        for (const double b : {0.0, top})
          duplex->addData(b, d->fit.seconds(b * kMiB) * 1e3 * m_data.duplex_factor);
        duplex->setName(
            name + QStringLiteral(" fit x duplex factor %1").arg(m_data.duplex_factor, 0, 'f', 2));
        placeInLegend(m_plot, duplex, 3, column);
      }
    }
  }
  x->setRange(0, std::max(xHi, 1e-3) * 1.05);
  y->setRange(0, std::max(yHi, 1e-3) * 1.08);
  ry->setRange(-std::min(rHi, 500.0) * 1.1, std::min(rHi, 500.0) * 1.1);
}

void ModelView::onClick(QCPAbstractPlottable* plottable, int dataIndex, QMouseEvent*) {
  auto* graph = qobject_cast<QCPGraph*>(plottable);
  if (!graph || !graph->property(kPointsProperty).toBool() || m_page < 0 || !m_planned ||
      !m_plannedIsProfiled || dataIndex < 0 || dataIndex >= graph->dataCount())
    return;
  const double key = graph->data()->at(dataIndex)->key;
  const double value = graph->data()->at(dataIndex)->value / 1e3;
  const ModelGroupData& g = m_data.groups[static_cast<std::size_t>(m_page)];
  const MeasuredPoint* best = nullptr;
  double bestDistance = 0;
  for (const MeasuredPoint& p : g.points) {
    if (p.x <= 0 || p.t <= 0) continue;
    const double d = std::abs(std::log(p.x / key)) + std::abs(std::log(p.t / value));
    if (!best || d < bestDistance) {
      best = &p;
      bestDistance = d;
    }
  }
  if (!best || best->layer < 0 ||
      static_cast<std::size_t>(best->layer) >= m_data.layer_names.size())
    return;
  // The planned network is the profiled one: find its layer of that name.
  const std::string& name = m_data.layer_names[static_cast<std::size_t>(best->layer)];
  for (int i = 0; i < m_planned->size(); ++i) {
    if (m_planned->layer(i).name == name) {
      m_selectedRunLayer = best->layer;
      m_keepRange = true;
      draw();
      emit layerSelected(i);
      return;
    }
  }
}

}  // namespace swapscope
