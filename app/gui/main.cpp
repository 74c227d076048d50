// SPDX-License-Identifier: MIT
/// @brief `swapscope-gui`, the desktop app.
///   swapscope-gui [--model NAME] [--batch K] [--budget-gib G] [--screenshot FILE.png]
/// --screenshot renders the window to a PNG and exits (works with QT_QPA_PLATFORM=offscreen).
#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include "common/error.h"
#include "graph/zoo.h"
#include "gui/main_window.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName("swapscope-gui");
  QCommandLineParser cli;
  cli.setApplicationDescription(
      "Swapscope: memory, swapping and k_max for a network under a budget");
  cli.addHelpOption();
  const QCommandLineOption model("model", "zoo model to show", "NAME");
  const QCommandLineOption batch("batch", "minibatch size", "K");
  const QCommandLineOption budget("budget-gib", "memory budget in GiB", "G");
  const QCommandLineOption shot("screenshot", "render the window to FILE.png and exit", "FILE");
  cli.addOptions({model, batch, budget, shot});
  cli.process(app);

  swapscope::MainWindow window;
  try {
    window.configure(cli.value(model).toStdString(), cli.value(batch).toLongLong(),
                     cli.value(budget).toDouble());
  } catch (const swapscope::Error& e) {
    qCritical("swapscope-gui: %s", e.what());
    return 2;
  }
  window.show();
  if (cli.isSet(shot)) {
    QTimer::singleShot(0, &window, [&] {
      const bool ok = window.grab().save(cli.value(shot));
      QApplication::exit(ok ? 0 : 1);
    });
  }
  return QApplication::exec();
}
