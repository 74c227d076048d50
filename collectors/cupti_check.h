// SPDX-License-Identifier: MIT
/// @brief The checked-call macro for CUPTI: a failing call throws Error(Runtime) carrying the
/// call, CUPTI's result text, the file and the line.
#pragma once

#include <string>

#include <cupti.h>

#include "runtime/cuda/check.h"

namespace swapscope::detail {

inline std::string cuptiResultText(CUptiResult r) {
  const char* text = nullptr;
  if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || !text)
    return "CUPTI error " + std::to_string(r);
  return text;
}

[[noreturn]] inline void throwCuptiError(CUptiResult r, const char* call, const char* file,
                                         int line) {
  throwLibraryError("CUPTI", cuptiResultText(r), call, file, line);
}

}  // namespace swapscope::detail

#define SWAPSCOPE_CUPTI_CHECK(call)                                                       \
  do {                                                                                    \
    const CUptiResult swapscope_status_ = (call);                                         \
    if (swapscope_status_ != CUPTI_SUCCESS) {                                             \
      ::swapscope::detail::throwCuptiError(swapscope_status_, #call, __FILE__, __LINE__); \
    }                                                                                     \
  } while (0)
