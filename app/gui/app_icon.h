// SPDX-License-Identifier: MIT
/// @brief The app's icon and desktop identity (resources/: the icon, the .desktop file and the
/// AppStream metainfo share the id).
#pragma once

#include <QIcon>

namespace swapscope::gui {

/// The desktop entry's id: the .desktop file's name without ".desktop", the metainfo's <id> and
/// the icon's name in the hicolor theme.
inline constexpr const char* kDesktopId = "io.github.swapscope.Swapscope";

/// The icon at 16, 32, 48, 64, 128 and 256 pixels, from the resources compiled into the program.
QIcon appIcon();

}  // namespace swapscope::gui
