// SPDX-License-Identifier: MIT
/// @brief The image formats the app writes, for Save figure and --screenshot alike: PNG, PDF,
/// and SVG where the build has Qt SVG, chosen by the file name's extension.
#pragma once

#include <QByteArray>
#include <QSize>
#include <QString>

class QCustomPlot;
class QWidget;

namespace swapscope::gui {

/// The format `path` asks for ("png", "pdf" or "svg", from its extension in any case).
/// Error(BadInput) naming the path and the extension, and listing the formats this build
/// writes, for any other extension or none.
QString figureFormat(const QString& path, const char* what);

/// `widget` drawn at `size` in `format` (figureFormat's): `plot`, when given, through
/// QCustomPlot's own painter (vector in PDF and SVG), else the widget and its children as they
/// paint themselves.
QByteArray renderFigure(QWidget* widget, QCustomPlot* plot, QSize size, const QString& format);

}  // namespace swapscope::gui
