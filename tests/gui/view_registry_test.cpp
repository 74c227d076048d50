// SPDX-License-Identifier: MIT
// The table of views (app/gui/view_registry.h) against what follows it: the window's tabs, the
// --view choices with their help and message, the screenshot tests' list (read by CMake from the
// table's source) and docs/gui.md's synopsis and list of views.
#include <QTabWidget>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "common/error.h"
#include "gui/gui_options.h"
#include "gui/main_window.h"
#include "gui/view_registry.h"
#include "views/plan_view.h"

namespace swapscope::gui {
namespace {

QStringList titles() {
  QStringList t;
  for (const ViewRow& row : viewTable())
    t << row.title;
  return t;
}

std::string docs() {
  std::ifstream in(std::string(SWAPSCOPE_DOCS_DIR) + "/gui.md");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ViewRegistry, EveryRowIsAPlanViewOrARecordedRunView) {
  ASSERT_FALSE(viewTable().empty());
  for (const ViewRow& row : viewTable()) {
    EXPECT_NE(row.make == nullptr, row.recorded == nullptr) << row.name;
    if (!row.make) {
      EXPECT_EQ(row.build, nullptr) << row.name;
    }
  }
  EXPECT_EQ(viewNames().removeDuplicates(), 0);
}

TEST(ViewRegistry, TheWindowHasOneTabPerRowInItsOrder) {
  MainWindow window;
  ASSERT_EQ(window.tabs()->count(), static_cast<int>(viewTable().size()));
  ASSERT_EQ(window.planViews().size(), viewTable().size());
  for (int i = 0; i < window.tabs()->count(); ++i) {
    const ViewRow& row = viewTable()[static_cast<std::size_t>(i)];
    EXPECT_EQ(window.tabs()->tabText(i), row.title);
    PlanView* view = window.planViews()[static_cast<std::size_t>(i)];
    EXPECT_EQ(view != nullptr, row.make != nullptr) << row.name;
    if (!view) continue;
    EXPECT_EQ(window.tabs()->widget(i), view);
    EXPECT_EQ(view->name(), row.name);
    window.showView(row.name);
    EXPECT_EQ(window.tabs()->currentIndex(), i);
  }
}

TEST(ViewRegistry, ViewChoicesAreTheTablesNames) {
  const GuiOptions help = parseGuiOptions({"swapscope-gui", "--help"});
  // --help wraps the description: compared with the white space collapsed.
  EXPECT_NE(help.help_text.simplified().indexOf(viewChoices()), -1) << help.help_text.toStdString();
  EXPECT_EQ(viewChoices(),
            "memory, streams, tradeoff, layers, model, summary, timeline or compare");
  for (const QString& name : viewNames())
    EXPECT_EQ(parseGuiOptions({"swapscope-gui", "--view", name}).view, name);
  try {
    parseGuiOptions({"swapscope-gui", "--view", "nope"});
    ADD_FAILURE() << "--view nope was taken";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "--view: unknown view 'nope' (" + viewNames().join(", ").toStdString() + ")");
  }
}

TEST(ViewRegistry, TheScreenshotTestsTakeEveryView) {
  // tests/CMakeLists.txt reads the names from view_registry.cpp.
  EXPECT_EQ(QString(SWAPSCOPE_SCREENSHOT_VIEWS), viewNames().join(","));
}

TEST(ViewRegistry, DocsListEveryViewInTabOrder) {
  const std::string text = docs();
  ASSERT_FALSE(text.empty());
  // The synopsis: [--view memory|streams|...].
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"(\[--view ([a-z|]+)\])")));
  EXPECT_EQ(QString::fromStdString(m[1]), viewNames().join("|"));
  // The table under "## Views": one row per view, its tab's title first.
  const std::size_t views = text.find("\n## Views\n");
  ASSERT_NE(views, std::string::npos);
  const std::size_t end = text.find("\n## ", views + 1);
  std::istringstream section(text.substr(views, end - views));
  QStringList rows;
  for (std::string line; std::getline(section, line);) {
    if (std::regex_match(line, m, std::regex(R"(\| ([^|]+?) \|.*)")) && m[1] != "View" &&
        m[1].str().find("---") == std::string::npos)
      rows << QString::fromStdString(m[1]);
  }
  EXPECT_EQ(rows, titles());
}

}  // namespace
}  // namespace swapscope::gui
