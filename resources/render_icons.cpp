// SPDX-License-Identifier: MIT
/// @brief Renders the SVG icon to the PNG sizes the hicolor icon theme installs
/// (icons/hicolor/<size>x<size>/apps/io.github.swapscope.Swapscope.png). Run it after editing the
/// SVG and commit the PNGs: `render_icons resources/icons/io.github.swapscope.Swapscope.svg
/// resources/icons/hicolor`.
#include <QDir>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>
#include <cstdio>

int main(int argc, char** argv) {
  QGuiApplication app(argc, argv);
  if (argc != 3) {
    std::fprintf(stderr, "usage: render_icons ICON.svg OUT_DIR\n");
    return 2;
  }
  QSvgRenderer svg(QString::fromLocal8Bit(argv[1]));
  if (!svg.isValid()) {
    std::fprintf(stderr, "render_icons: '%s' is not a readable SVG\n", argv[1]);
    return 2;
  }
  for (const int size : {16, 32, 48, 64, 128, 256}) {
    QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    svg.render(&painter);
    painter.end();
    const QString dir = QString::fromLocal8Bit(argv[2]) + QStringLiteral("/%1x%1/apps").arg(size);
    const QString file = dir + QStringLiteral("/io.github.swapscope.Swapscope.png");
    if (!QDir().mkpath(dir) || !image.save(file, "PNG")) {
      std::fprintf(stderr, "render_icons: cannot write '%s'\n", qPrintable(file));
      return 1;
    }
  }
  return 0;
}
