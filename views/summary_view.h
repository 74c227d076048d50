// SPDX-License-Identifier: MIT
/// @brief The summary of one plan as a table with its warnings (views/summary_data.h).
#pragma once

#include <QWidget>
#include <optional>

#include "views/summary_data.h"

class QTextBrowser;

namespace swapscope {

class SummaryView : public QWidget {
  Q_OBJECT
 public:
  explicit SummaryView(QWidget* parent = nullptr);

  void setData(const SummaryData& data);
  /// Rows and warnings added to every plan's summary until replaced (a run's measurement of the
  /// plan shown, addMeasuredSummary, or why it is not shown); nullopt removes them.
  void setOverlay(std::optional<SummaryData> overlay);
  const std::optional<SummaryData>& overlay() const { return m_overlay; }
  /// A message instead of a plan (no run database, planning...).
  void setMessage(const QString& text);
  const SummaryData& data() const { return m_data; }
  /// The text shown, as plain text.

 private:
  void render();

  QTextBrowser* m_text;
  SummaryData m_data;  ///< with the overlay
  SummaryData m_plan;  ///< as set
  std::optional<SummaryData> m_overlay;
  bool m_message = false;
};

}  // namespace swapscope
