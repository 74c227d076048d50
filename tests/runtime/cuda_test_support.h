// SPDX-License-Identifier: MIT
/// @brief What the GPU tests share: why they cannot run here, SWAPSCOPE_REQUIRE_GPU, and the
/// update-based comparison of two backends' training steps.
///
/// A GPU test skips with the reason where no CUDA device is usable. With SWAPSCOPE_REQUIRE_GPU=1
/// in the environment (bench/gpu/validate.py sets it on the GPU machine) the same condition is a
/// failure, so that "no device" or "driver too old" cannot pass as a skip where the GPU is.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "runtime/device.h"

namespace swapscope::rt {

/// Why the CUDA tests cannot run here, or empty when they can.
inline std::string noCudaReason() {
  for (const BackendInfo& b : listBackends()) {
    if (b.name == "cuda" && !b.available) return "no CUDA backend here: " + b.detail;
  }
  return {};
}

/// Whether SWAPSCOPE_REQUIRE_GPU is set to something other than "" or "0".
inline bool gpuRequired() {
  const char* v = std::getenv("SWAPSCOPE_REQUIRE_GPU");
  return v && *v && std::string(v) != "0";
}

/// Skips the test with `why`, or fails it under SWAPSCOPE_REQUIRE_GPU=1.
#define SWAPSCOPE_GPU_UNAVAILABLE(why)                                                      \
  do {                                                                                      \
    if (::swapscope::rt::gpuRequired()) FAIL() << "SWAPSCOPE_REQUIRE_GPU=1, but " << (why); \
    GTEST_SKIP() << (why);                                                                  \
  } while (0)

/// The first statement of every test that needs a CUDA device.
#define SWAPSCOPE_REQUIRE_CUDA()                              \
  do {                                                        \
    const std::string why_ = ::swapscope::rt::noCudaReason(); \
    if (!why_.empty()) SWAPSCOPE_GPU_UNAVAILABLE(why_);       \
  } while (0)

/// The numerics check of one SGD step taken with lr 1, momentum 0 and weight decay 0, so that
/// w1 - w0 is the gradient itself: per tensor, max |du - dref| / max |dref| with dref = ref1 - w0
/// and du = got1 - w0. A tensor whose reference update is zero errs by infinity unless the other
/// update is zero too. Unlike comparing the weights after a small step (where an error in the
/// gradient vanishes beside the weights), this sees a 1 % error in any gradient as 1e-2.
inline std::vector<double> updateErrors(const std::vector<std::vector<float>>& w0,
                                        const std::vector<std::vector<float>>& ref1,
                                        const std::vector<std::vector<float>>& got1) {
  std::vector<double> out;
  for (std::size_t t = 0; t < w0.size(); ++t) {
    double scale = 0, diff = 0;
    for (std::size_t i = 0; i < w0[t].size(); ++i) {
      const double dref = static_cast<double>(ref1[t][i]) - w0[t][i];
      const double dgot = static_cast<double>(got1[t][i]) - w0[t][i];
      scale = std::max(scale, std::abs(dref));
      diff = std::max(diff, std::abs(dgot - dref));
    }
    out.push_back(scale > 0 ? diff / scale
                            : (diff > 0 ? std::numeric_limits<double>::infinity() : 0.0));
  }
  return out;
}

/// The older check: per tensor, max |got - ref| / max |ref| of the values themselves.
inline std::vector<double> valueErrors(const std::vector<std::vector<float>>& ref,
                                       const std::vector<std::vector<float>>& got) {
  std::vector<double> out;
  for (std::size_t t = 0; t < ref.size(); ++t) {
    double scale = 0, diff = 0;
    for (std::size_t i = 0; i < ref[t].size(); ++i) {
      scale = std::max(scale, std::abs(static_cast<double>(ref[t][i])));
      diff = std::max(diff, std::abs(static_cast<double>(got[t][i]) - ref[t][i]));
    }
    out.push_back(scale > 0 ? diff / scale : diff);
  }
  return out;
}

}  // namespace swapscope::rt
