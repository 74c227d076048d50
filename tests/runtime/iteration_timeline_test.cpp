// SPDX-License-Identifier: MIT
// fillTimeline on hand-made timings: no device, the stalls worked out by hand.
#include "runtime/iteration_timeline.h"

#include <gtest/gtest.h>

namespace swapscope::rt {
namespace {

TaskTiming task(StreamKind stream, std::uint64_t seq, TaskKind kind, int step, std::int64_t start,
                std::int64_t end, int pass = 0) {
  TaskTiming t;
  t.stream = stream;
  t.seq = seq;
  t.tag.kind = kind;
  t.tag.step = step;
  t.tag.sub_batch = pass;
  t.start_ns = start;
  t.end_ns = end;
  return t;
}

IterationRecord emptyRecord(int forwardSteps, int passes, std::int64_t start,
                            std::int64_t duration) {
  IterationRecord rec;
  rec.sub_batches = passes;
  rec.start_ns = start;
  rec.duration_ns = duration;
  rec.stall_ns.assign(static_cast<std::size_t>(2 * forwardSteps + 1), 0);
  rec.pass_stall_ns.assign(static_cast<std::size_t>(passes * (2 * forwardSteps + 1)), 0);
  return rec;
}

TEST(IterationTimeline, StallsAreTheComputeStreamsIdleGapsBeforeEachStep) {
  // One forward and one backward step (N = 1), the iteration starting at 1000 ns on the device's
  // clock. Given out of order: fillTimeline sorts by start.
  IterationRecord rec = emptyRecord(1, 1, 1000, 1000);
  IterationTimings t;
  t.tasks = {
      task(StreamKind::Compute, 3, TaskKind::Update, 3, 1800, 1900),
      task(StreamKind::SwapIn, 1, TaskKind::Prefetch, 2, 1200, 1500),
      task(StreamKind::Compute, 2, TaskKind::Compute, 2, 1600, 1800),
      task(StreamKind::Compute, 1, TaskKind::Compute, 1, 1100, 1300),
  };
  t.in_use = {{2, 8192}, {1, 4096}};
  t.step_wait.assign(3, Fence{});
  t.step_wait[2][static_cast<int>(StreamKind::SwapIn)] = 1;  // step 2 waited on the prefetch
  t.in_use_at_end = 512;
  fillTimeline(rec, 1, std::move(t));

  // Step 1: idle from the start (1000) to 1100. Step 2: from step 1's end (1300) to 1600; the
  // prefetch on the other stream does not count. The update (step 3) is no compute step.
  EXPECT_EQ(rec.stall_ns, (std::vector<std::int64_t>{0, 100, 300}));
  EXPECT_EQ(rec.pass_stall_ns, rec.stall_ns);
  EXPECT_EQ(rec.stall_total_ns, 400);
  ASSERT_EQ(rec.ops.size(), 4u);
  EXPECT_EQ(rec.ops[0].step, 1);
  EXPECT_EQ(rec.ops[0].start_ns, 100);
  EXPECT_EQ(rec.ops[0].end_ns, 300);
  EXPECT_EQ(rec.ops[1].kind, TaskKind::Prefetch);
  EXPECT_EQ(rec.ops[1].stream, StreamKind::SwapIn);
  EXPECT_EQ(rec.ops[1].start_ns, 200);
  EXPECT_EQ(rec.ops[3].kind, TaskKind::Update);
  EXPECT_EQ(rec.ops[3].end_ns, 900);
  // The pool as each compute step starts, then at the end.
  ASSERT_EQ(rec.pool.size(), 3u);
  EXPECT_EQ(rec.pool[0].time_ns, 100);
  EXPECT_EQ(rec.pool[0].in_use, 4096);
  EXPECT_EQ(rec.pool[1].time_ns, 600);
  EXPECT_EQ(rec.pool[1].in_use, 8192);
  EXPECT_EQ(rec.pool[2].time_ns, 1000);
  EXPECT_EQ(rec.pool[2].in_use, 512);
  // t_ready of step 2: the prefetch's end, 1500 - 1000.
  EXPECT_EQ(rec.ready_ns, (std::vector<std::int64_t>{0, 0, 500}));
}

TEST(IterationTimeline, SubBatchPassesAndRecomputesShareTheirSteps) {
  // N = 1, two passes, the iteration starting at 0. Pass 1 recomputes before its step 2.
  IterationRecord rec = emptyRecord(1, 2, 0, 60);
  IterationTimings t;
  t.tasks = {
      task(StreamKind::Compute, 1, TaskKind::Compute, 1, 10, 20, 0),
      task(StreamKind::Compute, 2, TaskKind::Compute, 2, 20, 30, 0),
      task(StreamKind::Compute, 3, TaskKind::Compute, 1, 35, 45, 1),
      task(StreamKind::Compute, 4, TaskKind::Recompute, 2, 50, 55, 1),
      task(StreamKind::Compute, 5, TaskKind::Compute, 2, 55, 60, 1),
  };
  t.step_wait.assign(6, Fence{});
  fillTimeline(rec, 1, std::move(t));

  // Pass 0: step 1 idle 0..10, step 2 none. Pass 1: step 1 idle 30..35, step 2 idle 45..50
  // before its recompute and none before its compute.
  EXPECT_EQ(rec.stall_ns, (std::vector<std::int64_t>{0, 15, 5}));
  EXPECT_EQ(rec.pass_stall_ns, (std::vector<std::int64_t>{0, 10, 0, 0, 5, 5}));
  EXPECT_EQ(rec.stall_total_ns, 20);
  // No in-use samples were given: only the end's.
  ASSERT_EQ(rec.pool.size(), 1u);
  EXPECT_EQ(rec.pool[0].time_ns, 60);
  EXPECT_EQ(rec.ready_ns, std::vector<std::int64_t>(6, 0));
}

}  // namespace
}  // namespace swapscope::rt
