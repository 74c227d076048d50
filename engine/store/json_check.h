// SPDX-License-Identifier: MIT
/// @brief The syntax check of the JSON a run database stores, bounded in time and in what it says.
#pragma once

#include <optional>
#include <string>

namespace swapscope::store {

/// Why `text` is not valid JSON, bounded: its length, the byte where parsing stopped and a few
/// characters around it, never the whole value. A syntax check that builds nothing and does not
/// recurse, so a hostile value (deeply nested, megabytes long) costs one linear pass.
std::optional<std::string> jsonError(const std::string& text);

}  // namespace swapscope::store
