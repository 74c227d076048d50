// SPDX-License-Identifier: MIT
/// @brief The summary of one plan as a table with its warnings (views/summary_data.h).
#pragma once

#include <memory>

#include "views/measured_overlay.h"
#include "views/plan_view.h"
#include "views/summary_data.h"

class QTextBrowser;

namespace swapscope {

class SummaryView : public PlanView {
  Q_OBJECT
 public:
  explicit SummaryView(QWidget* parent = nullptr);

  void setData(const SummaryData& data);
  /// setData with the plan's SummaryData.
  void setPlan(const ShownPlan& plan) override;
  /// A run's measurement: its `summary` rows and warnings are added to every plan's summary
  /// until replaced (addMeasuredSummary of the plan shown, or why it is not shown); null
  /// removes them.
  void setOverlay(std::shared_ptr<const MeasuredOverlay> overlay) override;
  /// A message instead of a plan (no run database, planning...).
  void setMessage(const QString& text);
  const SummaryData& data() const { return m_data; }
  /// The text shown, as plain text.

 private:
  void render();

  QTextBrowser* m_text;
  SummaryData m_data;  ///< with the overlay
  SummaryData m_plan;  ///< as set
  std::shared_ptr<const MeasuredOverlay> m_overlay;
  bool m_message = false;
};

}  // namespace swapscope
