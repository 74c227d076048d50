// SPDX-License-Identifier: MIT
/// @brief The host memory a run needs, computed from the analysis before anything is allocated,
/// and the check of that need against what the machine has available (docs/runtime.md,
/// "Refusals").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/gmap.h"
#include "graph/network.h"
#include "graph/shape.h"

namespace swapscope::rt {

/// One part of a run's host memory.
struct HostMemoryItem {
  std::string what;  ///< e.g. "host copies of 7 swapped feature maps"
  std::int64_t bytes = 0;
};

struct HostMemoryNeed {
  std::vector<HostMemoryItem> items;  ///< the parts with bytes > 0, in the order added
  /// Appends a part; a part of 0 bytes is left out. Negative bytes are a caller's bug: 0.
  void add(std::string what, std::int64_t bytes);
  /// The sum of the parts; INT64_MAX where it does not fit in 64 bits.
  std::int64_t total() const;
};

/// What a run holds in host memory besides what the executor's plan gives.
struct HostMemoryOptions {
  /// The pool, where the device keeps it in host memory (the CPU backend: the budget); 0 where
  /// the pool is device memory.
  std::int64_t pool = 0;
  /// Host memory the backend still allocates for its kernels (Device::pendingHostBytes).
  std::int64_t backend = 0;
  /// What the caller holds beside the executor: data sets, its own minibatch buffers.
  std::vector<HostMemoryItem> extra;
  /// The samples the executor stages, where more than the GMAP's pass samples: a minibatch run
  /// in sub-batches stages all of it (the GMAP is one pass's), and one loss value per pass.
  std::int64_t staged_batch = 0;
};

/// The host memory of a SwapExecutor of `net` executing `gmap` (buildGmap of `net` under its swap
/// set, gmap.swapped) at `passSamples` samples a pass (the minibatch k without sub-batches, k/S
/// in S sub-batches; options.staged_batch then gives k): the pool where it is host memory
/// (options.pool), the host copies of the swapped feature maps, the staged minibatch with its
/// labels, the logits and the loss, one host copy of the weights and running statistics
/// (initialisation, loading and saving weights), the backend's scratch (options.backend), then
/// options.extra. Every product is computed without overflow (a part too large for 64 bits is
/// INT64_MAX).
HostMemoryNeed hostMemoryNeed(const Network& net, const Gmap& gmap, std::int64_t passSamples,
                              const HostMemoryOptions& options = {});

/// Bytes of a data set of `samples` samples of `sample` shape: fp32 values and int32 labels.
std::int64_t datasetHostBytes(const Shape& sample, std::int64_t samples);
/// Bytes of loading an IDX data set (Fashion-MNIST) of `samples` samples of `sample` shape: the
/// data set's values and labels, and the uint8 pixels and labels read before they are converted.
std::int64_t idxLoadHostBytes(const Shape& sample, std::int64_t samples);
/// Bytes the trainer holds for a data set of `samples` at minibatch k: one minibatch of images
/// and labels and the shuffled order (8 bytes a sample).
std::int64_t trainerHostBytes(const Shape& sample, std::int64_t k, std::int64_t samples);

/// Bytes of memory the machine can still give this process: /proc/meminfo's MemAvailable (where
/// missing, sysconf's available pages), lowered to what the process's memory cgroup (v1 or v2)
/// has left below its limit. 0 when unknown.
std::int64_t availableHostMemory();

/// Error(BadInput) when need.total() exceeds `available`, naming the total, every part and the
/// available bytes: "the run needs 24.3 GiB of host memory (...) but the machine has 22.1 GiB
/// available: 2.2 GiB short". `available` <= 0 means unknown: no check.
void checkHostMemory(const HostMemoryNeed& need, std::int64_t available);

}  // namespace swapscope::rt
