// SPDX-License-Identifier: MIT
#include "views/timeline_view.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>
#include <filesystem>

#include "common/bytes.h"
#include "common/error.h"
#include "common/format.h"
#include "views/replot.h"
#include "views/streams_view.h"

namespace swapscope {
namespace {

constexpr double kMs = 1e3;
constexpr double kMiB = 1024.0 * 1024.0;

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

}  // namespace

TimelineView::TimelineView(QWidget* parent)
    : QWidget(parent),
      m_dbBox(new QComboBox),
      m_kBox(new QComboBox),
      m_itBox(new QComboBox),
      m_perfetto(new QPushButton("Open in Perfetto...")),
      m_summary(new QLabel),
      m_lanes(new StreamsView),
      m_pool(new QCustomPlot) {
  m_dbBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  m_perfetto->setToolTip(
      "Write this iteration as Chrome trace JSON next to the database (what `swapscope trace` "
      "writes), to open in ui.perfetto.dev");
  m_perfetto->setEnabled(false);
  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel("Database"));
  controls->addWidget(m_dbBox, 1);
  controls->addWidget(new QLabel("k"));
  controls->addWidget(m_kBox);
  controls->addWidget(new QLabel("Iteration"));
  controls->addWidget(m_itBox);
  controls->addWidget(m_perfetto);
  m_summary->setWordWrap(true);

  m_lanes->plot()->xAxis->setLabel("time in the measured iteration (ms)");
  m_pool->xAxis->setLabel("time in the measured iteration (ms)");
  m_pool->yAxis->setLabel("pool in use (MiB)");
  m_poolGraph = m_pool->addGraph();
  m_poolGraph->setLineStyle(QCPGraph::lsStepLeft);
  m_poolGraph->setPen(QPen(QColor(0x4c, 0x72, 0xb0), 1.5));
  m_poolGraph->setBrush(QColor(0x4c, 0x72, 0xb0, 40));
  m_poolGraph->setName("pool in use");
  m_budgetLine = new QCPItemStraightLine(m_pool);
  m_budgetLine->setPen(QPen(QColor(0xc0, 0x20, 0x20), 1, Qt::DashLine));
  // The same left margin on both plots, so that their time axes line up.
  for (QCustomPlot* p : {m_lanes->plot(), m_pool}) {
    p->axisRect()->setAutoMargins(QCP::msRight | QCP::msTop | QCP::msBottom);
    p->axisRect()->setMargins(QMargins(80, 0, 0, 0));
  }
  m_pool->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  m_pool->axisRect()->setRangeDrag(Qt::Horizontal);
  m_pool->axisRect()->setRangeZoom(Qt::Horizontal);
  // One time axis: panning or zooming either plot moves both.
  connect(m_lanes->plot()->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
          [this](const QCPRange& r) {
            m_pool->xAxis->setRange(r);
            replotWhenShown(m_pool);
          });
  connect(m_pool->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
          [this](const QCPRange& r) {
            m_lanes->plot()->xAxis->setRange(r);
            replotWhenShown(m_lanes->plot());
          });

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(controls);
  layout->addWidget(m_summary);
  layout->addWidget(m_lanes, 3);
  layout->addWidget(m_pool, 2);

  connect(m_dbBox, &QComboBox::currentIndexChanged, this, [this] {
    if (m_filling) return;
    fillBatches();
    onChosen();
  });
  connect(m_kBox, &QComboBox::currentIndexChanged, this, [this] {
    if (m_filling) return;
    fillIterations();
    onChosen();
  });
  connect(m_itBox, &QComboBox::currentIndexChanged, this, [this] {
    if (!m_filling) onChosen();
  });
  connect(m_perfetto, &QPushButton::clicked, this, &TimelineView::perfettoRequested);
  connect(m_lanes, &StreamsView::layerSelected, this, &TimelineView::layerSelected);
  m_summary->setText("Open a run database to see its recorded iterations.");
}

const store::RunData* TimelineView::run() const {
  return m_run >= 0 && m_run < static_cast<int>(m_runs.size())
             ? m_runs[static_cast<std::size_t>(m_run)].get()
             : nullptr;
}

void TimelineView::setRuns(std::vector<std::shared_ptr<const store::RunData>> runs, bool showFirst,
                           std::optional<std::int64_t> firstK) {
  const store::RunData* shown = run();
  int keep = -1;
  for (std::size_t i = 0; i < runs.size() && !showFirst && !firstK; ++i) {
    if (runs[i].get() == shown) keep = static_cast<int>(i);
  }
  m_runs = std::move(runs);
  {
    m_filling = true;
    m_dbBox->clear();
    for (const auto& r : m_runs)
      m_dbBox->addItem(
          qs(r->network.name + " (" + std::filesystem::path(r->path).filename().string() + ")"),
          qs(r->path));
    m_filling = false;
  }
  if (keep >= 0) {
    m_run = keep;
    const QSignalBlocker block(m_dbBox);
    m_dbBox->setCurrentIndex(keep);
    return;
  }
  m_run = -1;
  if (m_runs.empty()) return;
  if (firstK) {
    try {
      select(0, *firstK, 0);  // changes nothing when it throws
      return;
    } catch (const Error&) {
      showFirstAtLargestK();
      throw;
    }
  }
  showFirstAtLargestK();
}

void TimelineView::showFirstAtLargestK() {
  const std::vector<std::int64_t> ks = recordedBatches(*m_runs.front());
  if (!ks.empty()) {
    try {
      select(0, ks.back(), 0);  // fills the boxes
      return;
    } catch (const Error&) {
      // Refused: the boxes are filled below and their first choice, tried again, says why once.
    }
  }
  // Nothing recorded to show: the boxes stay empty and the summary says so.
  {
    const QSignalBlocker block(m_dbBox);
    m_dbBox->setCurrentIndex(0);
  }
  fillBatches();
  onChosen();
}

void TimelineView::fillBatches() {
  m_filling = true;
  m_kBox->clear();
  const int index = m_dbBox->currentIndex();
  if (index >= 0 && index < static_cast<int>(m_runs.size())) {
    for (const std::int64_t k : recordedBatches(*m_runs[static_cast<std::size_t>(index)]))
      m_kBox->addItem(QString::number(k), QVariant::fromValue<qint64>(k));
    m_kBox->setCurrentIndex(m_kBox->count() - 1);  // the largest, as `swapscope trace`
  }
  m_filling = false;
  fillIterations();
}

void TimelineView::fillIterations() {
  m_filling = true;
  m_itBox->clear();
  const int index = m_dbBox->currentIndex();
  if (index >= 0 && index < static_cast<int>(m_runs.size()) && m_kBox->currentIndex() >= 0) {
    const int n = recordedIterations(*m_runs[static_cast<std::size_t>(index)],
                                     m_kBox->currentData().toLongLong());
    for (int i = 0; i < n; ++i)
      m_itBox->addItem(QString::number(i), i);
  }
  m_filling = false;
}

void TimelineView::onChosen() {
  const int index = m_dbBox->currentIndex();
  if (index < 0 || m_kBox->currentIndex() < 0 || m_itBox->currentIndex() < 0) {
    if (index >= 0 && index < static_cast<int>(m_runs.size())) {
      m_run = index;
      m_summary->setText(qs("'" + m_runs[static_cast<std::size_t>(index)]->path +
                            "' holds no recorded iterations"));
    }
    return;
  }
  try {
    select(index, m_kBox->currentData().toLongLong(), m_itBox->currentData().toInt());
  } catch (const Error& e) {
    emit failed(qs(e.what()));
  }
}

void TimelineView::select(int index, std::int64_t k, int iteration) {
  if (index < 0 || index >= static_cast<int>(m_runs.size()))
    throwBadInput("no run database " + std::to_string(index) + " is open (" +
                  std::to_string(m_runs.size()) + " are)");
  const store::RunData& r = *m_runs[static_cast<std::size_t>(index)];
  TimelineData data = makeTimelineData(r, k, iteration);  // throws before anything changes
  m_run = index;
  m_filling = true;
  m_dbBox->setCurrentIndex(index);
  m_filling = false;
  fillBatches();
  m_filling = true;
  m_kBox->setCurrentIndex(m_kBox->findData(QVariant::fromValue<qint64>(k)));
  m_filling = false;
  fillIterations();
  m_filling = true;
  m_itBox->setCurrentIndex(iteration);
  m_filling = false;
  display(data);
}

void TimelineView::display(const TimelineData& data) {
  m_data = data;
  m_perfetto->setEnabled(true);
  const StreamsData& s = m_data.lanes;
  m_lanes->setData(s);
  std::int64_t peak = 0;
  QVector<double> x, y;
  for (const auto& [t, bytes] : m_data.pool) {
    x.push_back(t * kMs);
    y.push_back(static_cast<double>(bytes) / kMiB);
    peak = std::max(peak, bytes);
  }
  if (!x.isEmpty() && s.t_iter * kMs > x.back()) {
    // The last sample holds until the iteration ends.
    x.push_back(s.t_iter * kMs);
    y.push_back(y.back());
  }
  m_poolGraph->setData(x, y, /*alreadySorted=*/true);
  const double budget = static_cast<double>(m_data.budget) / kMiB;
  m_budgetLine->setVisible(m_data.budget > 0);
  m_budgetLine->point1->setCoords(0, budget);
  m_budgetLine->point2->setCoords(1, budget);
  const double top = std::max(static_cast<double>(peak) / kMiB, 1e-3);
  // The budget is drawn when it is near the curve; far above it, it is named in the summary.
  m_pool->yAxis->setRange(0, (m_data.budget > 0 && budget < top * 1.5 ? budget : top) * 1.08);
  m_pool->xAxis->setRange(m_lanes->plot()->xAxis->range());
  replotWhenShown(m_pool);

  m_summary->setText(
      qs(m_data.path) +
      QStringLiteral(": k = %1, iteration %2: t_iter %3 ms, stall %4 ms over %5 steps; %6 step "
                     "rows, %7 transfer rows; pool peak %8 of a %9 budget")
          .arg(m_data.k)
          .arg(m_data.iteration)
          .arg(qs(formatMilliseconds(s.t_iter)), qs(formatMilliseconds(s.total_stall)))
          .arg(s.stalledSteps())
          .arg(m_data.step_rows)
          .arg(m_data.transfer_rows)
          .arg(qs(formatBytes(peak)), qs(formatBytes(m_data.budget))));
}

void TimelineView::selectLayer(int layer) {
  m_lanes->selectLayer(layer);
}

}  // namespace swapscope
