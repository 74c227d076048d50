// SPDX-License-Identifier: MIT
#include "views/streams_data.h"

#include <algorithm>
#include <set>

#include "store/run_db.h"
#include "views/timeline_data.h"

namespace swapscope {

const char* streamBarKindName(StreamBarKind kind) {
  switch (kind) {
    case StreamBarKind::Forward:
      return "fwd";
    case StreamBarKind::Backward:
      return "bwd";
    case StreamBarKind::Update:
      return "update";
    case StreamBarKind::Offload:
      return "offload";
    case StreamBarKind::Prefetch:
      return "prefetch";
    case StreamBarKind::Load:
      return "load";
    case StreamBarKind::Remake:
      return "bwd, re-making recomputed FMs";
  }
  return "?";
}

std::string networkKey(const Network& net) {
  return net.name() + "/" + net.structureHash();
}

int StreamsData::stepsMarked(const std::vector<StallMarker>& markers) {
  std::set<int> steps;
  for (const StallMarker& m : markers)
    steps.insert(m.step);
  return static_cast<int>(steps.size());
}

int StreamsData::swapTransfers() const {
  int n = 0;
  for (const StreamBar& b : bars)
    n += b.kind == StreamBarKind::Offload || b.kind == StreamBarKind::Prefetch;
  return n;
}

namespace {

const StreamBar* barIn(const std::vector<StreamBar>& bars, StreamLane lane, double t,
                       double slack) {
  const StreamBar* best = nullptr;
  double bestDistance = 0;
  for (const StreamBar& b : bars) {
    if (b.lane != lane || t < b.start - slack || t > b.finish + slack) continue;
    // Inside a bar wins; among widened neighbours, the nearest.
    const double d = t < b.start ? b.start - t : (t > b.finish ? t - b.finish : 0.0);
    if (!best || d < bestDistance) {
      best = &b;
      bestDistance = d;
    }
  }
  return best;
}

}  // namespace

const StreamBar* StreamsData::barAt(StreamLane lane, double t, double slack) const {
  return barIn(bars, lane, t, slack);
}

const StreamBar* StreamsData::measuredBarAt(StreamLane lane, double t, double slack) const {
  return barIn(measured_bars, lane, t, slack);
}

StreamsData makeStreamsData(const Network& net, const perf::PlanResult& plan,
                            const perf::PerfModel* model, const std::vector<LayerCost>* costs) {
  StreamsData d;
  d.network_key = networkKey(net);
  d.trainable = plan.trainable;
  if (!plan.trainable) {
    d.title = net.name() + ": no plan";
    d.reason = plan.reason;
    return d;
  }
  const perf::Evaluation& e = plan.best;
  const perf::SimResult& sim = e.sim;
  const Gmap& g = plan.gmap;
  d.k = e.k;
  d.t_iter = sim.t_iter;
  d.total_stall = sim.idle();  // as the plan file, `plan` and a run give it (hand-offs included)
  d.title = net.name() + " at k = " + std::to_string(e.k);

  const int n = g.forward_steps;
  std::vector<bool> remakes(sim.steps.size(), false);  // steps with a Recompute op
  for (const GmapOp& op : g.ops) {
    if (op.kind == GmapOpKind::Recompute && op.step > 0 &&
        static_cast<std::size_t>(op.step) < remakes.size())
      remakes[static_cast<std::size_t>(op.step)] = true;
  }
  double lastFinish = 0;
  for (std::size_t j = 1; j < sim.steps.size(); ++j) {
    const perf::StepTiming& t = sim.steps[j];
    const int step = static_cast<int>(j);
    const int layer = g.step_layer[j];
    StreamBar b;
    b.lane = StreamLane::Compute;
    b.kind = step <= n    ? StreamBarKind::Forward
             : remakes[j] ? StreamBarKind::Remake
                          : StreamBarKind::Backward;
    b.step = step;
    b.layer = layer;
    b.label = layer >= 0 ? net.layer(layer).name : std::string();
    b.start = t.start;
    b.finish = t.finish;
    b.stall = t.stall;
    d.bars.push_back(b);
    // The plan file's stalls (perf::toPlanFile): every stalled step, marked with its idle time.
    if (const double idle = t.stalledIdle(); idle > 0) {
      d.stalls.push_back({.step = step,
                          .layer = layer,
                          .label = b.label,
                          .start = t.start - idle,
                          .end = t.start});
    }
    lastFinish = t.finish;
  }
  if (model && costs && costs->size() == static_cast<std::size_t>(net.size())) {
    // The simulator keeps only the compute stream's end; the update's length is the model's, as
    // the planner computes it (the sum over layers with parameters), with its tasks' hand-offs:
    // the bar ends where the compute stream does.
    double update = 0;
    for (int i = 0; i < net.size(); ++i) {
      if ((*costs)[static_cast<std::size_t>(i)].params > 0)
        update += model->step(net, *costs, i, perf::StepKind::Update, e.k).seconds;
    }
    if (update > 0) {
      StreamBar b;
      b.kind = StreamBarKind::Update;
      b.label = "SGD update";
      b.start = lastFinish;
      b.finish = lastFinish + update + e.sim.update_dispatch;
      d.bars.push_back(b);
    }
  }

  auto transfers = [&](const std::vector<perf::BusyInterval>& v, StreamLane lane) {
    for (const perf::BusyInterval& iv : v) {
      StreamBar b;
      b.lane = lane;
      const bool load = lane == StreamLane::SwapIn && iv.step == 1;
      b.kind = lane == StreamLane::SwapOut ? StreamBarKind::Offload
                                           : (load ? StreamBarKind::Load : StreamBarKind::Prefetch);
      b.step = iv.step;
      if (iv.buffer >= 0 && static_cast<std::size_t>(iv.buffer) < g.buffers.size()) {
        const GmapBuffer& buf = g.buffers[static_cast<std::size_t>(iv.buffer)];
        b.layer = buf.layer;
        b.label = buf.name;
        b.bytes = buf.size.at(e.k);
      }
      b.start = iv.start;
      b.finish = iv.end;
      d.bars.push_back(b);
    }
  };
  transfers(sim.d2h, StreamLane::SwapOut);
  transfers(sim.h2d, StreamLane::SwapIn);
  return d;
}

bool addMeasuredStreams(StreamsData& d, const store::RunData& run, std::int64_t k,
                        double threshold) {
  std::vector<const store::IterationRow*> its;
  for (const store::IterationRow& it : run.iterations) {
    if (it.k == k) its.push_back(&it);
  }
  if (its.empty()) return false;
  std::vector<const store::IterationRow*> order = its;
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* a, const auto* b) { return a->duration_ns < b->duration_ns; });
  const store::IterationRow& it = *order[(order.size() - 1) / 2];
  // The Timeline's lanes of that iteration: one way to draw a recorded iteration.
  TimelineData measured = makeTimelineData(run, k, it.iteration);
  // Steps the simulated iteration has: a measured step beyond them is another network's.
  int steps = 0;
  for (const StreamBar& b : d.bars)
    steps = std::max(steps, b.lane == StreamLane::Compute ? b.step : 0);
  const double tIter = measured.lanes.t_iter;
  std::vector<StallMarker> stalls;
  std::set<int> stalled;
  for (const StreamBar& b : measured.lanes.bars) {
    if (b.lane != StreamLane::Compute ||
        (b.kind != StreamBarKind::Forward && b.kind != StreamBarKind::Backward &&
         b.kind != StreamBarKind::Remake))
      continue;
    if (b.step < 1 || b.step > steps) return false;
    // Stalled as the CLI counts it (perf::compareStalls): above threshold x t_iter.
    if (b.stall > threshold * tIter) stalled.insert(b.step);
  }
  if (measured.lanes.bars.empty()) return false;
  // Marked where the Timeline marks them: around a step's recomputes, not over them.
  for (const StallMarker& m : measured.lanes.stalls) {
    if (stalled.count(m.step)) stalls.push_back(m);
  }
  std::stable_sort(stalls.begin(), stalls.end(),
                   [](const StallMarker& a, const StallMarker& b) { return a.step < b.step; });
  d.measured_bars = std::move(measured.lanes.bars);
  d.measured_stalls = std::move(stalls);
  d.measured_iteration = it.iteration;
  d.measured_t_iter = tIter;
  d.measured_stall = static_cast<double>(it.stall_ns) * 1e-9;
  d.measured_threshold = threshold;
  d.measured_title = "measured: iteration " + std::to_string(it.iteration) + " of " +
                     std::to_string(its.size()) + " (the median t_iter)";
  return true;
}

}  // namespace swapscope
