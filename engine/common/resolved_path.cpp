// SPDX-License-Identifier: MIT
#include "common/resolved_path.h"

#include <system_error>

namespace swapscope::files {

std::filesystem::path resolvedPath(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  if (ec) return std::filesystem::path(path).lexically_normal();
  const std::filesystem::path resolved = std::filesystem::weakly_canonical(absolute, ec);
  return ec ? absolute.lexically_normal() : resolved;
}

}  // namespace swapscope::files
