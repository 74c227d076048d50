// SPDX-License-Identifier: MIT
/// Runs the real `swapscope` binary (SWAPSCOPE_CLI_BINARY) for the tests that kill it or limit
/// it, and waits on the run database it writes.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/error.h"
#include "store/run_db.h"

extern char** environ;

namespace swapscope::cli::testing {

/// Starts the program `args[0]` with `args`, its standard output into `out`; returns its pid.
inline pid_t startProgram(std::vector<std::string> args, const std::string& out = "/dev/null") {
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0) << "cannot start " << argv[0];
  return rc == 0 ? pid : -1;
}

/// Starts the real binary with `args` (the verb first), its standard output into `out`;
/// returns its pid.
inline pid_t startCli(std::vector<std::string> args, const std::string& out = "/dev/null") {
  args.insert(args.begin(), SWAPSCOPE_CLI_BINARY);
  return startProgram(std::move(args), out);
}

/// Runs `script` with /bin/sh -c in the current folder, `swapscope` in it naming the real
/// binary, so that a test pipes one verb into another (or a file into a verb's standard input)
/// as a user does; the script redirects what it reads and writes. Returns the exit status of its
/// last command, or -1 where it did not exit.
inline int runShell(const std::string& script) {
  const pid_t pid = startProgram(
      {"/bin/sh", "-c",
       std::string("swapscope() { '") + SWAPSCOPE_CLI_BINARY + "' \"$@\"; }\n" + script});
  if (pid <= 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Starts the real binary profiling for a long time; returns its pid.
inline pid_t startLongProfile(const std::string& db) {
  return startCli({"profile", "--model", "fmnist-cnn", "--budget", "16MiB", "--max-batch", "8",
                   "--warmup", "0", "--iters", "1000", "--db", db});
}

/// Waits until the database holds at least `n` iterations (read-only, while it is written), for
/// at most 60 s. With `orGone`, a database that no longer exists ends the wait too (a recording
/// that a finished run renamed over the file it replaces, which can happen between two polls).
inline bool waitForIterations(const std::string& db, std::int64_t n, bool orGone = false) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (orGone && !std::filesystem::exists(db)) return true;
    try {
      store::RunReader reader(db);
      if (reader.counts().iterations >= n) return true;
    } catch (const Error&) {  // not created yet, or renamed while it was read
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

/// Sends `sig` to `pid` once `db` holds `iterations` iterations and returns its wait status;
/// `started` says whether it got that far within 60 s (if not, it is killed).
inline int signalWhenRecorded(pid_t pid, const std::string& db, std::int64_t iterations, int sig,
                              bool& started) {
  started = false;
  if (pid <= 0) return -1;
  started = waitForIterations(db, iterations);
  kill(pid, started ? sig : SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

}  // namespace swapscope::cli::testing
