// SPDX-License-Identifier: MIT
#include "runtime/iteration_timeline.h"

#include <algorithm>

namespace swapscope::rt {

void fillTimeline(IterationRecord& rec, int forwardSteps, IterationTimings t) {
  const int n = forwardSteps;
  std::vector<TaskTiming>& timings = t.tasks;
  std::vector<std::pair<std::uint64_t, std::int64_t>>& inUse = t.in_use;
  const std::vector<Fence>& stepWait = t.step_wait;
  // The timeline, relative to the iteration's start; stalls are the compute stream's idle gaps.
  std::sort(timings.begin(), timings.end(), [](const TaskTiming& x, const TaskTiming& y) {
    return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.seq < y.seq;
  });
  std::int64_t computeFree = rec.start_ns;
  std::size_t nextSample = 0;
  std::sort(inUse.begin(), inUse.end());
  for (const TaskTiming& task : timings) {
    rec.ops.push_back({.stream = task.stream,
                       .kind = task.tag.kind,
                       .step = task.tag.step,
                       .buffer = task.tag.buffer,
                       .bytes = task.tag.bytes,
                       .start_ns = task.start_ns - rec.start_ns,
                       .end_ns = task.end_ns - rec.start_ns,
                       .sub_batch = task.tag.sub_batch});
    if (task.stream != StreamKind::Compute) continue;
    if ((task.tag.kind == TaskKind::Compute || task.tag.kind == TaskKind::Recompute) &&
        task.tag.step >= 1 && task.tag.step <= 2 * n) {
      const std::int64_t gap = std::max<std::int64_t>(0, task.start_ns - computeFree);
      rec.stall_ns[static_cast<std::size_t>(task.tag.step)] += gap;  // recomputes share the step
      rec.pass_stall_ns[rec.passStep(task.tag.sub_batch, task.tag.step)] += gap;
      rec.stall_total_ns += gap;
      while (nextSample < inUse.size() && inUse[nextSample].first < task.seq)
        ++nextSample;
      if (nextSample < inUse.size() && inUse[nextSample].first == task.seq) {
        rec.pool.push_back({task.start_ns - rec.start_ns, inUse[nextSample].second});
      }
    }
    computeFree = std::max(computeFree, task.end_ns);
  }
  rec.pool.push_back({rec.duration_ns, t.in_use_at_end});
  // t_ready: when the swap-stream tasks each step waited on had ended (its prefetches, and the
  // offloads its memory's previous users had to finish).
  std::vector<std::pair<std::uint64_t, std::int64_t>> ends[3];  // per stream: (seq, end)
  for (const TaskTiming& task : timings)
    ends[static_cast<int>(task.stream)].emplace_back(task.seq, task.end_ns - rec.start_ns);
  for (auto& e : ends)
    std::sort(e.begin(), e.end());
  rec.ready_ns.assign(stepWait.size(), 0);
  for (std::size_t at = 0; at < stepWait.size(); ++at) {
    for (const StreamKind other : {StreamKind::SwapOut, StreamKind::SwapIn}) {
      const auto& e = ends[static_cast<int>(other)];
      const std::uint64_t seq = stepWait[at][static_cast<int>(other)];
      const auto it = std::lower_bound(e.begin(), e.end(), std::pair{seq, std::int64_t{0}});
      if (seq > 0 && it != e.end() && it->first == seq)
        rec.ready_ns[at] = std::max(rec.ready_ns[at], it->second);
    }
  }
}

}  // namespace swapscope::rt
