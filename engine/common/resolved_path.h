// SPDX-License-Identifier: MIT
/// @brief A path as the file system resolves it, for comparing names of files that need not
/// exist yet (a run database's -wal file before SQLite makes it).
#pragma once

#include <filesystem>
#include <string>

namespace swapscope::files {

/// `path` made absolute, with every symbolic link in the part of it that exists resolved and
/// "." and ".." removed: two names of one file, existing or to be created, give the same value
/// (a link to the file or to a folder above it, `./a`, `d/../a`). A hard link keeps its own
/// name; compare identity() for files that exist.
std::filesystem::path resolvedPath(const std::string& path);

}  // namespace swapscope::files
