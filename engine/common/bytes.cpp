// SPDX-License-Identifier: MIT
#include "common/bytes.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "common/error.h"

namespace swapscope {
namespace {

struct Unit {
  std::string_view name;
  double factor;
};

constexpr std::array<Unit, 10> kUnits{{
    {"b", 1.0},
    {"kib", 1024.0},
    {"mib", 1024.0 * 1024.0},
    {"gib", 1024.0 * 1024.0 * 1024.0},
    {"tib", 1024.0 * 1024.0 * 1024.0 * 1024.0},
    {"kb", 1e3},
    {"mb", 1e6},
    {"gb", 1e9},
    {"tb", 1e12},
    {"", 1.0},
}};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

[[noreturn]] void fail(std::string_view what, std::string_view text, std::string_view why) {
  throwBadInput(std::string(what) + ": cannot read '" + std::string(text) + "' as a byte size (" +
                std::string(why) + "); examples: 123456, 512MiB, 6GiB, 1.5GB");
}

}  // namespace

std::int64_t parseByteSize(std::string_view text, std::string_view what) {
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  if (s.empty()) fail(what, text, "it is empty");
  std::size_t numberEnd = 0;
  bool sawDigit = false;
  bool sawDot = false;
  while (numberEnd < s.size()) {
    const char c = s[numberEnd];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      sawDigit = true;
    } else if (c == '.' && !sawDot) {
      sawDot = true;
    } else {
      break;
    }
    ++numberEnd;
  }
  if (!sawDigit) fail(what, text, "it does not start with a number");
  std::string_view unitText = s.substr(numberEnd);
  while (!unitText.empty() && unitText.front() == ' ')
    unitText.remove_prefix(1);
  // A lowercase b is bits (64Mb is 8 MB): a byte size ends in a capital B, and is refused rather
  // than read as eight times its meaning.
  if (!unitText.empty() && unitText.back() == 'b') {
    fail(what, text,
         "a lowercase 'b' is bits: bytes are a capital B, as in 64MiB, 64MB or 64B, with the "
         "prefix in either case");
  }
  const std::string unit = lower(unitText);
  const Unit* found = nullptr;
  for (const Unit& u : kUnits) {
    if (u.name == unit) found = &u;
  }
  if (found == nullptr) fail(what, text, "unknown unit '" + std::string(unitText) + "'");

  const std::string_view number = s.substr(0, numberEnd);
  if (!sawDot) {
    std::uint64_t whole = 0;
    auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), whole);
    if (ec != std::errc() || ptr != number.data() + number.size()) fail(what, text, "out of range");
    const auto factor = static_cast<std::uint64_t>(found->factor);
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (whole > kMax / factor) fail(what, text, "too large");
    return static_cast<std::int64_t>(whole * factor);
  }
  if (found->name.empty() || found->name == "b") fail(what, text, "fractional bytes need a unit");
  // from_chars, not stod: no exception and no locale. A fraction too small for a double is less
  // than a byte (0); one too large for it is out of range.
  double parsed = 0;
  const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), parsed);
  if (ec == std::errc::result_out_of_range) {
    const bool tiny =
        number.find_first_not_of("0.") == std::string_view::npos ||
        number.substr(0, number.find('.')).find_first_not_of('0') == std::string_view::npos;
    if (!tiny) fail(what, text, "too large");
    parsed = 0;
  } else if (ec != std::errc() || ptr != number.data() + number.size()) {
    fail(what, text, "it is not a number");
  }
  const double value = parsed * found->factor;
  if (!(value < 9.2e18)) fail(what, text, "too large");
  return static_cast<std::int64_t>(std::floor(value));
}

std::string formatBytes(std::int64_t bytes) {
  static constexpr std::array<const char*, 5> kNames{"B", "KiB", "MiB", "GiB", "TiB"};
  const bool negative = bytes < 0;
  double value = std::fabs(static_cast<double>(bytes));
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < kNames.size()) {
    value /= 1024.0;
    ++unit;
  }
  char buf[48];
  if (unit == 0) {
    std::snprintf(buf, sizeof buf, "%s%lld B", negative ? "-" : "",
                  static_cast<long long>(std::llabs(bytes)));
  } else {
    const int decimals = value >= 100.0 ? 0 : (value >= 10.0 ? 1 : 2);
    std::snprintf(buf, sizeof buf, "%s%.*f %s", negative ? "-" : "", decimals, value, kNames[unit]);
  }
  return buf;
}

}  // namespace swapscope
