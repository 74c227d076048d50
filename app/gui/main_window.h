// SPDX-License-Identifier: MIT
/// @brief The desktop app's window: pick a network and k, drag the budget, and see the memory
/// curve of each policy against it with k_max updating live.
#pragma once

#include <memory>
#include <optional>

#include <QMainWindow>

#include "analysis/network_analysis.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSlider;
class QSpinBox;

namespace swapscope {

class MemoryChartView;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);

  /// Shows a network (from the zoo or a file); replaces the current one.
  void showNetwork(Network net);
  /// Sets the controls: an empty model, k <= 0 or budget <= 0 keeps the current value. Throws
  /// Error(BadInput) for an unknown model.
  void configure(const std::string& model, std::int64_t k, double budget_gib);

 private:
  void openNetworkFile();
  void onModelChosen(int index);
  void refreshChart();
  void onBudgetChanged();
  std::int64_t budgetBytes() const;

  QComboBox* m_model;
  QSpinBox* m_batch;
  QDoubleSpinBox* m_budgetGiB;
  QSlider* m_budgetSlider;
  QLabel* m_summary;
  MemoryChartView* m_chart;

  std::optional<Network> m_net;
  std::unique_ptr<NetworkAnalysis> m_analysis;
  std::unique_ptr<MemoryPlan> m_vdnn;
};

}  // namespace swapscope
