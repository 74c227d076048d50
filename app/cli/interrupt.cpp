// SPDX-License-Identifier: MIT
#include "cli/interrupt.h"

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

}  // namespace

InterruptScope::InterruptScope() {
  g_interrupted.store(false);
  g_signal.store(0);
  m_previousInt = std::signal(SIGINT, onSignal);
  m_previousTerm = std::signal(SIGTERM, onSignal);
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
