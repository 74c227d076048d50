// SPDX-License-Identifier: MIT
/// @brief Number formatting for tables: SI prefixes for counts ("3.66G"), thousands separators.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace swapscope {

/// 3 significant digits with an SI prefix: 950, 1.23k, 45.6M, 7.72G, 1.02T.
std::string formatSi(double value);
/// Digits grouped by thousands: 25,557,032.
std::string formatGrouped(std::int64_t value);
/// Fixed-point with `digits` decimals: formatFixed(791.06, 1) == "791.1".
std::string formatFixed(double value, int digits);
/// Seconds as milliseconds, without the unit: 3 decimals below 10 ms, else 1 ("0.007", "791.1").
std::string formatMilliseconds(double seconds);
/// A duration that may be milliseconds or days (a whole training), with its unit: below 1 s as
/// milliseconds (formatMilliseconds: "79.2 ms", "0.007 ms"), below 2 min as seconds with one
/// decimal ("42.5 s"), below 2 h as minutes with one decimal ("12.3 min"), else hours with two
/// ("26.50 h"). The unit is chosen by the rounded value, so 0.99996 s is "1.0 s".
std::string formatDuration(double seconds);
/// (predicted - measured) / measured as a signed percentage, "+4.7 %"; "-" when measured is 0.
std::string formatRelativeError(double predicted, double measured);

/// The length of the valid UTF-8 character that starts at `text[i]` (1 for ASCII), or 0 where
/// none does there (a stray continuation byte, an overlong or cut sequence, a surrogate).
std::size_t utf8CharLength(std::string_view text, std::size_t i);

/// A number for a message: NaN and infinities by name, else as %g writes it ("0.5", "-1e-07").
std::string numberText(double value);

/// `text` in single quotes for a message, cut to at most `max` bytes (then "..." and the full
/// length), with control characters and bytes that are not UTF-8 written as \xNN: a name read
/// from a file may hold a NUL, which would end the message where it is printed as a C string,
/// or a byte the terminal would show as garbage.
std::string quoteBounded(std::string_view text, std::size_t max = 80);

/// Drops a UTF-8 character that a cut left incomplete at the end of `text` (its lead byte and
/// the continuation bytes kept), so that a shortened text never ends inside one.
void dropCutUtf8Character(std::string& text);

}  // namespace swapscope
