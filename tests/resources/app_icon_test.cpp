// SPDX-License-Identifier: MIT
// The app icon compiled into swapscope-gui: every size of resources/ is there and is the icon,
// and the program's desktop id is the one the desktop entry, the metainfo and the icon use.
#include <gtest/gtest.h>

#include <QFile>
#include <QGuiApplication>
#include <QImage>
#include <QPixmap>
#include <algorithm>

#include "gui/app_icon.h"

namespace swapscope::gui {
namespace {

const QString kResources = QStringLiteral(SWAPSCOPE_RESOURCES_DIR);

TEST(AppIcon, HasEverySizeOfTheResources) {
  const QIcon icon = appIcon();
  ASSERT_FALSE(icon.isNull());
  QList<int> sizes;
  for (const QSize& s : icon.availableSizes()) {
    EXPECT_EQ(s.width(), s.height());
    sizes.push_back(s.width());
  }
  std::sort(sizes.begin(), sizes.end());
  EXPECT_EQ(sizes, (QList<int>{16, 32, 48, 64, 128, 256}));
  // Each size is the PNG of resources/ for it, pixel for pixel.
  for (const int size : {16, 32, 48, 64, 128, 256}) {
    const QImage compiled = icon.pixmap(QSize(size, size), 1.0).toImage();
    const QImage file(kResources + QStringLiteral("/icons/hicolor/%1x%1/apps/").arg(size) +
                      kDesktopId + QStringLiteral(".png"));
    ASSERT_FALSE(file.isNull()) << size;
    EXPECT_EQ(compiled.convertToFormat(QImage::Format_ARGB32),
              file.convertToFormat(QImage::Format_ARGB32))
        << size;
  }
}

TEST(AppIcon, IsARoundedTileOnATransparentCorner) {
  const QImage image = appIcon().pixmap(QSize(256, 256), 1.0).toImage();
  ASSERT_EQ(image.size(), QSize(256, 256));
  EXPECT_EQ(qAlpha(image.pixel(0, 0)), 0);        // outside the rounded tile
  EXPECT_EQ(qAlpha(image.pixel(128, 240)), 255);  // the tile
  EXPECT_EQ(image.pixel(128, 240), qRgb(0x1e, 0x29, 0x33));
}

TEST(AppIcon, TheDesktopEntryAndTheMetainfoUseTheProgramsId) {
  QFile desktop(kResources + QStringLiteral("/") + kDesktopId + QStringLiteral(".desktop"));
  ASSERT_TRUE(desktop.open(QIODevice::ReadOnly)) << desktop.fileName().toStdString();
  const QByteArray entry = desktop.readAll();
  EXPECT_TRUE(entry.contains(QByteArray("\nIcon=") + kDesktopId + '\n'));
  QFile metainfo(kResources + QStringLiteral("/") + kDesktopId + QStringLiteral(".metainfo.xml"));
  ASSERT_TRUE(metainfo.open(QIODevice::ReadOnly)) << metainfo.fileName().toStdString();
  EXPECT_TRUE(metainfo.readAll().contains(QByteArray("<id>") + kDesktopId + "</id>"));
}

}  // namespace
}  // namespace swapscope::gui
