// SPDX-License-Identifier: MIT
/// @brief Ticks for a logarithmic axis that read at any range: powers of ten where the range
/// spans two decades or more (QCPAxisTickerLog's), else 1-2-5 steps (1..9 where those give fewer
/// than three ticks) labelled as plain numbers. QCPAxisTickerLog alone falls back to linear
/// steps on a narrow range, which crowd at the top of a log axis and leave its bottom bare.
#pragma once

#include <qcustomplot.h>

namespace swapscope {

class ReadableLogTicker : public QCPAxisTickerLog {
 protected:
  QVector<double> createTickVector(double tickStep, const QCPRange& range) override;
  QVector<double> createSubTickVector(int subTickCount, const QVector<double>& ticks) override;
  QString getTickLabel(double tick, const QLocale& locale, QChar formatChar,
                       int precision) override;

 private:
  bool m_plain = false;  ///< the last range was narrow: 1-2-5 ticks, plain labels
};

}  // namespace swapscope
