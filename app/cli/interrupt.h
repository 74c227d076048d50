// SPDX-License-Identifier: MIT
/// @brief Graceful interruption of long verbs: while an InterruptScope lives, the first SIGINT
/// (Ctrl-C) or SIGTERM sets a flag that the work checks between iterations, and the engine
/// between the passes of a sub-batched iteration and between its steps. A second SIGINT a second
/// or more after the first ends the process as usual; signals within that second are the same
/// interruption (a terminal's Ctrl-C and `timeout -s INT` signal the process and its group, so
/// one SIGINT can arrive twice). A signal the process was started with ignored (SIGINT in a
/// shell's background job) stays ignored.
#pragma once

#include <atomic>

namespace swapscope::cli {

class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
  /// Set once a signal arrived.
  const std::atomic<bool>& flag() const;
  /// Which signal it was, e.g. "SIGINT"; empty when none.
  const char* signalName() const;

 private:
  void (*m_previousInt)(int);
  void (*m_previousTerm)(int);
};

}  // namespace swapscope::cli
