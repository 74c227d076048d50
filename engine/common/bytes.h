// SPDX-License-Identifier: MIT
/// @brief Byte counts: parsing user sizes ("512MiB", "1.5GB"), formatting them, and sizes that are
/// exactly linear in the minibatch k (`fixed + per_sample * k`).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace swapscope {

/// Parses a byte size: a non-negative number with an optional unit. Binary units (KiB, MiB, GiB,
/// TiB) are powers of 1024, decimal units (kB/KB, MB, GB, TB) powers of 1000, "B" or no unit is
/// bytes. Prefixes take either case ("2 kiB", "2 KIB"), but a unit ends in a capital B: a lowercase
/// b is bits ("64Mb", "64b"), refused rather than read as bytes. Fractions are allowed with a unit
/// ("1.5GB") and rounded down to whole bytes. Throws Error(BadInput) naming `what` and the text
/// when it cannot parse.
std::int64_t parseByteSize(std::string_view text, std::string_view what = "size");

/// Formats bytes for people: "812 B", "3.25 KiB", "1.50 GiB" (binary units, 3 significant digits).
std::string formatBytes(std::int64_t bytes);

/// A memory size as a function of the minibatch k. Every GMAP size has this form, exactly.
struct LinearBytes {
  std::int64_t fixed = 0;       ///< bytes independent of k (parameters, statistics, ...)
  std::int64_t per_sample = 0;  ///< bytes added by each sample of the minibatch

  constexpr std::int64_t at(std::int64_t k) const { return fixed + per_sample * k; }
  constexpr LinearBytes& operator+=(const LinearBytes& o) {
    fixed += o.fixed;
    per_sample += o.per_sample;
    return *this;
  }
  constexpr LinearBytes& operator-=(const LinearBytes& o) {
    fixed -= o.fixed;
    per_sample -= o.per_sample;
    return *this;
  }
  friend constexpr LinearBytes operator+(LinearBytes a, const LinearBytes& b) { return a += b; }
  friend constexpr LinearBytes operator-(LinearBytes a, const LinearBytes& b) { return a -= b; }
  friend constexpr bool operator==(const LinearBytes&, const LinearBytes&) = default;
};

}  // namespace swapscope
