// SPDX-License-Identifier: MIT
/// @brief The summary of one plan as a table with its warnings (views/summary_data.h).
#pragma once

#include <QWidget>

#include "views/summary_data.h"

class QTextBrowser;

namespace swapscope {

class SummaryView : public QWidget {
  Q_OBJECT
 public:
  explicit SummaryView(QWidget* parent = nullptr);

  void setData(const SummaryData& data);
  /// A message instead of a plan (no run database, planning...).
  void setMessage(const QString& text);
  const SummaryData& data() const { return m_data; }
  /// The text shown, as plain text.

 private:
  QTextBrowser* m_text;
  SummaryData m_data;
};

}  // namespace swapscope
