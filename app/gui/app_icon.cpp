// SPDX-License-Identifier: MIT
#include "gui/app_icon.h"

#include <QString>

// The resources are in a static library: the program registers them before first use.
static void initResources() {
  Q_INIT_RESOURCE(swapscope);
}

namespace swapscope::gui {

QIcon appIcon() {
  initResources();
  QIcon icon;
  for (const int size : {16, 32, 48, 64, 128, 256})
    icon.addFile(QStringLiteral(":/icons/swapscope-%1.png").arg(size), QSize(size, size));
  return icon;
}

}  // namespace swapscope::gui
