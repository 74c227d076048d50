// SPDX-License-Identifier: MIT
#include "gui/main_window.h"

#include <cmath>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>

#include "common/bytes.h"
#include "common/error.h"
#include "common/format.h"
#include "graph/network_json.h"
#include "graph/zoo.h"
#include "views/memory_chart_data.h"
#include "views/memory_chart_view.h"

namespace swapscope {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr int kSliderStepsPerGiB = 100;  // the slider moves in 0.01 GiB

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      m_model(new QComboBox),
      m_batch(new QSpinBox),
      m_budgetGiB(new QDoubleSpinBox),
      m_budgetSlider(new QSlider(Qt::Horizontal)),
      m_summary(new QLabel),
      m_chart(new MemoryChartView) {
  setWindowTitle("Swapscope");
  for (const ZooEntry& e : zooEntries())
    m_model->addItem(QString::fromStdString(e.name));
  m_batch->setRange(1, 1 << 20);
  m_batch->setValue(32);
  m_budgetGiB->setRange(0.01, 1024);
  m_budgetGiB->setDecimals(2);
  m_budgetGiB->setSuffix(" GiB");
  m_budgetGiB->setValue(8);
  m_budgetSlider->setRange(1, 80 * kSliderStepsPerGiB);
  m_budgetSlider->setValue(8 * kSliderStepsPerGiB);
  m_summary->setTextFormat(Qt::RichText);
  m_summary->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  m_summary->setMinimumWidth(280);

  auto* open = new QPushButton("Open network JSON...");
  auto* form = new QFormLayout;
  form->addRow("Model", m_model);
  form->addRow("", open);
  form->addRow("Minibatch k", m_batch);
  form->addRow("Budget", m_budgetGiB);
  form->addRow(m_budgetSlider);
  form->addRow(m_summary);
  auto* controls = new QWidget;
  controls->setLayout(form);
  auto* central = new QWidget;
  auto* row = new QHBoxLayout(central);
  row->addWidget(controls);
  row->addWidget(m_chart, 1);
  setCentralWidget(central);
  resize(1200, 640);

  connect(m_model, &QComboBox::currentIndexChanged, this, &MainWindow::onModelChosen);
  connect(open, &QPushButton::clicked, this, &MainWindow::openNetworkFile);
  connect(m_batch, &QSpinBox::valueChanged, this, &MainWindow::refreshChart);
  connect(m_budgetSlider, &QSlider::valueChanged, this,
          [this](int v) { m_budgetGiB->setValue(static_cast<double>(v) / kSliderStepsPerGiB); });
  connect(m_budgetGiB, &QDoubleSpinBox::valueChanged, this, [this](double gib) {
    const QSignalBlocker block(m_budgetSlider);
    m_budgetSlider->setValue(static_cast<int>(std::lround(gib * kSliderStepsPerGiB)));
    onBudgetChanged();
  });
  onModelChosen(m_model->currentIndex());
}

void MainWindow::configure(const std::string& model, std::int64_t k, double budget_gib) {
  if (!model.empty()) {
    const int index = m_model->findText(QString::fromStdString(model));
    if (index < 0) buildZooModel(model);  // throws the error that lists the zoo
    m_model->setCurrentIndex(index);
  }
  if (k > 0) m_batch->setValue(static_cast<int>(k));
  if (budget_gib > 0) m_budgetGiB->setValue(budget_gib);
}

std::int64_t MainWindow::budgetBytes() const {
  return static_cast<std::int64_t>(m_budgetGiB->value() * kGiB);
}

void MainWindow::onModelChosen(int index) {
  if (index < 0) return;
  showNetwork(buildZooModel(m_model->itemText(index).toStdString()));
}

void MainWindow::openNetworkFile() {
  const QString path = QFileDialog::getOpenFileName(this, "Open network JSON", {},
                                                    "Network JSON (*.json);;All files (*)");
  if (path.isEmpty()) return;
  try {
    showNetwork(readNetworkFile(path.toStdString()));
  } catch (const Error& e) {
    QMessageBox::warning(this, "Cannot open the network", QString::fromStdString(e.what()));
  }
}

void MainWindow::showNetwork(Network net) {
  m_net = std::move(net);
  m_analysis = std::make_unique<NetworkAnalysis>(analyzeNetwork(*m_net));
  m_vdnn = std::make_unique<MemoryPlan>(planMemory(
      *m_net, m_analysis->costs, makeSwapSet(SwapPolicy::VdnnConv, *m_net, m_analysis->costs)));
  refreshChart();
}

void MainWindow::refreshChart() {
  if (!m_analysis) return;
  m_chart->setData(
      makeMemoryChartData(*m_net, *m_analysis, *m_vdnn, m_batch->value(), budgetBytes()));
  onBudgetChanged();
}

void MainWindow::onBudgetChanged() {
  if (!m_analysis) return;
  const std::int64_t budget = budgetBytes();
  const std::int64_t k = m_batch->value();
  m_chart->setBudget(budget);
  const CostTotals& t = m_analysis->totals;
  auto row = [&](const char* name, const MemoryPlan& p) {
    const std::int64_t peak = p.curve.peak(k);
    const QString color = peak <= budget ? "#2a7" : "#c33";
    return QString(
               "<tr><td>%1</td><td align=right><font color=%2>%3</font></td>"
               "<td align=right>%4</td></tr>")
        .arg(name, color, QString::fromStdString(formatBytes(peak)))
        .arg(p.curve.kMax(budget));
  };
  m_summary->setText(
      QString("<b>%1</b><br>%2 layers, input %3<br>%4 parameters<br>%5 MACs per sample"
              "<br><br><table><tr><th align=left>policy</th><th>peak at k=%6</th>"
              "<th>k_max</th></tr>%7%8%9</table><br>lower bound (k=1): %10")
          .arg(QString::fromStdString(m_net->name()))
          .arg(m_net->size())
          .arg(QString::fromStdString(m_net->sampleShape().toString()))
          .arg(QString::fromStdString(formatGrouped(t.params)))
          .arg(QString::fromStdString(formatSi(static_cast<double>(t.fwd_macs))))
          .arg(k)
          .arg(row("keep-all", m_analysis->keep_all), row("vdnn-conv", *m_vdnn),
               row("swap-all", m_analysis->swap_all))
          .arg(QString::fromStdString(formatBytes(m_analysis->lower_bound))));
}

}  // namespace swapscope
