// SPDX-License-Identifier: MIT
#include "analysis/memory.h"

#include <algorithm>

#include "common/error.h"

namespace swapscope {

std::int64_t MemoryCurve::peak(std::int64_t k) const {
  std::int64_t best = persistent.at(k);
  for (std::size_t s = 1; s < resident.size(); ++s)
    best = std::max(best, resident[s].at(k));
  return best;
}

int MemoryCurve::peakStep(std::int64_t k) const {
  int best = 0;
  for (std::size_t s = 1; s < resident.size(); ++s) {
    if (resident[s].at(k) > resident[best].at(k)) best = static_cast<int>(s);
  }
  return best;
}

std::int64_t MemoryCurve::kMax(std::int64_t budget, std::int64_t unboundedK) const {
  std::int64_t k = unboundedK;
  for (const LinearBytes& r : resident) {
    if (r.fixed + std::max<std::int64_t>(r.per_sample, 0) > budget) return 0;  // k = 1 fails
    if (r.per_sample > 0) k = std::min(k, (budget - r.fixed) / r.per_sample);
  }
  return k;
}

MemoryCurve computeMemoryCurve(const Gmap& gmap) {
  MemoryCurve curve;
  curve.resident.assign(gmap.steps() + 1, {});
  std::vector<bool> live(gmap.buffers.size(), false);
  LinearBytes now;
  for (const GmapOp& op : gmap.ops) {
    switch (op.kind) {
      case GmapOpKind::Allocate:
        if (live[op.buffer]) {
          throw Error(ErrorKind::Runtime,
                      "GMAP allocates '" + gmap.buffers[op.buffer].name + "' twice");
        }
        live[op.buffer] = true;
        now += gmap.buffers[op.buffer].size;
        break;
      case GmapOpKind::Release:
        if (!live[op.buffer]) {
          throw Error(ErrorKind::Runtime, "GMAP releases '" + gmap.buffers[op.buffer].name +
                                              "', which is not allocated");
        }
        live[op.buffer] = false;
        now -= gmap.buffers[op.buffer].size;
        break;
      case GmapOpKind::Compute:
        curve.resident[op.step] = now;
        break;
      case GmapOpKind::Offload:
      case GmapOpKind::Prefetch:
        break;
    }
    if (op.step == 0) curve.persistent = now;
  }
  curve.resident[0] = curve.persistent;
  return curve;
}

std::int64_t memoryLowerBound(const Gmap& gmap) {
  std::int64_t persistent = 0;
  for (const GmapBuffer& b : gmap.buffers) {
    if (isPersistent(b.kind)) persistent += b.size.at(1);
  }
  std::int64_t largestStep = 0;
  for (const auto& touched : gmap.step_touches) {
    std::int64_t bytes = 0;
    for (int b : touched)
      bytes += gmap.buffers[b].size.at(1);
    largestStep = std::max(largestStep, bytes);
  }
  return persistent + largestStep;
}

}  // namespace swapscope
