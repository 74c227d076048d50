// SPDX-License-Identifier: MIT
/// @brief What the Run panel draws while a profile or a plan's run goes on, built without any Qt
/// from the progress reports (collect::RunProgress) as the engine commits each iteration: the
/// iteration times (a point per iteration, a series per k), the pool bytes over the latest
/// recorded iteration, and the stalls of that iteration.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "store/run_db.h"

namespace swapscope::gui {

struct LiveRunData {
  /// The iterations at one k, in order: every stage (warm-up and the collector's pass too).
  struct Batch {
    std::int64_t k = 0;
    std::vector<double> iteration;  ///< 1-based at this k
    std::vector<double> seconds;
  };
  std::vector<Batch> times;
  /// The latest recorded iteration: its k and index among the recorded ones (-1: none yet).
  std::int64_t k = 0;
  int iteration = -1;
  /// Its pool bytes in use over time: a step curve, milliseconds from the iteration's start.
  std::vector<double> pool_ms;
  std::vector<double> pool_bytes;
  /// Its stalled steps (compute idle before them, above zero) and their stalls, milliseconds.
  std::vector<double> stall_steps;
  std::vector<double> stall_ms;
  double stall_total_ms = 0;  ///< the iteration's, as recorded
};

/// Adds one progress report. `rows` are the committed rows of a recorded iteration (null for
/// warm-up and collector iterations, which add only their time).
inline void addLiveReport(LiveRunData& d, std::int64_t k, int iteration, double seconds,
                          const store::IterationRows* rows) {
  if (d.times.empty() || d.times.back().k != k) d.times.push_back({k, {}, {}});
  LiveRunData::Batch& b = d.times.back();
  b.iteration.push_back(iteration);
  b.seconds.push_back(seconds);
  if (!rows) return;
  const store::IterationRow& it = rows->iteration;
  d.k = it.k;
  d.iteration = it.iteration;
  d.pool_ms.clear();
  d.pool_bytes.clear();
  std::vector<const store::MemoryRow*> memory;
  for (const store::MemoryRow& m : rows->memory)
    memory.push_back(&m);
  std::stable_sort(memory.begin(), memory.end(),
                   [](const auto* x, const auto* y) { return x->time_ns < y->time_ns; });
  for (const store::MemoryRow* m : memory) {
    d.pool_ms.push_back(static_cast<double>(m->time_ns - it.start_ns) * 1e-6);
    d.pool_bytes.push_back(static_cast<double>(m->in_use));
  }
  d.stall_steps.clear();
  d.stall_ms.clear();
  for (const store::SampleRow& s : rows->samples) {
    if (s.direction == store::Direction::Update || s.stall_ns <= 0) continue;
    d.stall_steps.push_back(s.step);
    d.stall_ms.push_back(static_cast<double>(s.stall_ns) * 1e-6);
  }
  d.stall_total_ms = static_cast<double>(it.stall_ns) * 1e-6;
}

}  // namespace swapscope::gui
