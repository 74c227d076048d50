// SPDX-License-Identifier: MIT
/// @brief Messages drawn inside a chart (an untrainable budget's reason) broken into lines that
/// fit the chart at any window width.
#pragma once

#include <QString>

class QCPItemText;
class QCPAxisRect;
class QFontMetrics;

namespace swapscope {

/// `text` broken at spaces into lines no wider than `width` pixels in `metrics` (a word wider
/// than that stands on its own line).
QString wrapped(const QString& text, const QFontMetrics& metrics, int width);

/// Sets `item`'s text to `text` wrapped to the width of `rect` less `margin` on each side (at
/// least 120 pixels). Called again after each layout (QCustomPlot::afterLayout), it follows the
/// chart's width.
void wrapInto(QCPItemText* item, const QCPAxisRect* rect, const QString& text, int margin);

}  // namespace swapscope
