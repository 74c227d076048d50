// SPDX-License-Identifier: MIT
#include "cli/interrupt.h"

#include <signal.h>

#include <csignal>
#include <cstdint>
#include <ctime>

namespace swapscope::cli {
namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};
std::atomic<std::int64_t> g_firstAt{0};  // CLOCK_MONOTONIC nanoseconds of the first signal
static_assert(std::atomic<std::int64_t>::is_always_lock_free,
              "read and written in a signal handler");

/// Signals this close to the first are the same interruption: a terminal's Ctrl-C and `timeout
/// -s INT` signal the process and its process group, so it can receive one SIGINT twice within a
/// millisecond.
constexpr std::int64_t kSameInterruptNs = 1'000'000'000;

std::int64_t monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

extern "C" void onSignal(int sig) {
  const std::int64_t now = monotonicNs();
  if (!g_interrupted.load()) {
    g_firstAt.store(now);
    g_signal.store(sig);
    g_interrupted.store(true);
    return;
  }
  // A second Ctrl-C, a second or more after the first, ends the process the usual way (SIGINT is
  // blocked while its handler runs: the raised one is delivered, at its default, on return).
  if (sig == SIGINT && now - g_firstAt.load() >= kSameInterruptNs) {
    std::signal(SIGINT, SIG_DFL);
    raise(SIGINT);
  }
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
