// SPDX-License-Identifier: MIT
#include "gui/figure.h"

#include <qcustomplot.h>
#include <QBuffer>
#include <QFileInfo>
#include <QPdfWriter>
#include <QWidget>
#ifdef SWAPSCOPE_HAVE_QT_SVG
#include <QSvgGenerator>
#endif

#include "common/error.h"

namespace swapscope::gui {
namespace {

#ifdef SWAPSCOPE_HAVE_QT_SVG
constexpr const char* kFormats = ".png, .pdf or .svg";
#else
constexpr const char* kFormats =
    ".png or .pdf (.svg needs Qt SVG, which this build was made without)";
#endif

/// Draws `plot` (when given) or `widget` with `painter`.
void paint(QCPPainter& painter, QWidget* widget, QCustomPlot* plot, QSize size) {
  if (plot) {
    plot->toPainter(&painter, size.width(), size.height());
  } else {
    widget->render(&painter);
  }
}

}  // namespace

QString figureFormat(const QString& path, const char* what) {
  const QString suffix = QFileInfo(path).suffix().toLower();
#ifdef SWAPSCOPE_HAVE_QT_SVG
  if (suffix == "svg") return suffix;
#endif
  if (suffix == "png" || suffix == "pdf") return suffix;
  const std::string named = std::string(what) + " '" + path.toStdString() + "'";
  if (suffix.isEmpty()) throwBadInput(named + " has no extension; name a " + kFormats + " file");
  throwBadInput(named + ": unknown image format '." + suffix.toStdString() + "'; name a " +
                kFormats + " file");
}

QByteArray renderFigure(QWidget* widget, QCustomPlot* plot, QSize size, const QString& format) {
  const int w = size.width(), h = size.height();
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  if (format == "png") {
    const QPixmap pixmap = plot ? plot->toPixmap(w, h) : widget->grab();
    if (!pixmap.save(&buffer, "PNG")) throw Error(ErrorKind::Runtime, "cannot render the PNG");
  } else if (format == "pdf") {
    QPdfWriter pdf(&buffer);
    pdf.setResolution(72);
    pdf.setPageSize(QPageSize(QSizeF(w, h), QPageSize::Point));
    pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
    pdf.setCreator("swapscope-gui");
    QCPPainter painter(&pdf);
    paint(painter, widget, plot, size);
  } else {
#ifdef SWAPSCOPE_HAVE_QT_SVG
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(QSize(w, h));
    svg.setViewBox(QRect(0, 0, w, h));
    svg.setTitle("swapscope-gui");
    QCPPainter painter(&svg);
    paint(painter, widget, plot, size);
#else
    throwBadInput("SVG export needs Qt SVG, which this build was made without; use .png or .pdf");
#endif
  }
  return bytes;
}

}  // namespace swapscope::gui
