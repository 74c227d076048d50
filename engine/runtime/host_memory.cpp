// SPDX-License-Identifier: MIT
#include "runtime/host_memory.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

#include "analysis/layer_cost.h"
#include "common/bytes.h"
#include "common/error.h"

namespace swapscope::rt {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

std::int64_t addSat(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? kMax : r;
}
std::int64_t mulSat(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? kMax : r;
}
/// A GMAP size at k without overflow.
std::int64_t sizeAt(const LinearBytes& s, std::int64_t k) {
  return addSat(s.fixed, mulSat(s.per_sample, k));
}

/// The first number of the first line of `path` that starts with `key` (or of its first line
/// when `key` is empty); -1 when there is none.
std::int64_t readNumber(const std::string& path, const std::string& key = {}) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!key.empty() && line.rfind(key, 0) != 0) continue;
    std::istringstream s(line.substr(key.size()));
    long long v = -1;
    if (s >> v) return v;
    return -1;  // "max": no limit
  }
  return -1;
}

/// Bytes the process's memory cgroup has left below its limit; -1 where there is no limit.
std::int64_t cgroupRoom() {
  std::ifstream in("/proc/self/cgroup");
  std::int64_t room = -1;
  for (std::string line; std::getline(in, line);) {
    // "0::/path" (v2) or "4:memory:/path" (v1).
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    std::string limitFile, usageFile, dir;
    if (controllers.empty()) {
      dir = "/sys/fs/cgroup";
      limitFile = "memory.max";
      usageFile = "memory.current";
    } else if (controllers == "memory" || controllers.find("memory,") == 0 ||
               controllers.find(",memory") != std::string::npos) {
      dir = "/sys/fs/cgroup/memory";
      limitFile = "memory.limit_in_bytes";
      usageFile = "memory.usage_in_bytes";
    } else {
      continue;
    }
    // The process's own group where it is visible; inside a container, the mount's root is.
    for (const std::string& d : {dir + path, dir}) {
      const std::int64_t limit = readNumber(d + "/" + limitFile);
      if (limit < 0) continue;
      if (limit >= (std::int64_t{1} << 60)) break;  // no limit set
      const std::int64_t usage = std::max<std::int64_t>(0, readNumber(d + "/" + usageFile));
      const std::int64_t left = std::max<std::int64_t>(0, limit - usage);
      room = room < 0 ? left : std::min(room, left);
      break;
    }
  }
  return room;
}

}  // namespace

void HostMemoryNeed::add(std::string what, std::int64_t bytes) {
  if (bytes <= 0) return;
  items.push_back({std::move(what), bytes});
}

std::int64_t HostMemoryNeed::total() const {
  std::int64_t sum = 0;
  for (const HostMemoryItem& i : items)
    sum = addSat(sum, i.bytes);
  return sum;
}

HostMemoryNeed hostMemoryNeed(const Network& net, const Gmap& gmap, std::int64_t passSamples,
                              const HostMemoryOptions& options) {
  HostMemoryNeed need;
  need.add("the pool, in host memory on this device", options.pool);

  std::int64_t copies = 0, weights = 0;
  int swapped = 0;
  for (const GmapBuffer& b : gmap.buffers) {
    if (b.kind == BufferKind::FeatureMap && b.layer != net.inputLayer() && b.layer >= 0 &&
        static_cast<std::size_t>(b.layer) < gmap.swapped.size() &&
        gmap.swapped[static_cast<std::size_t>(b.layer)]) {
      copies = addSat(copies, sizeAt(b.size, passSamples));
      ++swapped;
    } else if (b.kind == BufferKind::Weights || b.kind == BufferKind::RunningStats) {
      weights = addSat(weights, sizeAt(b.size, passSamples));
    }
  }
  need.add("host copies of " + std::to_string(swapped) + " swapped feature map" +
               (swapped == 1 ? "" : "s"),
           copies);
  // The executor's staging: the minibatch and its labels, the logits, and the loss of each pass
  // (at least 64 bytes): a minibatch run in sub-batches stages all of it, one loss a pass.
  const std::int64_t perSample = addSat(mulSat(net.sampleShape().numel(), kFloatBytes),
                                        addSat(kLabelBytes, mulSat(net.classes(), kFloatBytes)));
  const std::int64_t staged = std::max(passSamples, options.staged_batch);
  const std::int64_t losses = std::max<std::int64_t>(
      64, mulSat(staged / std::max<std::int64_t>(passSamples, 1), kFloatBytes));
  need.add("the staged minibatch, labels and logits", addSat(mulSat(perSample, staged), losses));
  need.add("a host copy of the weights and running statistics", weights);
  need.add("the backend's scratch outside the pool", options.backend);
  for (const HostMemoryItem& i : options.extra)
    need.add(i.what, i.bytes);
  return need;
}

std::int64_t datasetHostBytes(const Shape& sample, std::int64_t samples) {
  return mulSat(samples, addSat(mulSat(sample.numel(), kFloatBytes), kLabelBytes));
}

std::int64_t idxLoadHostBytes(const Shape& sample, std::int64_t samples) {
  return addSat(datasetHostBytes(sample, samples), mulSat(samples, addSat(sample.numel(), 1)));
}

std::int64_t trainerHostBytes(const Shape& sample, std::int64_t k, std::int64_t samples) {
  return addSat(datasetHostBytes(sample, k), mulSat(samples, 8));
}

std::int64_t availableHostMemory() {
  std::int64_t avail = -1;
  const std::int64_t kib = readNumber("/proc/meminfo", "MemAvailable:");
  if (kib >= 0) {
    avail = mulSat(kib, 1024);
  } else {
    const long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && size > 0) avail = mulSat(pages, size);
  }
  const std::int64_t room = cgroupRoom();
  if (room >= 0) avail = avail < 0 ? room : std::min(avail, room);
  return std::max<std::int64_t>(avail, 0);
}

void checkHostMemory(const HostMemoryNeed& need, std::int64_t available) {
  const std::int64_t total = need.total();
  if (available <= 0 || total <= available) return;
  std::string parts;
  for (const HostMemoryItem& i : need.items)
    parts += (parts.empty() ? "" : "; ") + i.what + ": " + formatBytes(i.bytes);
  // A sum beyond 64 bits is shown as its saturated lower bound.
  const std::string atLeast = total == kMax ? "more than " : "";
  throwBadInput("the run needs " + atLeast + formatBytes(total) + " (" + atLeast +
                std::to_string(total) + " bytes) of host memory (" + parts +
                ") but the machine has " + formatBytes(available) + " (" +
                std::to_string(available) + " bytes) available: " + atLeast +
                std::to_string(total - available) +
                " bytes short; a smaller minibatch, budget or data set needs less");
}

}  // namespace swapscope::rt
