// SPDX-License-Identifier: MIT
#include "views/summary_view.h"

#include <QTextBrowser>
#include <QVBoxLayout>

namespace swapscope {

SummaryView::SummaryView(QWidget* parent) : PlanView(parent), m_text(new QTextBrowser) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_text);
}

void SummaryView::setPlan(const ShownPlan& plan) {
  setData(std::any_cast<const SummaryData&>(plan.data));
}

void SummaryView::setData(const SummaryData& data) {
  m_plan = data;
  m_message = false;
  render();
}

void SummaryView::setOverlay(std::shared_ptr<const MeasuredOverlay> overlay) {
  m_overlay = std::move(overlay);
  if (!m_message) render();
}

void SummaryView::render() {
  m_data = m_plan;
  if (m_overlay) {
    const SummaryData& o = m_overlay->summary;
    m_data.rows.insert(m_data.rows.end(), o.rows.begin(), o.rows.end());
    m_data.warnings.insert(m_data.warnings.end(), o.warnings.begin(), o.warnings.end());
    m_data.measured = o.measured;
  }
  const SummaryData& data = m_data;
  QString html = "<table cellspacing=4>";
  for (const SummaryRow& row : data.rows) {
    html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
                .arg(QString::fromStdString(row.label).toHtmlEscaped(),
                     QString::fromStdString(row.value).toHtmlEscaped());
  }
  html += "</table>";
  if (!data.warnings.empty()) {
    html += "<ul>";
    for (const std::string& w : data.warnings) {
      const bool severe = w.rfind("untrainable", 0) == 0 || w.rfind("device:", 0) == 0;
      html += QStringLiteral("<li><font color=%1>%2</font></li>")
                  .arg(severe ? "#c02020" : "#8a5a00", QString::fromStdString(w).toHtmlEscaped());
    }
    html += "</ul>";
  }
  m_text->setHtml(html);
}

void SummaryView::setMessage(const QString& text) {
  m_data = {};
  m_plan = {};
  m_message = true;
  m_text->setPlainText(text);
}

}  // namespace swapscope
