// SPDX-License-Identifier: MIT
/// @brief What a view's chart writes in its plot: the text items the tests look for.
#pragma once

#include <gtest/gtest.h>
#include <qcustomplot.h>

namespace swapscope::testing {

/// Whether `plot` shows a text item that holds `needle`; each line of every such item is
/// expected to be at most `width` pixels wide (a message wrapped to its chart).
inline bool statesWithin(QCustomPlot* plot, const QString& needle, int width) {
  bool stated = false;
  for (int i = 0; i < plot->itemCount(); ++i) {
    auto* t = qobject_cast<QCPItemText*>(plot->item(i));
    if (!t || !t->visible() || !t->text().contains(needle)) continue;
    stated = true;
    const QFontMetrics metrics(t->font());
    for (const QString& line : t->text().split('\n'))
      EXPECT_LE(metrics.horizontalAdvance(line), width) << line.toStdString();
  }
  return stated;
}

}  // namespace swapscope::testing
