// SPDX-License-Identifier: MIT
#include "common/format.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace swapscope {

std::string formatSi(double value) {
  static constexpr std::array<const char*, 7> kPrefix{"", "k", "M", "G", "T", "P", "E"};
  const char* sign = value < 0 ? "-" : "";
  double v = std::fabs(value);
  std::size_t p = 0;
  while (v >= 999.5 && p + 1 < kPrefix.size()) {
    v /= 1000.0;
    ++p;
  }
  char buf[32];
  if (p == 0 && v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%s%.0f", sign, v);
  } else {
    const int decimals = v >= 99.95 ? 0 : (v >= 9.995 ? 1 : 2);
    std::snprintf(buf, sizeof buf, "%s%.*f%s", sign, decimals, v, kPrefix[p]);
  }
  return buf;
}

std::string formatGrouped(std::int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string formatFixed(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, value);
  return buf;
}

std::string formatMilliseconds(double seconds) {
  return formatFixed(seconds * 1e3, std::abs(seconds) < 0.01 ? 3 : 1);
}

std::string formatDuration(double seconds) {
  // Each unit up to where its rounded value would read as the next one's.
  if (std::abs(seconds) < 0.99995) return formatMilliseconds(seconds) + " ms";
  if (std::abs(seconds) < 119.95) return formatFixed(seconds, 1) + " s";
  if (std::abs(seconds) < 119.95 * 60) return formatFixed(seconds / 60, 1) + " min";
  return formatFixed(seconds / 3600, 2) + " h";
}

std::string formatRelativeError(double predicted, double measured) {
  if (measured == 0) return "-";
  const double e = 100.0 * (predicted - measured) / measured;
  std::string out = e >= 0 ? "+" : "";
  out += formatFixed(e, 1);
  out += " %";
  return out;
}

void dropCutUtf8Character(std::string& text) {
  while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80)
    text.pop_back();
  if (!text.empty() && static_cast<unsigned char>(text.back()) >= 0xC0) text.pop_back();
}

std::size_t utf8CharLength(std::string_view text, std::size_t i) {
  const auto at = [&](std::size_t j) {
    return j < text.size() ? static_cast<unsigned char>(text[j]) : 0u;
  };
  const unsigned c = at(i);
  if (c < 0x80) return i < text.size() ? 1 : 0;
  std::size_t n = 0;
  unsigned lo = 0x80, hi = 0xBF;  // the second byte's range
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // not overlong
    if (c == 0xED) hi = 0x9F;  // not a surrogate
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;  // up to U+10FFFF
  } else {
    return 0;
  }
  if (at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (std::size_t j = 2; j < n; ++j) {
    if (at(i + j) < 0x80 || at(i + j) > 0xBF) return 0;
  }
  return n;
}

std::string numberText(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "infinity" : "-infinity";
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string quoteBounded(std::string_view text, std::size_t max) {
  std::size_t cut = std::min(text.size(), max);
  // Never cut inside a UTF-8 sequence: back up over continuation bytes.
  if (cut < text.size()) {
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
      --cut;
  }
  std::string out = "'";
  for (std::size_t i = 0; i < cut;) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t n = utf8CharLength(text.substr(0, cut), i);
    if (c < 0x20 || c == 0x7f || n == 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  out += "'";
  if (cut < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace swapscope
