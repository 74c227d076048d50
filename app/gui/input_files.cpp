// SPDX-License-Identifier: MIT
#include "gui/input_files.h"

#include <algorithm>

#include "options/file_options.h"

namespace swapscope::gui {

bool InputFiles::contains(const std::string& path) const {
  return std::any_of(m_rules.inputs.begin(), m_rules.inputs.end(),
                     [&](const files::Input& in) { return in.path == path; });
}

void InputFiles::addDatabase(const QString& path, const std::string& what) {
  const std::string p = path.toStdString();
  if (!p.empty() && !contains(p)) cli::addInput(m_rules, what, p);
}

void InputFiles::addNetwork(const QString& path, const std::string& what) {
  const std::string p = path.toStdString();
  if (!p.empty() && !contains(p)) m_rules.inputs.push_back({what, p});
}

files::OutputRules InputFiles::rules(bool force) const {
  files::OutputRules rules = m_rules;
  rules.force = force;
  return rules;
}

}  // namespace swapscope::gui
