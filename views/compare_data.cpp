// SPDX-License-Identifier: MIT
#include "views/compare_data.h"

#include <algorithm>
#include <filesystem>
#include <limits>

#include "views/timeline_data.h"

namespace swapscope {
namespace {

std::vector<IterationTimes> iterationTimes(const store::RunData& run) {
  std::vector<IterationTimes> out;
  for (const std::int64_t k : recordedBatches(run)) {
    IterationTimes t;
    t.k = k;
    std::vector<const store::IterationRow*> rows;
    for (const store::IterationRow& r : run.iterations) {
      if (r.k == k) rows.push_back(&r);
    }
    std::sort(rows.begin(), rows.end(),
              [](const auto* x, const auto* y) { return x->iteration < y->iteration; });
    for (const store::IterationRow* r : rows)
      t.seconds.push_back(static_cast<double>(r->duration_ns) * 1e-9);
    out.push_back(std::move(t));
  }
  return out;
}

PoolCurve poolCurve(const store::RunData& run, std::int64_t k) {
  PoolCurve p;
  p.budget = run.meta.budget;
  // The largest minibatch recorded where k is none of them (0, or the samples per step of a run
  // in sub-batches, whose iterations are recorded at the whole minibatch).
  const std::vector<std::int64_t> ks = recordedBatches(run);
  if (ks.empty()) return p;
  if (std::find(ks.begin(), ks.end(), k) == ks.end()) k = ks.back();
  // The lowest iteration recorded at k (a run cut short may lack iteration 0's later ones).
  int iteration = std::numeric_limits<int>::max();
  for (const store::IterationRow& r : run.iterations) {
    if (r.k == k) iteration = std::min(iteration, r.iteration);
  }
  if (iteration == std::numeric_limits<int>::max()) return p;
  const TimelineData t = makeTimelineData(run, k, iteration);
  p.k = k;
  p.iteration = iteration;
  p.points = t.pool;
  p.t_iter = t.lanes.t_iter;
  return p;
}

std::string label(const char* side, const store::RunData& run) {
  return std::string(side) + ": " + run.network.name + " (" +
         std::filesystem::path(run.path).filename().string() + ")";
}

}  // namespace

CompareData makeCompareData(const store::RunData& a, const store::RunData& b) {
  CompareData d;
  d.comparison = perf::compareRuns(a, b, std::numeric_limits<std::size_t>::max());
  d.label_a = label("A", a);
  d.label_b = label("B", b);
  d.times_a = iterationTimes(a);
  d.times_b = iterationTimes(b);
  d.pool_a = poolCurve(a, d.comparison.step_k);
  d.pool_b = poolCurve(b, d.comparison.step_k);
  for (const store::RunData* run : {&a, &b}) {
    for (const store::TransferRow& t : run->transfers)
      d.largest_transfer = std::max(d.largest_transfer, t.bytes);
  }
  return d;
}

}  // namespace swapscope
