// SPDX-License-Identifier: MIT
#include "views/compare_view.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <utility>

#include "common/bytes.h"
#include "common/format.h"
#include "common/stats.h"
#include "views/log_ticker.h"
#include "views/replot.h"

namespace swapscope {
namespace {

constexpr double kMs = 1e3;
constexpr double kMiB = 1024.0 * 1024.0;
const QColor kColorA(0x4c, 0x72, 0xb0);
const QColor kColorB(0xdd, 0x84, 0x52);

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

QStandardItem* textItem(const QString& text) {
  auto* item = new QStandardItem(text);
  item->setData(text, Qt::UserRole);
  item->setToolTip(text);  // whole, where the column elides it
  item->setEditable(false);
  return item;
}

/// Display text with the raw value as the sort key.
QStandardItem* numberItem(const QString& text, double value) {
  auto* item = new QStandardItem(text);
  item->setData(value, Qt::UserRole);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  item->setEditable(false);
  return item;
}

QString ms(double seconds) {
  return qs(formatMilliseconds(seconds));
}

/// B/A as `swapscope compare` prints it ("-" where either time shows as 0.000 ms), sorting by
/// the ratio, and a "-" as 0.
QStandardItem* ratioItem(double a, double b) {
  const std::string text = perf::timeRatioText(a, b);
  return numberItem(qs(text), text == "-" ? 0.0 : b / a);
}

/// A header whose sections can be fitted at once (QHeaderView fits them at its next delayed
/// layout, after the event loop's posted events, a headless screenshot's among them).
class FittingHeader : public QHeaderView {
 public:
  using QHeaderView::QHeaderView;
  void fitNow() { resizeSections(); }
};

QTableView* makeTable(QStandardItemModel* model) {
  auto* t = new QTableView;
  t->setHorizontalHeader(new FittingHeader(Qt::Horizontal, t));
  t->setModel(model);
  // Rows stay in the order they were added until a header is clicked.
  t->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
  t->setSortingEnabled(true);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->setSelectionMode(QAbstractItemView::SingleSelection);
  t->verticalHeader()->setVisible(false);
  t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 4);
  return t;
}

/// Names `model`'s columns: (header, tooltip) each.
void setColumns(QStandardItemModel* model,
                std::initializer_list<std::pair<const char*, const char*>> columns) {
  model->setColumnCount(static_cast<int>(columns.size()));
  int i = 0;
  for (const auto& [header, tip] : columns) {
    model->setHeaderData(i, Qt::Horizontal, QString::fromUtf8(header));
    model->setHeaderData(i++, Qt::Horizontal, QString::fromUtf8(tip), Qt::ToolTipRole);
  }
}

/// Every column of `t` in view at the width the view gives it: the numbers and short texts sized
/// to their contents, the name columns `names` sharing the rest, long names elided by `elide`
/// (the whole name is the cell's tooltip). After the model's columns are named.
void fitColumns(QTableView* t, std::initializer_list<int> names, Qt::TextElideMode elide) {
  QHeaderView* header = t->horizontalHeader();
  header->setStretchLastSection(false);
  header->setSectionResizeMode(QHeaderView::ResizeToContents);
  for (const int column : names)
    header->setSectionResizeMode(column, QHeaderView::Stretch);
  t->setTextElideMode(elide);
}

QCustomPlot* makePlot(const QString& title) {
  auto* p = new QCustomPlot;
  p->plotLayout()->insertRow(0);
  p->plotLayout()->addElement(
      0, 0,
      new QCPTextElement(p, title, QFont(p->font().family(), p->font().pointSize(), QFont::Bold)));
  // The legend in a row of its own beneath the axes: it never hides a curve.
  p->legend->setVisible(true);
  QFont small = p->font();
  small.setPointSize(std::max(6, small.pointSize() - 2));
  p->legend->setFont(small);
  p->legend->setRowSpacing(0);
  p->legend->setColumnSpacing(6);
  p->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  p->legend->setWrap(2);
  p->legend->setBorderPen(Qt::NoPen);
  p->axisRect()->insetLayout()->take(p->legend);
  p->plotLayout()->addElement(2, 0, p->legend);
  p->plotLayout()->setRowStretchFactor(2, 0.001);
  p->plotLayout()->setRowSpacing(0);
  p->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  p->setMinimumSize(220, 160);
  return p;
}

QCPGraph* lineGraph(QCustomPlot* p, const QString& name, const QColor& color,
                    Qt::PenStyle style = Qt::SolidLine) {
  QCPGraph* g = p->addGraph();
  g->setName(name);
  g->setPen(QPen(color, 1.5, style));
  return g;
}

}  // namespace

CompareView::CompareView(QWidget* parent)
    : QWidget(parent),
      m_aBox(new QComboBox),
      m_bBox(new QComboBox),
      m_identity(new QLabel),
      m_stepTitle(new QLabel),
      m_steps(new QStandardItemModel(this)),
      m_curves(new QStandardItemModel(this)),
      m_stepTable(makeTable(m_steps)),
      m_curveTable(makeTable(m_curves)),
      m_curvesPlot(makePlot("Fitted curves at common work")),
      m_pciePlot(makePlot("PCIe fits")),
      m_timesPlot(makePlot("Iteration times")),
      m_poolPlot(makePlot("Pool in use, one iteration")) {
  m_steps->setSortRole(Qt::UserRole);
  m_curves->setSortRole(Qt::UserRole);
  // Short headers, the unit in the title above each table and the meaning in each header's
  // tooltip: every column fits beside the plots at the window's default size.
  setColumns(m_steps, {{"step", "the step of the iteration"},
                       {"dir", "direction"},
                       {"layer", "the layer the step runs"},
                       {"A", "A's median time (ms)"},
                       {"B", "B's median time (ms)"},
                       {"B-A", "B's median minus A's (ms); sorts by its size"},
                       {"B/A", "B's median over A's"}});
  setColumns(
      m_curves,
      {{"layer type", "the fitted curve's layer type (@bytes: timed against its output bytes)"},
       {"dir", "direction"},
       {"work", "the common work the curves are evaluated at"},
       {"A", "A's curve at that work (ms)"},
       {"B", "B's curve at that work (ms)"},
       {"B/A", "B's time over A's"},
       {"forms", "the form chosen for A's curve / B's (one name: both chose it)"}});
  // A layer's name ends in what tells it from its neighbours (layer3.0.conv2); a layer type and
  // a form are known by their start.
  fitColumns(m_stepTable, {2}, Qt::ElideMiddle);
  fitColumns(m_curveTable, {0, 6}, Qt::ElideRight);
  m_identity->setWordWrap(true);
  m_identity->setAlignment(Qt::AlignTop | Qt::AlignLeft);  // at the top, with or without tables
  m_identity->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_stepTitle->setWordWrap(true);

  auto* pair = new QHBoxLayout;
  pair->addWidget(new QLabel("A"));
  pair->addWidget(m_aBox, 1);
  pair->addWidget(new QLabel("B"));
  pair->addWidget(m_bBox, 1);

  auto* tables = new QWidget;
  auto* tl = new QVBoxLayout(tables);
  tl->setContentsMargins(0, 0, 0, 0);
  tl->addWidget(m_stepTitle);
  tl->addWidget(m_stepTable, 1);
  tl->addWidget(new QLabel("Fitted curves per layer type at common work (ms; * extrapolated)"));
  tl->addWidget(m_curveTable, 1);

  auto* plots = new QWidget;
  auto* grid = new QGridLayout(plots);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->addWidget(m_curvesPlot, 0, 0);
  grid->addWidget(m_pciePlot, 0, 1);
  grid->addWidget(m_timesPlot, 1, 0);
  grid->addWidget(m_poolPlot, 1, 1);

  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(tables);
  split->addWidget(plots);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(pair);
  layout->addWidget(m_identity);
  layout->addWidget(split, 1);
  m_body = split;

  auto chosen = [this] {
    if (m_aBox->signalsBlocked()) return;
    emit pairChosen(m_aBox->currentIndex(), m_bBox->currentIndex());
  };
  connect(m_aBox, &QComboBox::currentIndexChanged, this, chosen);
  connect(m_bBox, &QComboBox::currentIndexChanged, this, chosen);
  connect(m_curveTable->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { highlightCurve(current.row()); });
  connect(m_stepTable->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (!current.isValid()) return;
            const auto cell = [&](int column) {
              return m_steps->item(current.row(), column)->text();
            };
            m_stepTitle->setText(QStringLiteral("step %1 (%2 %3): A %4 ms, B %5 ms, B/A %6")
                                     .arg(cell(0), cell(2), cell(1), cell(3), cell(4), cell(6)));
          });
  setMessage("Add a database for comparison (File > Add database for comparison...).");
}

void CompareView::setRunNames(const QStringList& names, int a, int b) {
  const QSignalBlocker ba(m_aBox), bb(m_bBox);
  m_aBox->clear();
  m_bBox->clear();
  m_aBox->addItems(names);
  m_bBox->addItems(names);
  m_aBox->setCurrentIndex(a);
  m_bBox->setCurrentIndex(b);
}

int CompareView::runA() const {
  return m_aBox->currentIndex();
}

int CompareView::runB() const {
  return m_bBox->currentIndex();
}

QString CompareView::identityText() const {
  return m_identity->text();
}

QString CompareView::stepTitle() const {
  return m_stepTitle->text();
}

void CompareView::setMessage(const QString& message) {
  m_data = CompareData{};
  m_identity->setText(message);
  // Nothing to compare: the message alone, not four empty plots and two empty tables.
  m_body->setVisible(false);
  fillTables();
  fillPlots();
}

void CompareView::setData(const CompareData& data) {
  m_data = data;
  m_body->setVisible(true);
  const perf::RunComparison& c = m_data.comparison;
  auto side = [](const QString& label, const perf::RunSide& s) {
    const QString identity =
        label + QStringLiteral(": %1 %2 on %3, budget %4, %5; k = %6")
                    .arg(qs(s.kind), qs(s.status), qs(s.device), qs(formatBytes(s.budget)),
                         qs(s.policy), qs(perf::describeBatches(s)));
    // Without iterations there are no fits: no rates and no ratio, rather than 0 and 1.00x.
    if (!s.fitted) return identity;
    auto rate = [](double bytesPerS) {
      return bytesPerS > 0 ? qs(formatFixed(bytesPerS / 1e9, 2)) + " GB/s" : QString("none");
    };
    const QString both = s.duplex_points > 0
                             ? qs(formatFixed(s.duplex_factor, 2)) + QStringLiteral("x slower")
                             : QStringLiteral("not measured");
    return identity + QStringLiteral("; PCIe h2d %1, d2h %2, both at once %3")
                          .arg(rate(s.h2d_bytes_per_s), rate(s.d2h_bytes_per_s), both);
  };
  QString text = side(qs(m_data.label_a), c.a) + "\n" + side(qs(m_data.label_b), c.b);
  if (const std::string none = perf::nothingToCompare(c); !none.empty()) text += "\n" + qs(none);
  m_identity->setText(text);
  fillTables();
  fillPlots();
}

void CompareView::fillTables() {
  const perf::RunComparison& c = m_data.comparison;
  m_steps->removeRows(0, m_steps->rowCount());
  m_curves->removeRows(0, m_curves->rowCount());
  if (m_data.label_a.empty()) {
    m_stepTitle->setText("Per-step median times");
  } else if (const std::string why = perf::stepsNotCompared(c); !why.empty()) {
    m_stepTitle->setText("Per-step median times: not compared, " + qs(why));
  } else {
    m_stepTitle->setText(QStringLiteral("Per-step median times (ms) at %1 samples per pass (the "
                                        "largest both recorded), %2 steps, largest difference "
                                        "first")
                             .arg(c.step_k)
                             .arg(c.steps.size()));
  }
  m_stepTable->setVisible(!c.steps.empty());
  for (const perf::StepDiff& d : c.steps) {
    const double diff = d.seconds_b - d.seconds_a;
    m_steps->appendRow({numberItem(QString::number(d.step), d.step), textItem(qs(d.direction)),
                        textItem(qs(d.layer)), numberItem(ms(d.seconds_a), d.seconds_a),
                        numberItem(ms(d.seconds_b), d.seconds_b),
                        numberItem(ms(diff), std::abs(diff)), ratioItem(d.seconds_a, d.seconds_b)});
  }
  // Largest difference first, as compareRuns orders them; a click on a header sorts by it.
  m_stepTable->horizontalHeader()->setSortIndicator(5, Qt::DescendingOrder);
  for (const perf::CurveAtCommonWork& w : c.curves) {
    const QString work = (w.bytes_axis ? qs(formatBytes(static_cast<std::int64_t>(w.work)))
                                       : qs(formatSi(w.work) + "FLOP")) +
                         (w.extrapolated ? " *" : "");
    m_curves->appendRow(
        {textItem(qs(w.target)), textItem(qs(w.direction)), numberItem(work, w.work),
         numberItem(ms(w.seconds_a), w.seconds_a), numberItem(ms(w.seconds_b), w.seconds_b),
         ratioItem(w.seconds_a, w.seconds_b),
         textItem(qs(w.form_a == w.form_b ? w.form_a : w.form_a + " / " + w.form_b))});
  }
  // The columns fit their new cells now, not at the header's next delayed layout: a screenshot
  // taken as the comparison arrives shows them whole.
  for (QTableView* t : {m_stepTable, m_curveTable})
    static_cast<FittingHeader*>(t->horizontalHeader())->fitNow();
}

void CompareView::fillPlots() {
  const perf::RunComparison& c = m_data.comparison;
  const QString a = qs(m_data.label_a), b = qs(m_data.label_b);
  for (QCustomPlot* p : {m_curvesPlot, m_pciePlot, m_timesPlot, m_poolPlot}) {
    p->clearPlottables();
    p->clearItems();
  }

  // Curves at common work: A's and B's bars side by side per layer type and direction, one row
  // each (the first at the top), on a log scale.
  {
    QCustomPlot* p = m_curvesPlot;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    QVector<double> keys, va, vb;
    double lo = 1e300;
    const auto n = static_cast<double>(c.curves.size());
    for (std::size_t i = 0; i < c.curves.size(); ++i) {
      const perf::CurveAtCommonWork& w = c.curves[i];
      keys.push_back(n - 1 - static_cast<double>(i));
      va.push_back(w.seconds_a * kMs);
      vb.push_back(w.seconds_b * kMs);
      for (double v : {va.back(), vb.back()}) {
        if (v > 0) lo = std::min(lo, v);
      }
      ticker->addTick(keys.back(), qs(w.target + " " + w.direction));
    }
    std::reverse(keys.begin(), keys.end());
    std::reverse(va.begin(), va.end());
    std::reverse(vb.begin(), vb.end());
    QFont small = p->font();
    small.setPointSize(std::max(6, small.pointSize() - 2));
    p->yAxis->setTicker(ticker);
    p->yAxis->setTickLabelFont(small);
    p->yAxis->setSubTicks(false);
    p->yAxis->grid()->setVisible(false);
    p->xAxis->setScaleType(QCPAxis::stLogarithmic);
    auto logTicker = QSharedPointer<QCPAxisTickerLog>::create();
    logTicker->setTickCount(3);
    p->xAxis->setTicker(logTicker);
    p->xAxis->setTickLabelFont(small);  // the axis is narrow beside the type names
    p->xAxis->setLabel("ms (log)");     // at common work, as the title says
    // A and B of one type touch, and types are apart by more than a bar: the pairs read as
    // pairs at any height (with 0.4 each and the group's 4-pixel spacing, the gap between types
    // came out smaller than the one inside a pair).
    auto* group = new QCPBarsGroup(p);
    group->setSpacingType(QCPBarsGroup::stAbsolute);
    group->setSpacing(0);
    const double base = lo < 1e300 ? lo / 10 : 1e-3;
    for (const auto& [name, values, color] : {std::tuple{QStringLiteral("A"), va, kColorA},
                                              std::tuple{QStringLiteral("B"), vb, kColorB}}) {
      auto* bars = new QCPBars(p->yAxis, p->xAxis);
      bars->setName(name);
      bars->setWidth(0.3);
      bars->setBaseValue(base);
      bars->setBrush(color);
      bars->setPen(Qt::NoPen);
      bars->setBarsGroup(group);
      bars->setSelectable(QCP::stMultipleDataRanges);
      bars->setData(keys, values, /*alreadySorted=*/true);
    }
    p->yAxis->setRange(-0.7, std::max(0.7, n - 0.3));
    p->xAxis->setRange(base, lo < 1e300 ? std::max(*std::max_element(va.begin(), va.end()),
                                                   *std::max_element(vb.begin(), vb.end())) *
                                              3
                                        : 1.0);
    p->legend->setVisible(!c.curves.empty());
  }

  // PCIe: each run's fitted line per direction, time against bytes, over the largest copy.
  {
    QCustomPlot* p = m_pciePlot;
    const double top = std::max<double>(static_cast<double>(m_data.largest_transfer), kMiB);
    for (const auto& [label, s, color] :
         {std::tuple{a, &c.a, kColorA}, std::tuple{b, &c.b, kColorB}}) {
      if (label.isEmpty()) continue;
      for (const bool h2d : {true, false}) {
        const double bw = h2d ? s->h2d_bytes_per_s : s->d2h_bytes_per_s;
        const double lat = h2d ? s->h2d_latency_s : s->d2h_latency_s;
        if (!(bw > 0)) continue;
        QCPGraph* g = lineGraph(p, label.left(1) + (h2d ? " h2d" : " d2h"), color,
                                h2d ? Qt::SolidLine : Qt::DashLine);
        g->setData({0, top / kMiB}, {lat * kMs, (lat + top / bw) * kMs});
      }
    }
    p->xAxis->setLabel("bytes copied (MiB)");
    p->yAxis->setLabel("ms");
    p->rescaleAxes();
    p->legend->setVisible(p->graphCount() > 0);
  }

  // Iteration times: every recorded iteration per k, A's and B's, with their medians joined.
  {
    QCustomPlot* p = m_timesPlot;
    for (const auto& [label, times, color, shape] :
         {std::tuple{a, &m_data.times_a, kColorA, QCPScatterStyle::ssCircle},
          std::tuple{b, &m_data.times_b, kColorB, QCPScatterStyle::ssSquare}}) {
      if (times->empty()) continue;
      QCPGraph* points = p->addGraph();
      points->setName(label.left(1));
      points->setLineStyle(QCPGraph::lsNone);
      points->setScatterStyle(QCPScatterStyle(shape, color, 5));
      QCPGraph* medians = lineGraph(p, label.left(1) + " median", color);
      for (const IterationTimes& t : *times) {
        for (double s : t.seconds)
          points->addData(static_cast<double>(t.k), s * kMs);
        if (!t.seconds.empty()) medians->addData(static_cast<double>(t.k), median(t.seconds) * kMs);
      }
    }
    p->xAxis->setLabel("k");
    p->yAxis->setLabel("iteration time (ms, log)");
    // Log: runs of different networks differ by orders of magnitude.
    p->yAxis->setScaleType(QCPAxis::stLogarithmic);
    p->yAxis->setTicker(QSharedPointer<ReadableLogTicker>::create());
    p->rescaleAxes();
    p->xAxis->scaleRange(1.1);
    p->yAxis->setRange(p->yAxis->range().lower / 1.5, p->yAxis->range().upper * 1.5);
    p->legend->setVisible(p->graphCount() > 0);
  }

  // Pool bytes over one iteration of each run.
  {
    QCustomPlot* p = m_poolPlot;
    for (const auto& [label, pool, color] :
         {std::tuple{a, &m_data.pool_a, kColorA}, std::tuple{b, &m_data.pool_b, kColorB}}) {
      if (pool->k == 0) continue;
      QCPGraph* g = lineGraph(p, label.left(1) + QStringLiteral(" at k = %1").arg(pool->k), color);
      g->setLineStyle(QCPGraph::lsStepLeft);
      // Time as a share of the iteration: two runs' iterations can differ a hundredfold.
      const double scale = pool->t_iter > 0 ? 100 / pool->t_iter : kMs;
      for (const auto& [t, bytes] : pool->points)
        g->addData(t * scale, static_cast<double>(bytes) / kMiB);
      if (!pool->points.empty() && pool->t_iter > 0)
        g->addData(100, static_cast<double>(pool->points.back().second) / kMiB);
    }
    p->xAxis->setLabel("time (% of the iteration)");
    p->yAxis->setLabel("MiB");
    p->rescaleAxes();
    p->yAxis->setRangeLower(0);
    p->yAxis->setRangeUpper(p->yAxis->range().upper * 1.15);
    p->legend->setVisible(p->graphCount() > 0);
  }
  for (QCustomPlot* p : {m_curvesPlot, m_pciePlot, m_timesPlot, m_poolPlot})
    replotWhenShown(p);
}

void CompareView::highlightCurve(int row) {
  if (row < 0 || row >= m_curves->rowCount()) return;
  // The table may be sorted: find the curve by its target and direction.
  const std::string target = m_curves->item(row, 0)->text().toStdString();
  const std::string direction = m_curves->item(row, 1)->text().toStdString();
  const auto& curves = m_data.comparison.curves;
  int index = -1;
  for (std::size_t i = 0; i < curves.size(); ++i) {
    if (curves[i].target == target && curves[i].direction == direction) index = static_cast<int>(i);
  }
  // Bars are keyed from the bottom up: curve i is data point n - 1 - i.
  if (index >= 0) index = static_cast<int>(curves.size()) - 1 - index;
  for (int i = 0; i < m_curvesPlot->plottableCount(); ++i) {
    QCPAbstractPlottable* bars = m_curvesPlot->plottable(i);
    bars->setSelection(index >= 0 ? QCPDataSelection(QCPDataRange(index, index + 1))
                                  : QCPDataSelection());
  }
  replotWhenShown(m_curvesPlot);
}

}  // namespace swapscope
