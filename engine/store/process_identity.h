// SPDX-License-Identifier: MIT
/// @brief Who writes a run database: this host's name, when a process started (so that a later
/// process with the same pid is told apart), and whether a recorded writer still runs.
#pragma once

#include <cstdint>
#include <string>

namespace swapscope::store {

/// This machine's host name; empty where the system does not say.
std::string hostName();
/// "BOOT/TICKS" for the process `pid` on this machine; empty where /proc does not say.
std::string processStart(std::int64_t pid);
/// When the process `pid` started, ISO 8601 UTC; empty where /proc does not say.
std::string processStartUtc(std::int64_t pid);
/// Whether the process that wrote a run with this pid, host and start is still alive.
bool writerAlive(std::int64_t pid, const std::string& host, const std::string& start);

}  // namespace swapscope::store
