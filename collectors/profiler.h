// SPDX-License-Identifier: MIT
/// @brief The profiling stage (AccUDNN §3.2, digest G4): runs the network under swap-all at the
/// five profiling minibatches k = 1/8, 1/4, 1/2, 2/3 and 1 x k_max and records every step's time
/// and FLOPs, every transfer, the pool bytes over one iteration per k, and the iteration times
/// into a run database.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graph/network.h"
#include "runtime/device.h"
#include "runtime/executor.h"
#include "store/run_db.h"

namespace swapscope::collect {

/// The profiling minibatches for a largest minibatch `top`: 1/8, 1/4, 1/2, 2/3 and 1 of it,
/// rounded to the nearest integer, at least 1, increasing and without duplicates.
std::vector<std::int64_t> profileBatches(std::int64_t top);

/// The largest minibatch whose swap-all plan fits `budget`. Throws Error(BadInput) with the
/// bytes needed when not even k = 1 fits.
std::int64_t swapAllKMax(const Network& net, std::int64_t budget);

struct ProfileConfig {
  std::int64_t budget = 0;
  std::int64_t max_batch = 0;  ///< caps k_max; 0: no cap
  int warmup = 1;              ///< iterations per k run before recording
  int iterations = 3;          ///< recorded iterations per k
  std::uint64_t seed = 1;      ///< initialisation and synthetic data
  rt::SgdConfig sgd;
};

struct ProfileProgress {
  int batch_index = 0;  ///< 0-based among the profiling minibatches
  int batches = 0;
  std::int64_t k = 0;
  int iteration = 0;             ///< completed at this k, warm-up included
  int iterations = 0;            ///< warm-up + recorded at this k
  double iteration_seconds = 0;  ///< of the latest iteration
};
using ProfileProgressFn = std::function<void(const ProfileProgress&)>;

struct ProfileResult {
  std::int64_t k_max = 0;  ///< under swap-all, before the cap
  std::vector<std::int64_t> batches;
  int recorded_iterations = 0;
  bool cancelled = false;
  store::RunStatus status = store::RunStatus::Running;
};

/// Refuses, before anything is allocated or recorded, a profile whose largest profiling
/// minibatch does not fit (the need grows with k): its plan against the budget, a device pool
/// against the device's memory, and the host memory with that minibatch's synthetic data against
/// `available` bytes (-1: what the machine has). See rt::checkRunFits.
void checkProfileFits(const rt::Device& device, const Network& net, const ProfileConfig& config,
                      std::int64_t available = -1);

/// The meta of a run on `device`: backend, device, versions (the backend's libraries and
/// SQLite), the start time, the host CPU. The caller adds the command line and its own version.
store::RunMeta runMeta(const rt::Device& device, const std::string& kind, std::int64_t budget,
                       const std::string& policy);

/// Runs the profiling stage and records it in `db`, whose meta the caller wrote. On return the
/// database is finished: complete, or incomplete when `cancel` stopped it (after the current
/// iteration). An error marks it failed with the message and is rethrown. Throws Error(BadInput)
/// before recording anything when the budget cannot hold k = 1 under swap-all or the profile
/// does not fit the machine (checkProfileFits).
ProfileResult runProfile(rt::Device& device, const Network& net, const ProfileConfig& config,
                         store::RunWriter& db, const ProfileProgressFn& progress = {},
                         const std::atomic<bool>* cancel = nullptr);

/// The current time as ISO 8601 UTC ("2026-11-21T10:00:00Z").
std::string utcNow();

}  // namespace swapscope::collect
