// SPDX-License-Identifier: MIT
#include "views/log_ticker.h"

#include <cmath>
#include <vector>

namespace swapscope {

QVector<double> ReadableLogTicker::createTickVector(double tickStep, const QCPRange& range) {
  const double lo = range.lower, hi = range.upper;
  m_plain = lo > 0 && hi > lo && hi / lo < 100;
  if (!m_plain) return QCPAxisTickerLog::createTickVector(tickStep, range);
  QVector<double> ticks;
  for (const std::vector<int>& mantissas :
       {std::vector<int>{1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}) {
    ticks.clear();
    for (int e = static_cast<int>(std::floor(std::log10(lo)));
         e <= static_cast<int>(std::ceil(std::log10(hi))); ++e) {
      for (const int m : mantissas) {
        const double v = m * std::pow(10.0, e);
        if (v >= lo && v <= hi) ticks.push_back(v);
      }
    }
    if (ticks.size() >= 3) break;
  }
  return ticks;
}

QVector<double> ReadableLogTicker::createSubTickVector(int subTickCount,
                                                       const QVector<double>& ticks) {
  if (m_plain) return {};
  return QCPAxisTickerLog::createSubTickVector(subTickCount, ticks);
}

QString ReadableLogTicker::getTickLabel(double tick, const QLocale& locale, QChar formatChar,
                                        int precision) {
  if (m_plain) return locale.toString(tick, 'g', 6);
  return QCPAxisTickerLog::getTickLabel(tick, locale, formatChar, precision);
}

}  // namespace swapscope
