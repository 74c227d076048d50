// SPDX-License-Identifier: MIT
/// @brief An enumeration's names as one table that both directions read: the name of a value,
/// and the value of a name (none where the table holds no such name).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace swapscope {

template <typename E>
struct NamedValue {
  E value;
  std::string_view name;
};

/// The name of `value` in `table`; "?" for a value the table does not hold.
template <typename E, std::size_t N>
constexpr std::string_view nameIn(const NamedValue<E> (&table)[N], E value) {
  for (const NamedValue<E>& n : table) {
    if (n.value == value) return n.name;
  }
  return "?";
}

/// The value named `name` in `table`; none for a name it does not hold.
template <typename E, std::size_t N>
constexpr std::optional<E> valueIn(const NamedValue<E> (&table)[N], std::string_view name) {
  for (const NamedValue<E>& n : table) {
    if (n.name == name) return n.value;
  }
  return std::nullopt;
}

}  // namespace swapscope
