// SPDX-License-Identifier: MIT
/// @brief Responsiveness of the workbench (a benchmark, not a test): opening a run database until
/// the first plan is drawn; a budget change until every visible view is redrawn, over slider
/// positions; and the longest time the GUI thread did not return to its event loop meanwhile.
///   gui_bench DB.swapdb [--model NAME] [--view VIEW] [--positions N] [--opens N]
///             [--measurement RUN.swapdb]
/// --measurement loads a run of a plan (Run > Run plan..., `swapscope run --plan --db`) before
/// the budget changes, as the app overlays it: a drag then costs what it costs without.
/// "Redrawn" is the visible view's QCustomPlot replotted after the plan was shown (the Layers and
/// Summary views, which have none, count when the plan is shown).
/// Run it headless with QT_QPA_PLATFORM=offscreen; it prints medians, p95 and maxima in ms.
#include <qcustomplot.h>
#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QSlider>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "gui/gui_options.h"
#include "gui/main_window.h"
#include "gui/run_controller.h"

namespace {

using swapscope::gui::MainWindow;

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const std::size_t i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

/// The longest gap between two turns of the event loop while it runs (a zero-interval timer).
struct BlockWatch {
  QTimer timer;
  QElapsedTimer clock;
  qint64 last = -1;
  double longest_ms = 0;
  BlockWatch() {
    timer.setInterval(0);
    QObject::connect(&timer, &QTimer::timeout, [this] {
      const qint64 now = clock.nsecsElapsed();
      if (last >= 0) longest_ms = std::max(longest_ms, static_cast<double>(now - last) / 1e6);
      last = now;
    });
  }
  void start() {
    clock.start();
    last = -1;
    longest_ms = 0;
    timer.start();
  }
  void stop() { timer.stop(); }
};

/// Waits until the plan is shown and, when the visible view is a plot, it has replotted since.
bool waitDrawn(MainWindow& window, int& replots, int before, bool plot) {
  QSignalSpy shown(&window, &MainWindow::planShown);
  if (!shown.wait(60000)) return false;
  if (!plot) return true;
  for (int i = 0; i < 6000 && replots == before; ++i)
    QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
  return replots != before;
}

/// Counts the replots of the visible view's plot; false when it has none.
bool countReplots(MainWindow& window, int& replots) {
  auto* plot = window.tabs()->currentWidget()->findChild<QCustomPlot*>();
  if (!plot) return false;
  QObject::connect(plot, &QCustomPlot::afterReplot, [&replots] { ++replots; });
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QStringList args = QApplication::arguments();
  if (args.size() < 2) {
    std::fprintf(stderr,
                 "usage: gui_bench DB.swapdb [--model NAME] [--view VIEW] [--positions N] "
                 "[--opens N] [--measurement RUN.swapdb]\n");
    return 2;
  }
  const QString db = args[1];
  QString model, view = "memory", measurement;
  int positions = 200, opens = 7;
  for (int i = 2; i + 1 < args.size(); i += 2) {
    if (args[i] == "--model") model = args[i + 1];
    if (args[i] == "--view") view = args[i + 1];
    if (args[i] == "--positions") positions = args[i + 1].toInt();
    if (args[i] == "--opens") opens = args[i + 1].toInt();
    if (args[i] == "--measurement") measurement = args[i + 1];
  }

  // Open -> first drawn plan, each in a new window.
  std::vector<double> openMs;
  for (int i = 0; i < opens; ++i) {
    MainWindow window;
    window.show();
    QCoreApplication::processEvents();
    int replots = 0;
    const bool plot = countReplots(window, replots);
    QElapsedTimer t;
    t.start();
    window.openDatabase(db);
    const int before = replots;
    if (!waitDrawn(window, replots, before, plot)) {
      std::fprintf(stderr, "gui_bench: no plan drawn after opening %s\n", qPrintable(db));
      return 1;
    }
    openMs.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
  }

  // Budget changes over slider positions, on the (transferred) model asked for.
  MainWindow window;
  QStringList options = {"swapscope-gui", db, "--view", view};
  if (!model.isEmpty()) options << "--model" << model;
  int replots = 0;
  window.show();
  {
    QSignalSpy shown(&window, &MainWindow::planShown);
    window.applyOptions(swapscope::gui::parseGuiOptions(options));
    if (!shown.wait(120000)) {
      std::fprintf(stderr, "gui_bench: no first plan\n");
      return 1;
    }
  }
  if (!measurement.isEmpty()) {
    auto* runs = new swapscope::gui::RunController(&window);  // owned by the window
    QSignalSpy applied(runs, &swapscope::gui::RunController::measurementApplied);
    runs->openMeasurement(measurement);
    if (!applied.wait(120000)) {
      std::fprintf(stderr, "gui_bench: the measurement %s was not applied\n",
                   qPrintable(measurement));
      return 1;
    }
  }
  const bool plot = countReplots(window, replots);
  BlockWatch watch;
  watch.start();
  std::vector<double> changeMs;
  for (int i = 0; i < positions; ++i) {
    // Budgets from the minimum to the device memory and back, a slider step of 1/positions.
    const int pos = static_cast<int>((static_cast<long>(i) * 7919 % positions) *
                                     MainWindow::kSliderSteps / positions);
    QElapsedTimer t;
    t.start();
    const int before = replots;
    window.budgetSlider()->setValue(pos == window.budgetSlider()->value() ? pos + 1 : pos);
    if (!waitDrawn(window, replots, before, plot)) {
      std::fprintf(stderr, "gui_bench: no redraw at slider position %d\n", pos);
      return 1;
    }
    changeMs.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
  }
  watch.stop();
  std::printf("open -> first drawn plan (%d opens): median %.1f ms, max %.1f ms\n", opens,
              quantile(openMs, 0.5), quantile(openMs, 1.0));
  std::printf(
      "budget change -> views redrawn (%d positions, %s, %s view%s): median %.1f ms, "
      "p95 %.1f ms, max %.1f ms\n",
      positions, model.isEmpty() ? "profiled network" : qPrintable(model), qPrintable(view),
      measurement.isEmpty() ? "" : ", a measurement loaded", quantile(changeMs, 0.5),
      quantile(changeMs, 0.95), quantile(changeMs, 1.0));
  std::printf("longest GUI-thread block during the budget changes: %.1f ms\n", watch.longest_ms);
  return 0;
}
