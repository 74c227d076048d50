// SPDX-License-Identifier: MIT
// simulateFrom: a re-simulation from the first step a changed transfer is read at equals a whole
// simulation to the bit, and its stall cut-off stops exactly when the whole run's stall of steps
// 2.. exceeds the limit.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "analysis/network_analysis.h"
#include "common/error.h"
#include "graph/zoo.h"
#include "perfmodel/simulator.h"

namespace swapscope::perf {
namespace {

struct Fixture {
  Network net = buildZooModel("resnet20");
  std::vector<LayerCost> costs = computeLayerCosts(net);
  Gmap gmap = buildGmap(net, costs, swappableFms(net, costs));
  MemoryCurve curve = computeMemoryCurve(gmap);
};

/// Random durations with every contention term on, and some prefetches opened early.
SimInput randomInput(const Fixture& f, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.5e-3, 3e-3);
  SimInput in;
  in.gmap = &f.gmap;
  in.curve = &f.curve;
  in.k = 8;
  in.step_seconds.resize(static_cast<std::size_t>(f.gmap.steps() + 1));
  for (double& s : in.step_seconds)
    s = u(rng);
  for (auto* v : {&in.offload_seconds, &in.prefetch_seconds, &in.offload_beside_seconds,
                  &in.prefetch_beside_seconds}) {
    v->resize(f.gmap.buffers.size());
    for (double& s : *v)
      s = 2 * u(rng);
  }
  const int n = f.gmap.forward_steps;
  in.prefetch_issue.assign(f.gmap.buffers.size(), 0);
  for (const GmapOp& op : f.gmap.ops) {
    if (op.kind == GmapOpKind::Prefetch && op.step > n + 3 && op.buffer % 3 == 0)
      in.prefetch_issue[static_cast<std::size_t>(op.buffer)] = op.step - 2;
  }
  in.reuse_delay = 1;
  in.duplex_factor = 1.3;
  in.dispatch_seconds = 1e-4;
  in.update_seconds = 2e-3;
  in.update_tasks = 3;
  in.start_block = seed % 2 ? 1.0 : 0.25;
  in.copy_start_block = seed % 2 ? 0.9 : 0.3;
  in.copy_start_wait = seed % 2 ? 5e-5 : 0.0;
  in.dispatch_woken_seconds = 3e-4;
  in.slowdown = 0.2;
  return in;
}

/// `in` with buffer b pinned: its transfers take no time, as the planner sets them.
SimInput pinnedAt(const SimInput& in, std::size_t b) {
  SimInput pinned = in;
  for (auto* v : {&pinned.offload_seconds, &pinned.prefetch_seconds, &pinned.offload_beside_seconds,
                  &pinned.prefetch_beside_seconds})
    (*v)[b] = 0;
  return pinned;
}

bool same(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

void expectIdentical(const SimResult& a, const SimResult& b) {
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (std::size_t j = 0; j < a.steps.size(); ++j) {
    EXPECT_TRUE(
        same(a.steps[j].start, b.steps[j].start) && same(a.steps[j].finish, b.steps[j].finish) &&
        same(a.steps[j].ready, b.steps[j].ready) && same(a.steps[j].stall, b.steps[j].stall))
        << "step " << j;
  }
  ASSERT_EQ(a.h2d.size(), b.h2d.size());
  for (std::size_t i = 0; i < a.h2d.size(); ++i)
    EXPECT_TRUE(same(a.h2d[i].start, b.h2d[i].start) && same(a.h2d[i].end, b.h2d[i].end) &&
                a.h2d[i].buffer == b.h2d[i].buffer && a.h2d[i].step == b.h2d[i].step);
  ASSERT_EQ(a.d2h.size(), b.d2h.size());
  for (std::size_t i = 0; i < a.d2h.size(); ++i)
    EXPECT_TRUE(same(a.d2h[i].start, b.d2h[i].start) && same(a.d2h[i].end, b.d2h[i].end));
  ASSERT_EQ(a.pool.size(), b.pool.size());
  for (std::size_t i = 0; i < a.pool.size(); ++i)
    EXPECT_TRUE(same(a.pool[i].first, b.pool[i].first) && a.pool[i].second == b.pool[i].second);
  EXPECT_TRUE(same(a.t_iter, b.t_iter));
  EXPECT_TRUE(same(a.stall, b.stall));
  EXPECT_TRUE(same(a.dispatch, b.dispatch));
  EXPECT_TRUE(same(a.throughput, b.throughput));
}

TEST(SimulateFrom, EqualsAWholeSimulationForEveryChangedBuffer) {
  const Fixture f;
  for (unsigned seed = 1; seed <= 2; ++seed) {
    SimInput in = randomInput(f, seed);
    const SimSchedule schedule(in);
    const SimResult base = simulate(schedule, in);
    ASSERT_GT(base.removableStall(), 0) << "the input must stall for the test to mean something";
    int checked = 0;
    SimResult resumed;
    for (std::size_t b = 0; b < f.gmap.buffers.size(); ++b) {
      const int from = schedule.firstTransferStep(static_cast<int>(b));
      if (from < 2) continue;
      const SimInput pinned = pinnedAt(in, b);
      const SimResult whole = simulate(schedule, pinned);
      ASSERT_TRUE(simulateFrom(schedule, pinned, base, static_cast<std::size_t>(from),
                               std::numeric_limits<double>::infinity(), resumed));
      SCOPED_TRACE("buffer " + f.gmap.buffers[b].name + " from step " + std::to_string(from));
      expectIdentical(whole, resumed);
      ++checked;
    }
    EXPECT_GT(checked, 20);
  }
}

TEST(SimulateFrom, ReadsNothingStaleFromTheResultItWritesInto) {
  // A resumed simulation copies from its base only what steps before `from` wrote, and writes
  // the rest: a result that held anything else before (here: a far-off time in every step, copy
  // end and running sum) comes out equal to a whole simulation.
  const Fixture f;
  SimInput in = randomInput(f, 1);
  const SimSchedule schedule(in);
  const SimResult base = simulate(schedule, in);
  int checked = 0;
  for (std::size_t b = 0; b < f.gmap.buffers.size(); b += 7) {
    const int from = schedule.firstTransferStep(static_cast<int>(b));
    if (from < 2) continue;
    const SimInput pinned = pinnedAt(in, b);
    SimResult stale = base;
    for (StepTiming& t : stale.steps)
      t = {1e6, 1e6, 1e6, 1e6, 1e6};
    std::fill(stale.transfer_end.begin(), stale.transfer_end.end(), 1e6);
    for (SimResult::Sums& sum : stale.sums)
      sum = {1e6, 1e6, 1e6};
    ASSERT_TRUE(simulateFrom(schedule, pinned, base, static_cast<std::size_t>(from),
                             std::numeric_limits<double>::infinity(), stale));
    SCOPED_TRACE("buffer " + f.gmap.buffers[b].name + " from step " + std::to_string(from));
    expectIdentical(simulate(schedule, pinned), stale);
    EXPECT_TRUE(same(simulate(schedule, pinned).removableStall(), stale.removableStall()));
    ++checked;
  }
  EXPECT_GT(checked, 5);
}

TEST(SimulateTrial, AShiftedTrialsStallIsTheWholeRunsUpToRounding) {
  // Every pin of the fixture's buffers: the trial stops once the rest is the base's moved in
  // time, and the stall it reports is the whole simulation's. Some trials must stop early for
  // the test to mean something, and none may stop at or before the pin's last transfer.
  const Fixture f;
  int shifted = 0, checked = 0;
  for (unsigned seed = 1; seed <= 2; ++seed) {
    SimInput in = randomInput(f, seed);
    in.slowdown = 0;  // as the fitted CPU model: copies beside compute do not slow it
    in.duplex_factor = 1;
    const SimSchedule schedule(in);
    const SimResult base = simulate(schedule, in);
    SimResult trial;
    for (std::size_t b = 0; b < f.gmap.buffers.size(); ++b) {
      const int from = schedule.firstTransferStep(static_cast<int>(b));
      if (from < 2) continue;
      const SimInput pinned = pinnedAt(in, b);
      const double whole = simulate(schedule, pinned).removableStall();
      const auto settled =
          static_cast<std::size_t>(schedule.lastTransferStep(static_cast<int>(b))) + 1;
      double stall = -1;
      const TrialEnd end =
          simulateTrial(schedule, pinned, base, static_cast<std::size_t>(from), settled,
                        std::numeric_limits<double>::infinity(), trial, &stall);
      SCOPED_TRACE("buffer " + f.gmap.buffers[b].name + " from step " + std::to_string(from));
      ASSERT_NE(end, TrialEnd::OverLimit);
      EXPECT_NEAR(stall, whole, 1e-12 * std::max(1.0, whole));
      if (end == TrialEnd::Shifted) {
        ++shifted;
        EXPECT_GT(trial.sums.size(), 0u);
      } else {
        EXPECT_TRUE(same(stall, whole));
      }
      // A limit below the whole stall stops it; one above does not.
      EXPECT_EQ(simulateTrial(schedule, pinned, base, static_cast<std::size_t>(from), settled,
                              whole * 0.999 - 1e-12, trial, &stall),
                TrialEnd::OverLimit);
      ++checked;
    }
  }
  EXPECT_GT(checked, 40);
  EXPECT_GT(shifted, 0) << "no trial stopped early: the test would not check the shortcut";
}

TEST(SimulateTrial, ACompleteTrialMadeWholeIsSimulateFromsResult) {
  // A trial leaves the steps before the pin's first transfer as the base's without copying them;
  // completeTrial takes them, and the result is simulateFrom's to the bit. One result object
  // serves every trial, as in the planner, so a step left from an earlier trial would show.
  const Fixture f;
  const SimInput in = randomInput(f, 3);
  const SimSchedule schedule(in);
  const SimResult base = simulate(schedule, in);
  SimResult trial, ref;
  int checked = 0;
  for (std::size_t b = 0; b < f.gmap.buffers.size(); ++b) {
    const int from = schedule.firstTransferStep(static_cast<int>(b));
    if (from < 2) continue;
    SCOPED_TRACE("buffer " + f.gmap.buffers[b].name + " from step " + std::to_string(from));
    const SimInput pinned = pinnedAt(in, b);
    double stall = -1;
    // Settled at the last step: it cannot stop early.
    ASSERT_EQ(
        simulateTrial(schedule, pinned, base, static_cast<std::size_t>(from), schedule.steps(),
                      std::numeric_limits<double>::infinity(), trial, &stall),
        TrialEnd::Complete);
    completeTrial(schedule, base, static_cast<std::size_t>(from), trial);
    ASSERT_TRUE(simulateFrom(schedule, pinned, base, static_cast<std::size_t>(from),
                             std::numeric_limits<double>::infinity(), ref));
    expectIdentical(trial, ref);
    ASSERT_EQ(trial.sums.size(), ref.sums.size());
    for (std::size_t j = 0; j < ref.sums.size(); ++j) {
      EXPECT_TRUE(same(trial.sums[j].removable, ref.sums[j].removable) &&
                  same(trial.sums[j].stall, ref.sums[j].stall) &&
                  same(trial.sums[j].dispatch, ref.sums[j].dispatch) &&
                  same(trial.sums[j].in_clock, ref.sums[j].in_clock) &&
                  same(trial.sums[j].out_clock, ref.sums[j].out_clock))
          << "step " << j;
    }
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

TEST(SimulateBound, NoIterationBeatsItsLoadAndItsComputeAfterHandOffs) {
  // The argmin search prunes k by this bound: the minibatch's load, then every step and every
  // task of the update after its plain hand-off. Whatever the durations, the stalls and the
  // contention, and whichever transfers are pinned (take no time), no simulation is below it.
  const Fixture f;
  for (unsigned seed = 1; seed <= 6; ++seed) {
    SimInput in = randomInput(f, seed);
    in.slowdown = seed % 3 == 0 ? 0.0 : in.slowdown;
    std::mt19937 rng(seed);
    for (std::size_t b = 0; b < f.gmap.buffers.size(); ++b) {
      if (rng() % 3 == 0) in = pinnedAt(in, b);
    }
    double bound = in.update_seconds;
    for (std::size_t j = 1; j < in.step_seconds.size(); ++j)
      bound += in.step_seconds[j] + in.dispatch_seconds;
    bound += in.dispatch_seconds * in.update_tasks;
    for (const GmapOp& op : f.gmap.ops) {
      if (op.kind == GmapOpKind::Prefetch && op.step == 1)
        bound += in.prefetch_seconds[static_cast<std::size_t>(op.buffer)];
    }
    const SimResult r = simulate(in);
    EXPECT_GE(r.t_iter, bound * (1 - 1e-12)) << "seed " << seed;
    EXPECT_GT(r.t_iter - bound, 0) << "the bound should leave the stalls out: seed " << seed;
  }
}

// A schedule that opens a prefetch in the step of its FM's offload, or before it, would read the
// offload's end before the copy is issued, and a resumed run would read a stale one: the
// simulator refuses it, naming the buffer, where it simulates the schedules the executor runs.
TEST(SimSchedule, RefusesAPrefetchOpenedBeforeItsOffload) {
  const Fixture f;
  SimInput in = randomInput(f, 3);
  EXPECT_NO_THROW(SimSchedule{in});
  const int n = f.gmap.forward_steps;
  int buffer = -1, offloadStep = 0;
  for (const GmapOp& op : f.gmap.ops) {
    if (op.kind == GmapOpKind::Offload && op.step > 1 && buffer < 0) {
      buffer = op.buffer;
      offloadStep = op.step;
    }
  }
  ASSERT_GE(buffer, 0);
  for (const int opensAt : {offloadStep, offloadStep - 1}) {
    SimInput early = in;
    early.prefetch_issue[static_cast<std::size_t>(buffer)] = opensAt;
    try {
      const SimSchedule schedule(early);
      ADD_FAILURE() << "a prefetch opened at step " << opensAt << " was simulated";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Runtime);
      EXPECT_NE(std::string(e.what()).find(f.gmap.buffers[static_cast<std::size_t>(buffer)].name),
                std::string::npos)
          << e.what();
    }
  }
  // One step after the offload the simulator takes it (the executor's schedules open it no
  // earlier than the step after the FM's release, which is not before its offload).
  SimInput next = in;
  next.prefetch_issue[static_cast<std::size_t>(buffer)] = offloadStep + 1;
  EXPECT_NO_THROW(SimSchedule{next});
  EXPECT_LE(offloadStep, n);
}

TEST(SimulateFrom, ResumingOneStepTooLateIsWrong) {
  // The check above has teeth: resuming after the first step that reads the changed buffer
  // keeps the base's stale transfer.
  const Fixture f;
  SimInput in = randomInput(f, 1);
  const SimSchedule schedule(in);
  const SimResult base = simulate(schedule, in);
  int differing = 0;
  SimResult resumed;
  for (std::size_t b = 0; b < f.gmap.buffers.size(); ++b) {
    const int from = schedule.firstTransferStep(static_cast<int>(b));
    if (from < 2 || from + 1 >= f.gmap.steps()) continue;
    const SimInput pinned = pinnedAt(in, b);
    const SimResult whole = simulate(schedule, pinned);
    simulateFrom(schedule, pinned, base, static_cast<std::size_t>(from + 1),
                 std::numeric_limits<double>::infinity(), resumed);
    differing += !same(whole.t_iter, resumed.t_iter) || whole.d2h.size() != resumed.d2h.size() ||
                 !same(whole.stall, resumed.stall);
  }
  EXPECT_GT(differing, 0);
}

TEST(SimulateFrom, TheStallLimitStopsExactlyWhenTheWholeStallExceedsIt) {
  const Fixture f;
  const SimInput in = randomInput(f, 2);
  const SimSchedule schedule(in);
  const SimResult base = simulate(schedule, in);
  const double total = base.removableStall();
  ASSERT_GT(total, 0);
  SimResult out;
  for (const double fraction : {0.0, 0.3, 0.999, 1.0, 1.5}) {
    const double limit = total * fraction;
    const bool complete = simulateFrom(schedule, in, base, 1, limit, out);
    EXPECT_EQ(complete, !(total > limit)) << "limit " << limit << " of " << total;
    if (complete) {
      expectIdentical(base, out);
    }
  }
  // From a later step, too.
  const int from = f.gmap.forward_steps;
  EXPECT_FALSE(simulateFrom(schedule, in, base, static_cast<std::size_t>(from), total * 0.5, out));
  EXPECT_TRUE(simulateFrom(schedule, in, base, static_cast<std::size_t>(from), total, out));
  expectIdentical(base, out);
}

}  // namespace
}  // namespace swapscope::perf
