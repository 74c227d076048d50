// SPDX-License-Identifier: MIT
#include "cli/interrupt.h"

#include <signal.h>

#include <csignal>

namespace swapscope::cli {
namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};

extern "C" void onSignal(int sig) {
  g_signal.store(sig);
  g_interrupted.store(true);
  // A second Ctrl-C ends the process the usual way.
  if (sig == SIGINT) std::signal(SIGINT, SIG_DFL);
}

/// Catches `sig` unless the process was started with it ignored: a shell starts a background
/// job with SIGINT ignored so that the terminal's Ctrl-C leaves it running. Returns the
/// disposition to restore.
void (*catchUnlessIgnored(int sig))(int) {
  struct sigaction current {};
  if (sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) return SIG_IGN;
  return std::signal(sig, onSignal);
}

}  // namespace

InterruptScope::InterruptScope() {
  g_interrupted.store(false);
  g_signal.store(0);
  m_previousInt = catchUnlessIgnored(SIGINT);
  m_previousTerm = catchUnlessIgnored(SIGTERM);
}

InterruptScope::~InterruptScope() {
  std::signal(SIGINT, m_previousInt);
  std::signal(SIGTERM, m_previousTerm);
}

const std::atomic<bool>& InterruptScope::flag() const {
  return g_interrupted;
}

const char* InterruptScope::signalName() const {
  switch (g_signal.load()) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "";
  }
}

}  // namespace swapscope::cli
