// SPDX-License-Identifier: MIT
/// @brief Replotting only what is on screen. QCustomPlot::replot draws every layer into the
/// plot's buffers whether or not the widget is shown, so a view refreshed on a hidden tab would
/// pay for a drawing nobody sees on every plan.
#pragma once

class QCustomPlot;

namespace swapscope {

/// Replots `plot` (queued) when it is visible; a hidden plot is marked and replotted when it
/// is next shown.
void replotWhenShown(QCustomPlot* plot);

/// Whether `plot` has a replot deferred until it is shown.
bool replotDeferred(const QCustomPlot* plot);

}  // namespace swapscope
