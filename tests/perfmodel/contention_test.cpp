// SPDX-License-Identifier: MIT
// The compute stream's hand-off and the contention between copies and compute: the simulator
// reproduces a hand-computed schedule with them, and the fits recover parameters planted in a
// synthetic timeline.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "analysis/network_analysis.h"
#include "graph/builder.h"
#include "perfmodel/chain.h"
#include "perfmodel/compare.h"
#include "perfmodel/hand_made_run.h"
#include "perfmodel/model.h"
#include "perfmodel/simulator.h"
#include "store/run_db.h"

namespace swapscope::perf {
namespace {

using testing::Chain;

/// Every step 1 s, every copy instantaneous except relu1's offload (after step 2): 0.5 s
/// without compute beside it, 0.8 s beside compute. Hand-off 0.1 s; the update 0.3 s in 2 tasks.
SimInput handInput(const Chain& c) {
  SimInput in;
  in.gmap = &c.gmap;
  in.curve = &c.curve;
  in.k = 1;
  in.step_seconds.assign(static_cast<std::size_t>(c.gmap.steps() + 1), 1.0);
  for (auto* v : {&in.offload_seconds, &in.prefetch_seconds, &in.offload_beside_seconds,
                  &in.prefetch_beside_seconds})
    v->assign(c.gmap.buffers.size(), 0.0);
  const auto relu = static_cast<std::size_t>(c.buffer("relu1"));
  in.offload_seconds[relu] = 0.5;
  in.offload_beside_seconds[relu] = 0.8;
  in.reuse_delay = 4;
  in.update_seconds = 0.3;
  in.update_tasks = 2;
  in.dispatch_seconds = 0.1;
  in.slowdown = 0.5;
  return in;
}

TEST(Contention, AStepThatYieldsToACopyWaitsForIt) {
  const Chain c;
  ASSERT_EQ(c.gmap.steps(), 12);
  SimInput in = handInput(c);
  // Compute yields to a copy that starts in its hand-off: relu1's offload, which starts as step
  // 2 ends, runs without compute, at 0.5 s.
  in.copy_start_block = 1.0;
  const SimResult r = simulate(in);
  // Step 1 starts after a hand-off: 0.1 .. 1.1; step 2: 1.2 .. 2.2; the offload 2.2 .. 2.7.
  EXPECT_NEAR(r.steps[1].start, 0.1, 1e-12);
  EXPECT_NEAR(r.steps[2].finish, 2.2, 1e-12);
  ASSERT_EQ(r.d2h.size() > 0, true);
  // Step 3 could start at 2.3 but waits for the offload: 2.7 .. 3.7, a stall of 0.4 s beyond
  // its hand-off; nothing runs beside it afterwards, so it is not slowed.
  EXPECT_NEAR(r.steps[3].start, 2.7, 1e-12);
  EXPECT_NEAR(r.steps[3].stall, 0.4, 1e-12);
  EXPECT_NEAR(r.steps[3].dispatch, 0.1, 1e-12);
  EXPECT_NEAR(r.steps[3].finish, 3.7, 1e-12);
  // Steps 4..12 follow 1.1 s apart; the update adds 0.3 s and two hand-offs.
  EXPECT_NEAR(r.steps[12].finish, 3.7 + 9 * 1.1, 1e-9);
  EXPECT_NEAR(r.t_iter, 3.7 + 9 * 1.1 + 0.3 + 2 * 0.1, 1e-9);
  EXPECT_NEAR(r.stall, 0.4, 1e-12);
  // The run measures the compute stream's idle time before steps 1..2N: the update's two
  // hand-offs are in t_iter but not in the stall a run reports.
  EXPECT_NEAR(r.dispatch, 12 * 0.1, 1e-12);
  EXPECT_NEAR(r.update_dispatch, 2 * 0.1, 1e-12);
  EXPECT_NEAR(r.idle(), 0.4 + 12 * 0.1, 1e-12);
  EXPECT_EQ(r.stalled_steps(), std::vector<int>{3});
}

TEST(Contention, AStepBesideACopyIsSlowedByIt) {
  const Chain c;
  SimInput in = handInput(c);
  in.copy_start_block = 0.0;  // compute does not yield: the offload runs beside step 3, at 0.8 s
  const SimResult r = simulate(in);
  // The offload runs 2.2 .. 3.0; step 3 starts at 2.3 with no stall. Until 3.0 it progresses at
  // half its rate (0.35 s of work), then the remaining 0.65 s: it ends at 3.65.
  EXPECT_NEAR(r.steps[3].start, 2.3, 1e-12);
  EXPECT_NEAR(r.steps[3].stall, 0.0, 1e-12);
  EXPECT_NEAR(r.steps[3].finish, 3.65, 1e-12);
  EXPECT_NEAR(r.t_iter, 3.65 + 9 * 1.1 + 0.3 + 2 * 0.1, 1e-9);
  EXPECT_NEAR(r.stall, 0.0, 1e-12);
  EXPECT_TRUE(r.stalled_steps().empty());
  // Without the contention terms the same input is the old model: no hand-off, no slowdown.
  in.dispatch_seconds = 0;
  in.slowdown = 0;
  in.update_tasks = 0;
  in.offload_beside_seconds.clear();
  in.prefetch_beside_seconds.clear();
  EXPECT_NEAR(simulate(in).t_iter, 12.0 + 0.3, 1e-9);
}

TEST(Contention, EachKindOfHandOffAddsItsWaitToTheStall) {
  const Chain c;
  SimInput in = handInput(c);
  in.dispatch_woken_seconds = 0.25;
  in.copy_start_block = 1.0;
  in.copy_start_wait = 0.05;
  // The minibatch loads in 0.5 s: step 1 waits for it, so its hand-off is the woken one.
  const auto input = static_cast<std::size_t>(c.buffer("data"));
  in.prefetch_seconds[input] = in.prefetch_beside_seconds[input] = 0.5;
  SimResult r = simulate(in);
  // Step 1 could start at 0.5: 0.5 + 0.25 = 0.75 .. 1.75, a stall of 0.5 + 0.15 beyond the
  // plain hand-off. Step 2 (every copy after step 1 takes no time): plain, 1.85 .. 2.85.
  EXPECT_NEAR(r.steps[1].start, 0.75, 1e-12);
  EXPECT_NEAR(r.steps[1].stall, 0.65, 1e-12);
  EXPECT_NEAR(r.steps[1].dispatch, 0.1, 1e-12);
  EXPECT_NEAR(r.steps[2].start, 1.85, 1e-12);
  EXPECT_NEAR(r.steps[2].stall, 0.0, 1e-12);
  // relu1's offload starts in step 3's hand-off, at 2.85, and compute yields to it: 0.5 s
  // without compute, to 3.35. Step 3 waits 0.05 s + all of its 0.4 s beyond the plain
  // hand-off: 3.4 .. 4.4.
  ASSERT_EQ(r.d2h.size() > 0, true);
  EXPECT_NEAR(r.steps[3].start, 3.4, 1e-12);
  EXPECT_NEAR(r.steps[3].stall, 0.45, 1e-12);
  // Steps 4..11 follow 1.1 s apart: step 11 ends at 4.4 + 8 x 1.1 = 13.2. Step 12, conv1's
  // backward step, reads the minibatch again: its prefetch opens as step 11 ends and takes
  // 0.5 s, so step 12 waits for it and then the woken hand-off: 13.95 .. 14.95.
  EXPECT_NEAR(r.steps[11].finish, 4.4 + 8 * 1.1, 1e-9);
  EXPECT_NEAR(r.steps[12].start, 4.4 + 8 * 1.1 + 0.5 + 0.25, 1e-9);
  EXPECT_NEAR(r.steps[12].stall, 0.65, 1e-9);
  EXPECT_NEAR(r.steps[12].finish, 14.95, 1e-9);
  EXPECT_NEAR(r.t_iter, 14.95 + 0.3 + 2 * 0.1, 1e-9);
  EXPECT_NEAR(r.stall, 0.65 + 0.45 + 0.65, 1e-9);
  EXPECT_NEAR(r.idle(), 0.65 + 0.45 + 0.65 + 12 * 0.1, 1e-9);
  EXPECT_EQ(r.stalled_steps(), (std::vector<int>{1, 3, 12}));

  // A copy already running when a step could start: the plain hand-off, then start_block x its
  // remaining time. relu1's offload now takes 2 s beside compute (compute does not yield, and
  // is not slowed): 2.85 .. 4.85. Step 3 waits copy_start_wait only: 3.0 .. 4.0. Step 4 could
  // start at 4.0 while that copy runs: 4.1, then all of its remaining 0.75 s: 4.85 .. 5.85.
  in.copy_start_block = 0.0;
  in.slowdown = 0.0;
  in.start_block = 1.0;
  const auto relu = static_cast<std::size_t>(c.buffer("relu1"));
  in.offload_beside_seconds[relu] = 2.0;
  r = simulate(in);
  EXPECT_NEAR(r.steps[3].start, 3.0, 1e-12);
  EXPECT_NEAR(r.steps[3].stall, 0.05, 1e-12);
  EXPECT_NEAR(r.steps[4].start, 4.85, 1e-12);
  EXPECT_NEAR(r.steps[4].stall, 0.75, 1e-12);
  EXPECT_NEAR(r.steps[4].dispatch, 0.1, 1e-12);
}

// The executor opens the prefetches moved to a step before the step's own (executionOrder), and
// the swap-in stream runs them in that order, so the step's own prefetch queues behind them.
TEST(Simulator, PrefetchesMovedToAStepRunBeforeItsOwn) {
  const Chain c;
  const int n = c.gmap.forward_steps;
  // The first backward step with a prefetch of its own, and a prefetch of a later step.
  int own = -1, later = -1, step = 0;
  for (const GmapOp& op : c.gmap.ops) {
    if (op.kind != GmapOpKind::Prefetch || op.step <= n) continue;
    if (own < 0) {
      own = op.buffer;
      step = op.step;
    } else if (op.step > step) {
      later = op.buffer;
      break;
    }
  }
  ASSERT_GE(own, 0);
  ASSERT_GE(later, 0);
  SimInput in;
  in.gmap = &c.gmap;
  in.k = 1;
  in.step_seconds.assign(static_cast<std::size_t>(c.gmap.steps() + 1), 1.0);
  in.offload_seconds.assign(c.gmap.buffers.size(), 0.0);
  in.prefetch_seconds.assign(c.gmap.buffers.size(), 0.0);
  in.prefetch_seconds[static_cast<std::size_t>(own)] = 0.5;
  in.prefetch_seconds[static_cast<std::size_t>(later)] = 1.0;
  in.prefetch_issue.assign(c.gmap.buffers.size(), 0);
  in.prefetch_issue[static_cast<std::size_t>(later)] = step;
  const SimResult r = simulate(in);
  // Both open when step - 1 ends, at step - 1 seconds: the moved one runs 1 s, then the step's
  // own 0.5 s, so the step is ready and starts 1.5 s after the step before it ends.
  const auto j = static_cast<std::size_t>(step);
  EXPECT_NEAR(r.steps[j - 1].finish, step - 1.0, 1e-12);
  EXPECT_NEAR(r.steps[j].ready, step - 1.0 + 1.5, 1e-12);
  EXPECT_NEAR(r.steps[j].stall, 1.5, 1e-12);
}

/// A synthetic profile of the chain with planted hand-off, start blocking, compute slowdown and
/// copy rates, recorded as a schema-2 run database would hold it.
struct Planted {
  std::int64_t dispatch_ns = 20'000;
  double start_block = 0.6;
  double copy_start_block = 0.8;
  std::int64_t copy_start_wait_ns = 30'000;
  /// > 0: in the iteration without copies, steps 5 and 10 wait 40 us for t_ready and then
  /// hand off in this long.
  std::int64_t woken_ns = 0;
  double slowdown = 0.3;
  double latency = 10e-6;
  double alone_bps = 1e9, beside_bps = 0.5e9;
  /// In the iteration without copies, every fourth step's hand-off is this much longer (the
  /// stream's thread waited to be scheduled); with late_always, in every iteration.
  std::int64_t late_ns = 0;
  bool late_always = false;
  /// Every copy beside a step moves the same bytes (a run of one plan at one k can record that).
  bool beside_one_size = false;
  /// An iteration 3 like iteration 1, but the copies due as steps 3, 7, 11, ... could start (each
  /// issued by the step before) start only 100 us into the step, which hands off plainly.
  bool deferred = false;
  /// The copies of k = 2's iteration 1 take this many times as long (a slow phase of the machine).
  double slow_phase = 1;
};

store::RunData plantedRun(const Chain& c, const Planted& p) {
  store::RunData run = testing::handMadeRun(c.net, "planted.swapdb");
  auto ns = [](double s) { return static_cast<std::int64_t>(std::llround(s * 1e9)); };
  auto copyNs = [&](std::int64_t bytes, bool beside) {
    return ns(p.latency + static_cast<double>(bytes) / (beside ? p.beside_bps : p.alone_bps));
  };
  const int n = c.gmap.forward_steps;
  for (const std::int64_t k : {1, 2, 4}) {
    // Iteration 0: no copies at all (every step clean); iteration 1: a copy without compute as
    // every odd step could start, already running (steps 1, 5, 9, ...) or starting then (steps
    // 3, 7, 11, ...); iteration 2: a copy beside every even step.
    for (int it = 0; it < (p.deferred ? 4 : 3); ++it) {
      std::int64_t t = 1'000'000 * (10 * k + it);  // the iteration's start
      run.iterations.push_back({k, it, t, 1, 0, 0, 0, 0, 0});
      const std::int64_t origin = t;
      // The minibatch's load, before any step (a profile always has host-to-device copies).
      store::TransferRow load;
      load.k = k;
      load.iteration = it;
      load.kind = store::TransferKind::Load;
      load.to_host = false;
      load.tensor = 0;
      load.bytes = 10'000 * k * (it + 1);
      load.end_ns = t - 10'000;
      load.start_ns = load.end_ns - copyNs(load.bytes, false);
      run.transfers.push_back(load);
      for (int s = 1; s <= 2 * n; ++s) {
        const int layer = c.gmap.step_layer[static_cast<std::size_t>(s)];
        const std::int64_t clean = 1'000'000 * k + 50'000 * s;
        std::int64_t start =
            t + p.dispatch_ns + ((it == 0 || p.late_always) && s % 4 == 0 ? p.late_ns : 0);
        std::int64_t ready = origin;
        if (it == 0 && p.woken_ns > 0 && s % 5 == 0) {
          ready = t + 40'000;
          start = ready + p.woken_ns;
        }
        std::int64_t overlap = 0;
        const std::int64_t bytes = 100'000 * k * (s % 3 + 1);
        store::TransferRow tr;
        tr.k = k;
        tr.iteration = it;
        tr.kind = store::TransferKind::Offload;
        tr.to_host = true;
        tr.tensor = 0;
        tr.bytes = bytes;
        if (it == 1 && s % 2 == 1 && s > 1) {
          // Running since just before the previous step's end, the step waits for part of its
          // remainder; starting with that end, for a wait and part of the time it runs beyond
          // the plain hand-off.
          const bool running = s % 4 == 1;
          tr.start_ns = running ? t - 5'000 : t;
          const double phase = k == 2 ? p.slow_phase : 1.0;
          tr.end_ns = tr.start_ns + ns(phase * static_cast<double>(copyNs(bytes, false)) * 1e-9);
          const std::int64_t nominal = t + p.dispatch_ns;
          const double beyond = static_cast<double>(tr.end_ns - nominal) * 1e-9;
          start = nominal + (running ? ns(p.start_block * beyond)
                                     : p.copy_start_wait_ns + ns(p.copy_start_block * beyond));
          overlap = std::max<std::int64_t>(0, tr.end_ns - start);
          tr.overlap_ns = overlap;
          run.transfers.push_back(tr);
        }
        std::int64_t wall = clean + ns(p.slowdown * static_cast<double>(overlap) * 1e-9);
        // A copy from 100 us into the step, entirely inside it, which it slows.
        auto besideStep = [&] {
          tr.start_ns = start + 100'000;
          tr.end_ns = tr.start_ns + copyNs(tr.bytes, true);
          overlap = tr.end_ns - tr.start_ns;
          wall = clean + ns(p.slowdown * static_cast<double>(overlap) * 1e-9);
          tr.overlap_ns = overlap;
          run.transfers.push_back(tr);
        };
        if (it == 3 && s % 4 == 3) {
          tr.step = s - 1;  // due as the step could start
          besideStep();
        }
        if (it == 2 && s % 2 == 0) {
          if (p.beside_one_size) tr.bytes = 300'000;
          besideStep();
        }
        run.samples.push_back(
            {k, it, s, layer,
             c.gmap.isBackwardStep(s) ? store::Direction::Backward : store::Direction::Forward, 0,
             start, wall, start - t, ready, overlap});
        t = start + wall;
      }
    }
  }
  std::sort(run.transfers.begin(), run.transfers.end(),
            [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  return run;
}

TEST(Contention, TheFitsRecoverPlantedParameters) {
  const Chain c;
  const Planted p;
  const PerfModel m = PerfModel::fit(plantedRun(c, p));
  ASSERT_TRUE(m.dispatch().present);
  EXPECT_NEAR(m.dispatch().seconds, 20e-6, 1e-12);
  EXPECT_GT(m.dispatch().points, 50);
  EXPECT_EQ(m.dispatch().residuals.size(), static_cast<std::size_t>(m.dispatch().points));
  const ContentionFit& f = m.contention();
  ASSERT_TRUE(f.present);
  EXPECT_NEAR(f.start_block.slope, p.start_block, 1e-3);
  // Steps 5 and 9 at each of 3 minibatches (a pair fitted or left out: synthetic residuals are
  // all but 0, so Tukey's fences are nanoseconds wide).
  EXPECT_EQ(f.start_block.points + f.start_block.outliers, 6);
  EXPECT_GE(f.start_block.points, 3);
  EXPECT_EQ(f.start_block.residuals.size(), static_cast<std::size_t>(f.start_block.points));
  EXPECT_NEAR(f.copy_start_block.slope, p.copy_start_block, 1e-3);
  EXPECT_NEAR(f.copy_start_block.intercept, static_cast<double>(p.copy_start_wait_ns) * 1e-9, 1e-8);
  EXPECT_EQ(f.copy_start_block.points + f.copy_start_block.outliers, 9);  // steps 3, 7, 11
  EXPECT_GE(f.copy_start_block.points, 5);
  EXPECT_EQ(f.copy_start_block.residuals.size(),
            static_cast<std::size_t>(f.copy_start_block.points));
  // No task waited for t_ready: the woken hand-off is the plain one, with no points.
  EXPECT_EQ(m.dispatch().woken_points, 0);
  EXPECT_EQ(m.dispatch().woken_seconds, m.dispatch().seconds);
  EXPECT_NEAR(f.slowdown.slope, p.slowdown, 1e-3);
  EXPECT_GT(f.slowdown.points, 10);
  EXPECT_EQ(f.slowdown.residuals.size(), static_cast<std::size_t>(f.slowdown.points));
  // Copies: apart by whether compute ran beside them, each with its residuals.
  const LinkFit& alone = m.link(true);
  const LinkFit& beside = m.linkBesideCompute(true);
  EXPECT_NEAR(alone.bandwidth, p.alone_bps, 0.01 * p.alone_bps);
  EXPECT_NEAR(alone.latency, p.latency, 1e-6);
  EXPECT_NEAR(beside.bandwidth, p.beside_bps, 0.01 * p.beside_bps);
  EXPECT_NEAR(beside.latency, p.latency, 1e-6);
  EXPECT_EQ(alone.residuals.size(), static_cast<std::size_t>(alone.points));
  // The minibatch loads, all without compute beside them.
  EXPECT_NEAR(m.link(false).bandwidth, p.alone_bps, 0.01 * p.alone_bps);
  EXPECT_NEAR(m.link(false).latency, p.latency, 1e-6);
  EXPECT_EQ(beside.residuals.size(), static_cast<std::size_t>(beside.points));
  // The curves are fitted to the steps without what the copies added: the slowed samples do not
  // pull them up.
  const Estimate e = m.step(c.net, c.costs, c.gmap.step_layer[2], StepKind::Forward, 2);
  EXPECT_NEAR(e.seconds, 2e-3 + 2 * 50e-6, 1e-6);
}

TEST(Contention, ACopyDueInAHandOffThatStartedDuringTheStepCountsAsOneThatDidNotBlock) {
  const Chain c;
  Planted p;
  p.deferred = true;
  p.beside_bps = p.alone_bps;  // a deferred copy takes as long as one that blocked
  const PerfModel m = PerfModel::fit(plantedRun(c, p));
  // Per k and step 3, 7, 11: a copy that started in the hand-off and blocked it (iteration 1)
  // and one of the same size due there that started inside the step (iteration 3), which waited
  // nothing. At each size the mean wait is half the planted one: the fit is that mean.
  const ProportionalFit& f = m.contention().copy_start_block;
  EXPECT_EQ(f.points, 18);
  EXPECT_EQ(f.outliers, 0);
  EXPECT_NEAR(f.slope, p.copy_start_block / 2, 1e-3);
  EXPECT_NEAR(f.intercept, static_cast<double>(p.copy_start_wait_ns) * 1e-9 / 2, 1e-8);
  const double d = static_cast<double>(p.dispatch_ns) * 1e-9;
  // Those hand-offs were plain ones too: the hand-off and the other fits stand.
  EXPECT_NEAR(m.dispatch().seconds, d, 1e-12);
  EXPECT_NEAR(m.contention().start_block.slope, p.start_block, 1e-3);
  EXPECT_NEAR(m.contention().slowdown.slope, p.slowdown, 1e-3);
}

TEST(Contention, CopiesOfAnIterationInASlowPhaseAreLeftOutOfTheCopyLines) {
  const Chain c;
  Planted p;
  p.slow_phase = 3;  // k = 2's iteration 1: every copy three times as long
  const PerfModel m = PerfModel::fit(plantedRun(c, p));
  EXPECT_NEAR(m.link(true).bandwidth, p.alone_bps, 0.01 * p.alone_bps);
  EXPECT_NEAR(m.link(true).latency, p.latency, 1e-6);
  EXPECT_NEAR(m.linkBesideCompute(true).bandwidth, p.beside_bps, 0.01 * p.beside_bps);
  // Left out of the copy lines only: its steps' waits for those copies are still fitted.
  EXPECT_NEAR(m.contention().start_block.slope, p.start_block, 1e-3);
  EXPECT_NEAR(m.contention().copy_start_block.slope, p.copy_start_block, 1e-3);
  // Half again as slow is the least a slow phase is: at 1.4 times its copies stay in.
  p.slow_phase = 1.4;
  const PerfModel kept = PerfModel::fit(plantedRun(c, p));
  EXPECT_GT(kept.link(true).points, m.link(true).points);
}

TEST(Contention, AHandOffAfterAWaitIsFittedApartFromThePlainOne) {
  const Chain c;
  Planted p;
  p.woken_ns = 50'000;
  const PerfModel m = PerfModel::fit(plantedRun(c, p));
  ASSERT_TRUE(m.dispatch().present);
  // Steps 5 and 10 of the copy-free iteration, at each of 3 minibatches.
  EXPECT_EQ(m.dispatch().woken_points, 6);
  EXPECT_NEAR(m.dispatch().woken_seconds, 50e-6, 1e-12);
  EXPECT_NEAR(m.dispatch().seconds, 20e-6, 1e-12);
}

TEST(Contention, AHandOffLongInOneIterationOfAStepIsPreemptionAndLeftOut) {
  const Chain c;
  Planted p;
  p.late_ns = 1'000'000;
  const PerfModel m = PerfModel::fit(plantedRun(c, p));
  ASSERT_TRUE(m.dispatch().present);
  // Steps 4, 8 and 12 wait 1 ms longer in the copy-free iteration only, and keep the planted
  // 20 us in the other iterations at each minibatch: the other work on the machine, not the
  // step's hand-off, so the fit is the planted one.
  EXPECT_NEAR(m.dispatch().seconds, 20e-6, 1e-12);
  EXPECT_NEAR(m.dispatch().median, 20e-6, 1e-12);
  // Every gap keeps its residual against the fit: the 9 long ones are 1 ms above it.
  ASSERT_EQ(m.dispatch().residuals.size(), static_cast<std::size_t>(m.dispatch().points));
  EXPECT_EQ(std::count_if(m.dispatch().residuals.begin(), m.dispatch().residuals.end(),
                          [&](double r) { return std::abs(r + 20e-6 - 1020e-6) < 1e-12; }),
            9);
}

TEST(Contention, AHandOffLongAtAStepInEveryIterationCounts) {
  const Chain c;
  Planted p;
  p.late_ns = 1'000'000;
  p.late_always = true;
  const PerfModel m = PerfModel::fit(plantedRun(c, p));
  ASSERT_TRUE(m.dispatch().present);
  // Steps 2..2N follow a step in the same iteration; of them, the multiples of 4 take 1 ms more
  // every time, so their median gap is 1.02 ms and the mean over the steps carries them.
  const int steps = 2 * c.gmap.forward_steps - 1;
  int late = 0;
  for (int s = 2; s <= 2 * c.gmap.forward_steps; ++s)
    late += s % 4 == 0;
  ASSERT_GT(late, 0);
  EXPECT_NEAR(m.dispatch().seconds, 20e-6 + late * 1e-3 / steps, 1e-12);
}

TEST(Contention, CopiesBesideComputeOfOneSizeLetTheOtherLineStandIn) {
  // A line through copies of one size has no slope: its bandwidth would come out 0, which
  // times every copy as its latency. The copies without compute beside them stand in.
  const Chain c;
  Planted p;
  p.beside_one_size = true;
  const PerfModel m = PerfModel::fit(plantedRun(c, p));
  const LinkFit& alone = m.link(true);
  const LinkFit& beside = m.linkBesideCompute(true);
  EXPECT_NEAR(alone.bandwidth, p.alone_bps, 0.01 * p.alone_bps);
  EXPECT_EQ(beside.bandwidth, alone.bandwidth);
  EXPECT_EQ(beside.latency, alone.latency);
  EXPECT_GT(m.transfer(1e6, true, true), m.transfer(1e5, true, true));
}

TEST(Contention, AVersion1RunHasNoTimelineFits) {
  const Chain c;
  store::RunData run = plantedRun(c, Planted{});
  run.schema_version = 1;
  for (auto& s : run.samples) {
    s.ready_ns = -1;
    s.copy_overlap_ns = -1;
  }
  const PerfModel m = PerfModel::fit(run);
  EXPECT_FALSE(m.dispatch().present);
  EXPECT_FALSE(m.contention().present);
  EXPECT_EQ(m.dispatch().seconds, 0.0);
  EXPECT_EQ(m.contention().slowdown.slope, 0.0);
  EXPECT_EQ(m.contention().start_block.slope, 0.0);
}

// The stall metrics run reports: stalled steps as sets per iteration (stall > 1 % of that
// iteration's t_iter), their precision, recall and F1 as medians over the iterations, the steps
// stalled in most iterations, and the start error per step against the median measured start.
TEST(StallMetrics, SetsScoresAndStartErrorsByHand) {
  // Predicted: t_iter 1 s; stalls 0.5, 0, 0.02, 0.005 s: stalled {1, 3} (0.005 <= 1 % of 1 s).
  const std::vector<double> stall{0, 0.5, 0, 0.02, 0.005};
  const std::vector<double> start{0, 0.1, 0.5, 0.7, 0.9};
  std::vector<MeasuredIteration> it(3);
  // {1, 4}: precision 1/2, recall 1/2, F1 1/2; total 0.43 s.
  it[0] = {1.0, {0, 0.4, 0, 0, 0.03}, {0, 0.1, 0.6, 0.72, 0.95}};
  // t_iter 2 s, so the threshold is 0.02 s: {1, 3}: all 1; total 0.43 s.
  it[1] = {2.0, {0, 0.4, 0, 0.03, 0}, {0, 0.1, 0.6, 0.75, 0.9}};
  // {1, 2, 3}: precision 1, recall 2/3, F1 0.8; total 0.34 s.
  it[2] = {1.0, {0, 0.3, 0.02, 0.02, 0}, {0, 0.1, 0.7, 0.7, 1.0}};
  const StallMetrics m = compareStalls(1.0, stall, start, it);
  EXPECT_EQ(m.iterations, 3);
  EXPECT_NEAR(m.stall_predicted, 0.525, 1e-12);
  EXPECT_NEAR(m.stall_measured, 0.43, 1e-12);
  EXPECT_EQ(m.predicted_stalled, (std::vector<int>{1, 3}));
  EXPECT_EQ(m.measured_stalled, (std::vector<int>{1, 3}));  // step 1 in 3, step 3 in 2 of 3
  EXPECT_NEAR(m.precision, 1.0, 1e-12);
  EXPECT_NEAR(m.recall, 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(m.f1, 0.8, 1e-12);
  // Median measured starts 0.1, 0.6, 0.72, 0.95: errors 0, 0.1, 0.02, 0.05.
  ASSERT_TRUE(m.has_starts);
  EXPECT_NEAR(m.start_error_max, 0.1, 1e-12);
  EXPECT_EQ(m.start_error_worst_step, 2);
  EXPECT_NEAR(m.start_error_median, 0.035, 1e-12);
}

TEST(StallMetrics, NoStallPredictedOrMeasuredAgreesPerfectly) {
  const std::vector<double> stall{0, 0.001, 0.001};  // below 1 % of 1 s
  std::vector<MeasuredIteration> it{{1.0, {0, 0.002, 0.0}, {}}};
  const StallMetrics m = compareStalls(1.0, stall, {}, it);
  EXPECT_TRUE(m.predicted_stalled.empty());
  EXPECT_TRUE(m.measured_stalled.empty());
  EXPECT_EQ(m.f1, 1.0);
  EXPECT_FALSE(m.has_starts);
  // Stall predicted where none is measured scores 0.
  const StallMetrics wrong = compareStalls(1.0, {0, 0.5, 0}, {}, it);
  EXPECT_EQ(wrong.precision, 0.0);
  EXPECT_EQ(wrong.recall, 1.0);
  EXPECT_EQ(wrong.f1, 0.0);
}

}  // namespace
}  // namespace swapscope::perf
