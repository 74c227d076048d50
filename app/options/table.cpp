// SPDX-License-Identifier: MIT
#include "options/table.h"

#include <algorithm>

namespace swapscope::cli {

void TextTable::column(std::string header, Align align) {
  m_headers.push_back(std::move(header));
  m_align.push_back(align);
}

void TextTable::row(std::vector<std::string> cells) {
  cells.resize(m_headers.size());
  m_rows.push_back(std::move(cells));
}

void TextTable::print(std::ostream& out) const {
  std::vector<std::size_t> width(m_headers.size());
  for (std::size_t c = 0; c < m_headers.size(); ++c)
    width[c] = m_headers[c].size();
  for (const auto& r : m_rows) {
    for (std::size_t c = 0; c < r.size(); ++c)
      width[c] = std::max(width[c], r[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      if (c) s += "  ";
      s += m_align[c] == Align::Right ? pad + cells[c] : cells[c] + pad;
    }
    while (!s.empty() && s.back() == ' ')
      s.pop_back();
    out << s << '\n';
  };
  line(m_headers);
  std::vector<std::string> rule;
  for (std::size_t w : width)
    rule.emplace_back(w, '-');
  line(rule);
  for (const auto& r : m_rows)
    line(r);
}

}  // namespace swapscope::cli
