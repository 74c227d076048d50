// SPDX-License-Identifier: MIT
#include "views/replot.h"

#include <qcustomplot.h>

#include <QEvent>

namespace swapscope {
namespace {

constexpr const char* kDeferred = "swapscope_replot_deferred";

/// Replots its plot when the plot is shown with a replot deferred.
class ShowWatcher : public QObject {
 public:
  explicit ShowWatcher(QCustomPlot* plot) : QObject(plot), m_plot(plot) {
    setObjectName(QStringLiteral("swapscope_show_watcher"));
    plot->installEventFilter(this);
  }

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (watched == m_plot && event->type() == QEvent::Show && replotDeferred(m_plot)) {
      m_plot->setProperty(kDeferred, false);
      m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
    return false;
  }

 private:
  QCustomPlot* m_plot;
};

}  // namespace

void replotWhenShown(QCustomPlot* plot) {
  if (plot->isVisible()) {
    plot->setProperty(kDeferred, false);
    plot->replot(QCustomPlot::rpQueuedReplot);
    return;
  }
  if (!plot->findChild<ShowWatcher*>(QStringLiteral("swapscope_show_watcher"),
                                     Qt::FindDirectChildrenOnly)) {
    new ShowWatcher(plot);
  }
  plot->setProperty(kDeferred, true);
}

bool replotDeferred(const QCustomPlot* plot) {
  return plot->property(kDeferred).toBool();
}

}  // namespace swapscope
