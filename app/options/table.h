// SPDX-License-Identifier: MIT
/// @brief Aligned plain-text tables for terminal output.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace swapscope::cli {

class TextTable {
 public:
  enum class Align { Left, Right };
  void column(std::string header, Align align = Align::Left);
  void row(std::vector<std::string> cells);
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> m_headers;
  std::vector<Align> m_align;
  std::vector<std::vector<std::string>> m_rows;
};

}  // namespace swapscope::cli
