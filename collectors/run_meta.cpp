// SPDX-License-Identifier: MIT
/// @brief The meta of a run: the device, the versions, the start time and the host CPU.
#include "collectors/profiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <thread>

#include "analysis/gmap.h"
#include "analysis/memory.h"
#include "analysis/network_analysis.h"
#include "analysis/swap_policy.h"
#include "collectors/timeline_rows.h"
#include "common/batch_limit.h"
#include "common/bytes.h"
#include "common/error.h"
#include "common/format.h"
#include "common/stats.h"
#include "graph/network_json.h"
#include "perfmodel/model.h"
#include "runtime/dataset.h"
#include "runtime/host_memory.h"
#include "runtime/trainer.h"
#include "store/sqlite.h"

namespace swapscope::collect {

std::string utcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {

std::string hostCpu() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(colon + 2);
      break;
    }
  }
  if (model.empty()) model = "unknown CPU";
  return model + ", " + std::to_string(std::thread::hardware_concurrency()) + " logical cores";
}

}  // namespace

store::RunMeta runMeta(const rt::Device& device, const std::string& kind, std::int64_t budget,
                       const std::string& policy) {
  store::RunMeta m;
  m.kind = kind;
  m.backend = device.backendName();
  m.device = device.deviceName();
  m.device_memory = device.totalMemory();
  for (const auto& [name, version] : device.libraryVersions())
    m.versions[name] = version;
  m.versions["SQLite"] = store::sqliteVersion();
  m.started_utc = utcNow();
  m.budget = budget;
  m.policy = policy;
  m.host_cpu = hostCpu();
  m.extra["pool_alignment"] = std::to_string(device.poolAlignment());
  const PoolPadding padding = device.poolPadding();
  m.extra["pool_padding"] = std::to_string(padding.buffer);
  m.extra["workspace_padding"] = std::to_string(padding.workspace);
  if (device.backendName() == "cuda") {
    const rt::DeviceOptions& o = device.options();
    m.extra["conv_algo"] = std::string(rt::convAlgoPolicyName(o.conv_algo));
    m.extra["deterministic"] = o.deterministic ? "true" : "false";
    m.extra["math"] = std::string(rt::mathModeName(o.math));
    m.extra["workspace_limit"] = std::to_string(o.workspace_limit);
  }
  return m;
}

}  // namespace swapscope::collect
