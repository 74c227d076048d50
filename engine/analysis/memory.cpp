// SPDX-License-Identifier: MIT
#include "analysis/memory.h"

#include <algorithm>

#include "common/checked.h"
#include "common/error.h"

namespace swapscope {
namespace {

/// Bytes at minibatch k; Error(BadInput) when they do not fit in 64 bits.
std::int64_t bytesAt(const LinearBytes& b, std::int64_t k, std::size_t step) {
  const auto v = checkedAt(b, k);
  if (!v) {
    throwBadInput("minibatch k = " + std::to_string(k) + ": the bytes resident at step " +
                  std::to_string(step) + " do not fit in 64-bit integers");
  }
  return *v;
}

}  // namespace

std::int64_t MemoryCurve::peak(std::int64_t k) const {
  std::int64_t best = bytesAt(persistent, k, 0);
  for (std::size_t s = 1; s < resident.size(); ++s)
    best = std::max(best, bytesAt(resident[s], k, s));
  return best;
}

int MemoryCurve::peakStep(std::int64_t k) const {
  int best = 0;
  std::int64_t bestBytes = resident.empty() ? 0 : bytesAt(resident[0], k, 0);
  for (std::size_t s = 1; s < resident.size(); ++s) {
    const std::int64_t bytes = bytesAt(resident[s], k, s);
    if (bytes > bestBytes) {
      best = static_cast<int>(s);
      bestBytes = bytes;
    }
  }
  return best;
}

std::int64_t MemoryCurve::kMax(std::int64_t budget, std::int64_t unboundedK) const {
  std::int64_t k = unboundedK;
  for (const LinearBytes& r : resident) {
    const auto atOne = checkedAdd(r.fixed, std::max<std::int64_t>(r.per_sample, 0));
    if (!atOne || *atOne > budget) return 0;  // k = 1 fails
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
        if (const auto sum = checkedSum(now, gmap.buffers[op.buffer].size)) {
          now = *sum;
        } else {
          throwBadInput("GMAP step " + std::to_string(op.step) + ": allocating '" +
                        gmap.buffers[op.buffer].name +
                        "' makes the resident bytes overflow 64-bit integers");
        }
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
      case GmapOpKind::Recompute:  // its buffers were allocated before it, in the same step
        break;
    }
    if (op.step == 0) curve.persistent = now;
  }
  curve.resident[0] = curve.persistent;
  return curve;
}

std::int64_t memoryLowerBound(const Gmap& gmap) {
  auto add = [](std::int64_t a, std::int64_t b) {
    const auto s = checkedAdd(a, b);
    if (!s) throwBadInput("the memory lower bound's bytes do not fit in 64-bit integers");
    return *s;
  };
  auto atOne = [&](const GmapBuffer& b) { return add(b.size.fixed, b.size.per_sample); };
  std::int64_t persistent = 0;
  for (const GmapBuffer& b : gmap.buffers) {
    if (isPersistent(b.kind)) persistent = add(persistent, atOne(b));
  }
  std::int64_t largestStep = 0;
  for (const auto& touched : gmap.step_touches) {
    std::int64_t bytes = 0;
    for (int b : touched)
      bytes = add(bytes, atOne(gmap.buffers[b]));
    largestStep = std::max(largestStep, bytes);
  }
  return add(persistent, largestStep);
}

}  // namespace swapscope
