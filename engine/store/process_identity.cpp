// SPDX-License-Identifier: MIT
#include "store/process_identity.h"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <vector>

namespace swapscope::store {
namespace {

std::string readSmallFile(const std::string& path) {
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

/// Fields 3 (state) and 22 (start time, clock ticks since boot) of /proc/PID/stat.
struct ProcStat {
  char state = '?';
  std::string start_ticks;
};

std::optional<ProcStat> procStat(std::int64_t pid) {
  const std::string s = readSmallFile("/proc/" + std::to_string(pid) + "/stat");
  // The command name (field 2) is in parentheses and may hold spaces and parentheses itself.
  const auto close = s.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(s.substr(close + 1));
  std::vector<std::string> fields;  // fields 3, 4, ...
  for (std::string f; rest >> f && fields.size() < 20;)
    fields.push_back(f);
  if (fields.size() < 20 || fields[0].empty()) return std::nullopt;
  return ProcStat{fields[0][0], fields[19]};
}

}  // namespace

std::string hostName() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) return "";
  return buf.data();
}

std::string processStart(std::int64_t pid) {
  const auto st = procStat(pid);
  const std::string boot = readSmallFile("/proc/sys/kernel/random/boot_id");
  if (!st || boot.empty()) return "";
  return boot + "/" + st->start_ticks;
}

std::string processStartUtc(std::int64_t pid) {
  const auto st = procStat(pid);
  if (!st) return "";
  std::istringstream stat(readSmallFile("/proc/stat"));
  long long bootTime = -1;
  for (std::string line; std::getline(stat, line);) {
    if (line.rfind("btime ", 0) == 0) bootTime = std::atoll(line.c_str() + 6);
  }
  const long ticksPerSecond = sysconf(_SC_CLK_TCK);
  if (bootTime < 0 || ticksPerSecond <= 0) return "";
  const std::time_t t =
      static_cast<std::time_t>(bootTime + std::atoll(st->start_ticks.c_str()) / ticksPerSecond);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool writerAlive(std::int64_t pid, const std::string& host, const std::string& start) {
  if (pid <= 0 || pid > std::numeric_limits<pid_t>::max() || host != hostName()) return false;
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  const auto st = procStat(pid);
  if (st && (st->state == 'Z' || st->state == 'X')) return false;  // exited, not yet reaped
  if (!start.empty()) {
    const std::string now = processStart(pid);
    if (!now.empty() && now != start) return false;  // a later process with the same pid
  }
  return true;
}

}  // namespace swapscope::store
