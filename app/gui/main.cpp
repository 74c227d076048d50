// SPDX-License-Identifier: MIT
/// @brief `swapscope-gui`, the desktop workbench (app/gui/gui_options.h has the command line).
/// With --export-plan or --screenshot it waits for the plan, writes the files and exits: 0 when
/// written, 2 for bad input (the message on stderr), 1 when a file cannot be written or, as
/// `swapscope plan`, when paper mode finds no k meeting constraint (6). Works headless with
/// QT_QPA_PLATFORM=offscreen.
#include <QApplication>
#include <QTimer>
#include <cstdio>

#include "common/error.h"
#include "gui/app_icon.h"
#include "gui/gui_options.h"
#include "gui/main_window.h"
#include "gui/run_controller.h"

namespace {

int exitCodeOf(const swapscope::Error& e) {
  return e.kind() == swapscope::ErrorKind::BadInput ? 2 : 1;
}

void report(const char* message) {
  std::fprintf(stderr, "swapscope-gui: %s\n", message);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace swapscope;
  QApplication app(argc, argv);
  QApplication::setApplicationName("swapscope-gui");
  QApplication::setDesktopFileName(gui::kDesktopId);
  QApplication::setWindowIcon(gui::appIcon());
  gui::GuiOptions options;
  try {
    options = gui::parseGuiOptions(QApplication::arguments());
  } catch (const Error& e) {
    report(e.what());
    return 2;
  }
  if (options.help) {
    std::fputs(options.help_text.toLocal8Bit().constData(), stdout);
    return 0;
  }
  gui::MainWindow window;
  new gui::RunController(&window);  // the Run menu: Profile..., Run plan... (owned by the window)
  bool finishing = false;
  // Headless: the first plan drawn (or, without a database, the first layout) writes the files.
  auto finish = [&] {
    try {
      if (!options.export_plan.isEmpty()) window.exportPlan(options.export_plan, options.force);
      if (!options.screenshot.isEmpty()) {
        window.refreshAllViews();
        window.saveScreenshot(options.screenshot, options.force);
      }
      QApplication::exit(0);
    } catch (const Error& e) {
      report(e.what());
      QApplication::exit(exitCodeOf(e));
    }
  };
  if (options.headless()) {
    QObject::connect(&window, &gui::MainWindow::failed, &app, [](const QString& message) {
      report(message.toLocal8Bit().constData());
      QApplication::exit(2);
    });
    if (!options.db.isEmpty()) {
      // Settled: the plan is drawn, and so are the budget sweep and the plan's k curve.
      QObject::connect(&window, &gui::MainWindow::settled, &app, [&] {
        if (finishing) return;
        finishing = true;
        QTimer::singleShot(0, &window, finish);
      });
    }
  }
  try {
    window.applyOptions(options);
  } catch (const Error& e) {
    report(e.what());
    return exitCodeOf(e);
  }
  window.show();
  if (options.headless() && options.db.isEmpty()) QTimer::singleShot(0, &window, finish);
  return QApplication::exec();
}
