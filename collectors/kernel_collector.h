// SPDX-License-Identifier: MIT
/// @brief The kernel collector: per step, the time the GPU spent in that step's kernels and how
/// many ran; per swap transfer, its direction, bytes, start, end, whether the host side was
/// page-locked and whether it overlapped compute.
///
/// On a CUDA device it uses CUPTI's Activity API (CONCURRENT_KERNEL and MEMCPY records, joined to
/// the engine's tasks by an external correlation id pushed around every task). Where CUPTI is
/// not built in, not permitted, taken by another tool, or the device is not a CUDA device, it
/// falls back to the device's own task timings (CUDA events on the GPU), and says so in
/// source(): task time then stands for kernel time and kernel counts are unknown.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/device.h"
#include "runtime/executor.h"

namespace swapscope::collect {

struct StepKernels {
  int step = 0;                ///< GMAP step; the SGD update is 2N+1
  std::int64_t kernel_ns = 0;  ///< summed kernel durations (events: the tasks' durations)
  int kernels = -1;            ///< kernels launched; -1 where the collector cannot count them
  int memcpys = 0;             ///< device-to-device copies the step made (CUPTI only)
};

struct TransferRecord {
  rt::TaskKind kind = rt::TaskKind::Offload;  ///< Offload or Prefetch
  int step = 0;
  int buffer = -1;  ///< GMAP buffer
  bool to_device = false;
  std::int64_t bytes = 0;
  std::int64_t start_ns = 0, end_ns = 0;  ///< from the iteration's first record
  bool page_locked = false;               ///< the host side was page-locked
  bool overlapped_compute = false;        ///< a kernel (compute task) ran during it
};

struct KernelProfile {
  std::vector<StepKernels> steps;  ///< by step
  std::vector<TransferRecord> transfers;
  std::int64_t untagged_kernels = 0;  ///< kernels outside any task (CUPTI only)
  std::int64_t dropped_records = 0;   ///< records CUPTI had no buffer for
  std::int64_t kernelTotalNs() const;
};

/// Which CUDA API calls CUPTI records. The external-correlation join needs an API record per
/// launch, so Launches enables only the runtime and driver calls that launch kernels or copy
/// (cuptiActivityEnableRuntimeApi / EnableDriverApi); All enables the RUNTIME and DRIVER kinds,
/// a record for every API call, for comparing the collector's overhead.
enum class CuptiApiRecords { Launches, All };

class KernelCollector : public rt::TaskObserver {
 public:
  /// CUPTI when `want_cupti`, the build has it, the device is a CUDA device and CUPTI starts;
  /// otherwise the task-timing fallback, with the reason in source(). Call attach() to start.
  static std::unique_ptr<KernelCollector> create(rt::Device& device, bool want_cupti,
                                                 CuptiApiRecords api = CuptiApiRecords::Launches);

  ~KernelCollector() override = default;
  bool usesCupti() const { return m_cupti; }
  /// "CUPTI activity (...)" or "CUDA events (CUPTI unavailable: <why>)".
  const std::string& source() const { return m_source; }

  /// Starts observing the device's tasks (and CUPTI's records); detach() stops.
  virtual void attach() = 0;
  virtual void detach() = 0;
  /// The profile of the iteration `rec` that just finished (the device is synchronised).
  virtual KernelProfile take(const rt::IterationRecord& rec) = 0;

 protected:
  KernelCollector(bool cupti, std::string source) : m_cupti(cupti), m_source(std::move(source)) {}

 private:
  bool m_cupti;
  std::string m_source;
};

/// Whether any of the intervals `busy` (sorted by start) overlaps [start, end).
bool overlapsAny(const std::vector<std::pair<std::int64_t, std::int64_t>>& busy, std::int64_t start,
                 std::int64_t end);

/// The fallback's profile, from an iteration's task timeline alone (exposed for tests).
KernelProfile profileFromTimeline(const rt::IterationRecord& rec, bool pageLocked);

/// The check that a profile covers the whole iteration: every step 1..2N+1 (2N+1: the SGD
/// update) must have run. With kernel counts (CUPTI), a step passes with a kernel; a step of a
/// flatten or concat layer also with device-to-device copies alone (they copy without a kernel);
/// a backward step whose layer needs no gradient launches nothing. Without counts (task timers)
/// a step passes when its task ran.
struct StepCoverage {
  std::vector<int> missing;           ///< steps with nothing recorded, in order
  std::vector<std::string> problems;  ///< one line per missing step, naming it
  std::vector<std::string> allowed;   ///< steps that passed without a kernel, and why
  bool ok() const { return missing.empty(); }
};
StepCoverage checkStepCoverage(const KernelProfile& p, const Network& net, const Gmap& gmap,
                               const std::vector<LayerCost>& costs);

}  // namespace swapscope::collect
