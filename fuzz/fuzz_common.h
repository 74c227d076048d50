// SPDX-License-Identifier: MIT
/// @brief What every fuzz target shares. A target catches swapscope::Error, the engine's answer
/// to bad input; any other exception, a crash, a sanitizer report, a hang or a broken invariant
/// (finding() below) is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace swapscope::fuzz {

inline std::string_view asText(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Reports a broken invariant and aborts, which libFuzzer records as a crash with this input.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "swapscope fuzz finding: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace swapscope::fuzz
