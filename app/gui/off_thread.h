// SPDX-License-Identifier: MIT
/// @brief The one way the app runs work off the GUI thread and takes its answer back.
#pragma once

#include <QMetaObject>
#include <QPointer>
#include <QString>
#include <QThreadPool>
#include <exception>
#include <memory>
#include <type_traits>
#include <utility>

namespace swapscope::gui {

/// Runs `work()` on `pool`; then, on `receiver`'s thread and only if `receiver` still exists,
/// calls `done(*receiver, result, error)`: the result, or null and the message of what `work`
/// threw. A receiver that is destroyed meanwhile drops the answer.
template <typename Receiver, typename Work, typename Done>
void runOffGuiThread(QThreadPool* pool, Receiver* receiver, Work work, Done done) {
  using Result = std::invoke_result_t<Work&>;
  QPointer<Receiver> self(receiver);
  pool->start([self, work = std::move(work), done = std::move(done)]() mutable {
    std::shared_ptr<const Result> result;
    QString error;
    try {
      result = std::make_shared<const Result>(work());
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    if (!self) return;
    QMetaObject::invokeMethod(
        self.data(),
        [self, result = std::move(result), error, done = std::move(done)]() mutable {
          if (self) done(*self, std::move(result), error);
        },
        Qt::QueuedConnection);
  });
}

}  // namespace swapscope::gui
