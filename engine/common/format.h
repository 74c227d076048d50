// SPDX-License-Identifier: MIT
/// @brief Number formatting for tables: SI prefixes for counts ("3.66G"), thousands separators.
#pragma once

#include <cstdint>
#include <string>

namespace swapscope {

/// 3 significant digits with an SI prefix: 950, 1.23k, 45.6M, 7.72G, 1.02T.
std::string formatSi(double value);
/// Digits grouped by thousands: 25,557,032.
std::string formatGrouped(std::int64_t value);
/// Fixed-point with `digits` decimals: formatFixed(791.06, 1) == "791.1".
std::string formatFixed(double value, int digits);

}  // namespace swapscope
