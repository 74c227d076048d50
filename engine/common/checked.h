// SPDX-License-Identifier: MIT
/// @brief 64-bit integer arithmetic that reports overflow instead of wrapping. Sizes, parameter
/// counts and FLOP counts of a user's network go through these, so a network too large to count
/// is refused (Error BadInput) rather than analysed with wrapped numbers.
#pragma once

#include <cstdint>
#include <optional>

#include "common/bytes.h"

namespace swapscope {

/// a * b, or nullopt when the product does not fit in 64 bits.
[[nodiscard]] inline std::optional<std::int64_t> checkedMul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// a + b, or nullopt when the sum does not fit in 64 bits.
[[nodiscard]] inline std::optional<std::int64_t> checkedAdd(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// fixed + per_sample * k, or nullopt when it does not fit in 64 bits.
[[nodiscard]] inline std::optional<std::int64_t> checkedAt(const LinearBytes& b, std::int64_t k) {
  std::int64_t scaled = 0;
  std::int64_t r = 0;
  if (__builtin_mul_overflow(b.per_sample, k, &scaled)) return std::nullopt;
  if (__builtin_add_overflow(b.fixed, scaled, &r)) return std::nullopt;
  return r;
}

/// a + b term by term, or nullopt when either term overflows.
[[nodiscard]] inline std::optional<LinearBytes> checkedSum(const LinearBytes& a,
                                                           const LinearBytes& b) {
  LinearBytes r;
  if (__builtin_add_overflow(a.fixed, b.fixed, &r.fixed)) return std::nullopt;
  if (__builtin_add_overflow(a.per_sample, b.per_sample, &r.per_sample)) return std::nullopt;
  return r;
}

}  // namespace swapscope
