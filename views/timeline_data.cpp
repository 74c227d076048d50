// SPDX-License-Identifier: MIT
#include "views/timeline_data.h"

#include <algorithm>

#include "store/chrome_trace.h"

namespace swapscope {
namespace {

double seconds(std::int64_t ns) {
  return static_cast<double>(ns) * 1e-9;
}

}  // namespace

std::vector<std::int64_t> recordedBatches(const store::RunData& run) {
  std::vector<std::int64_t> ks;
  for (const store::IterationRow& r : run.iterations)
    ks.push_back(r.k);
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  return ks;
}

int recordedIterations(const store::RunData& run, std::int64_t k) {
  int n = 0;
  for (const store::IterationRow& r : run.iterations)
    n += r.k == k;
  return n;
}

TimelineData makeTimelineData(const store::RunData& run, std::int64_t k, int iteration) {
  const store::IterationRow& it = store::recordedIteration(run, k, iteration);
  TimelineData d;
  d.path = run.path;
  d.k = k;
  d.iteration = iteration;
  d.budget = run.meta.budget;
  const std::int64_t t0 = it.start_ns;
  auto layerName = [&](int layer) {
    return layer >= 0 && static_cast<std::size_t>(layer) < run.layers.size()
               ? run.layers[static_cast<std::size_t>(layer)].name
               : std::string();
  };

  StreamsData& s = d.lanes;
  s.trainable = true;
  s.k = k;
  s.t_iter = seconds(it.duration_ns);
  // The zoom stays while the database and k do: iterations of one k are compared in place.
  s.network_key = run.path + "@" + std::to_string(k);
  s.title = run.network.name + " at k = " + std::to_string(k) + ", measured iteration " +
            std::to_string(iteration);

  std::vector<const store::SampleRow*> steps;
  for (const store::SampleRow& r : run.samples) {
    if (r.k == k && r.iteration == iteration) steps.push_back(&r);
  }
  std::stable_sort(steps.begin(), steps.end(),
                   [](const auto* a, const auto* b) { return a->start_ns < b->start_ns; });
  d.step_rows = steps.size();
  // Recompute tasks run on the compute stream before their step's kernels: bars of their own,
  // and the step's stall lies in the gaps around them (store::stallSpans), as the trace draws it.
  const std::map<int, std::vector<store::Span>> recomputes =
      store::recomputeSpans(run, k, iteration);
  for (const store::RecomputeRow& r : run.recomputes) {
    if (r.k != k || r.iteration != iteration) continue;
    StreamBar b;
    b.lane = StreamLane::Compute;
    b.kind = StreamBarKind::Remake;
    b.step = r.step;
    b.layer = r.layer;
    b.label = layerName(r.layer) + " recompute";
    b.start = seconds(r.start_ns - t0);
    b.finish = seconds(r.start_ns + r.time_ns - t0);
    s.bars.push_back(b);
  }
  for (const store::SampleRow* r : steps) {
    StreamBar b;
    b.lane = StreamLane::Compute;
    b.kind = r->direction == store::Direction::Forward    ? StreamBarKind::Forward
             : r->direction == store::Direction::Backward ? StreamBarKind::Backward
                                                          : StreamBarKind::Update;
    b.step = r->step;
    b.layer = r->layer;
    b.label = layerName(r->layer);
    b.start = seconds(r->start_ns - t0);
    b.finish = seconds(r->start_ns + r->time_ns - t0);
    b.stall = seconds(r->stall_ns);
    s.bars.push_back(b);
    // Within the iteration: an older sub-batched file's summed stall, laid before an earlier
    // pass, is cut at the iteration's start, as the trace cuts it.
    for (const store::Span& idle : store::stallSpans(*r, recomputes, t0)) {
      s.stalls.push_back({.step = r->step,
                          .layer = r->layer,
                          .label = b.label,
                          .start = seconds(idle.start_ns - t0),
                          .end = seconds(idle.end_ns - t0)});
    }
  }
  // The iteration's recorded stall: its rows' stalls add up to it, or, in the older sub-batched
  // layout whose every pass's row holds the step's summed stall, to S times it.
  s.total_stall = seconds(it.stall_ns);

  for (const store::TransferRow& t : run.transfers) {
    if (t.k != k || t.iteration != iteration) continue;
    ++d.transfer_rows;
    StreamBar b;
    switch (t.kind) {
      case store::TransferKind::Offload:
        b.kind = StreamBarKind::Offload;
        break;
      case store::TransferKind::Prefetch:
        b.kind = StreamBarKind::Prefetch;
        break;
      case store::TransferKind::Load:
      case store::TransferKind::Readback:
        b.kind = StreamBarKind::Load;
        break;
    }
    // As the trace's threads: the loss readback runs on the compute stream, in step order.
    b.lane = t.kind == store::TransferKind::Readback ? StreamLane::Compute
             : t.to_host                             ? StreamLane::SwapOut
                                                     : StreamLane::SwapIn;
    b.step = t.step;
    if (t.tensor >= 0 && static_cast<std::size_t>(t.tensor) < run.tensors.size()) {
      const store::TensorRow& tensor = run.tensors[static_cast<std::size_t>(t.tensor)];
      b.layer = tensor.layer;
      b.label = tensor.name;
    }
    b.bytes = t.bytes;
    b.start = seconds(t.start_ns - t0);
    b.finish = seconds(t.end_ns - t0);
    s.bars.push_back(b);
  }
  // Bars in lane order, each lane in time order (StreamsData's order: compute first).
  std::stable_sort(s.bars.begin(), s.bars.end(), [](const StreamBar& a, const StreamBar& b) {
    if (a.lane != b.lane) return static_cast<int>(a.lane) < static_cast<int>(b.lane);
    return a.start < b.start;
  });
  std::stable_sort(s.stalls.begin(), s.stalls.end(),
                   [](const StallMarker& a, const StallMarker& b) { return a.step < b.step; });

  for (const store::MemoryRow& m : run.memory) {
    if (m.k == k && m.iteration == iteration)
      d.pool.emplace_back(seconds(m.time_ns - t0), m.in_use);
  }
  std::stable_sort(d.pool.begin(), d.pool.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return d;
}

}  // namespace swapscope
