// SPDX-License-Identifier: MIT
// Picking a recorded iteration as `swapscope trace` and the app's Timeline do, on a sample run.
#include "store/chrome_trace.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/error.h"
#include "sample_runs.h"

namespace swapscope::store {
namespace {

const std::string kFmnist = swapscope::testing::fmnistRun();

TEST(RecordedIteration, LargestKAndTheIterationAsRecorded) {
  const RunData run = RunReader(kFmnist).load();
  // sample_runs/README.md: k = 12, 24, 47, 63, 94, five recorded iterations each.
  EXPECT_EQ(largestRecordedK(run), 94);
  const IterationRow& it = recordedIteration(run, 47, 3);
  EXPECT_EQ(it.k, 47);
  EXPECT_EQ(it.iteration, 3);
  EXPECT_GT(it.duration_ns, 0);
}

TEST(RecordedIteration, AnUnrecordedKOrIterationNamesTheFileAndTheKsRecorded) {
  const RunData run = RunReader(kFmnist).load();
  for (const auto& [k, iteration] : {std::pair<std::int64_t, int>{7, 0}, {94, 5}}) {
    try {
      recordedIteration(run, k, iteration);
      ADD_FAILURE() << "k = " << k << ", iteration " << iteration << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      const std::string m = e.what();
      EXPECT_NE(m.find(kFmnist), std::string::npos) << m;
      EXPECT_NE(m.find("recorded k: 12, 24, 47, 63, 94"), std::string::npos) << m;
    }
  }
  // An iteration past those recorded at a k that was recorded: which ones there are.
  try {
    recordedIteration(run, 94, 5);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("; at k = 94 it holds iterations 0 to 4)"),
              std::string::npos)
        << e.what();
  }
  // chromeTrace refuses with the same message.
  EXPECT_THROW(chromeTrace(run, 7, 0), Error);
}

TEST(RecordedIteration, ARunWithoutIterationsHasNoLargestK) {
  RunData run;
  run.path = "empty.swapdb";
  try {
    largestRecordedK(run);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_EQ(std::string(e.what()), "'empty.swapdb' holds no recorded iterations");
  }
}

/// An iteration of 1000 ns at k = 8: step 2 (fwd) runs 100..300; step 3 (bwd) re-makes layer 1
/// at 400..450 and then runs 500..600, its stall of 150 ns the gaps 300..400 and 450..500.
RunData iterationWithARecompute() {
  RunData run;
  run.path = "synthetic.swapdb";
  run.network.name = "net";
  run.iterations = {{8, 0, 0, 1000, 1.0, 150, 0, 0, 0}};
  run.samples = {{8, 0, 2, 2, Direction::Forward, 10, 100, 200, 0},
                 {8, 0, 3, 2, Direction::Backward, 10, 500, 100, 150}};
  run.recomputes = {{8, 0, 3, 1, 10, 400, 50}};
  return run;
}

TEST(ChromeTrace, AStallBeforeARecomputedStepLiesInTheGapsAroundTheRecompute) {
  const RunData run = iterationWithARecompute();
  const auto remakes = recomputeSpans(run, 8, 0);
  ASSERT_EQ(remakes.count(3), 1u);
  const std::vector<Span> spans = stallSpans(run.samples[1], remakes, 0);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].start_ns, 300);
  EXPECT_EQ(spans[0].end_ns, 400);
  EXPECT_EQ(spans[1].start_ns, 450);
  EXPECT_EQ(spans[1].end_ns, 500);
  // Without recomputes, one span ending at the step's start.
  const std::vector<Span> plain = stallSpans(run.samples[1], {}, 0);
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].start_ns, 350);
  EXPECT_EQ(plain[0].end_ns, 500);
  // None starts before the iteration's start (an older sub-batched file's summed stall laid
  // before an earlier pass): the span across it is cut there, one before it is left out.
  const std::vector<Span> fromMiddle = stallSpans(run.samples[1], remakes, 420);
  ASSERT_EQ(fromMiddle.size(), 1u);
  EXPECT_EQ(fromMiddle[0].start_ns, 450);
  EXPECT_EQ(fromMiddle[0].end_ns, 500);
  const std::vector<Span> cut = stallSpans(run.samples[1], {}, 400);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].start_ns, 400);
  EXPECT_EQ(cut[0].end_ns, 500);

  // The trace's compute thread: no two slices overlap, and the stall slices add up to 150 ns.
  const auto trace = chromeTrace(run, 8, 0);
  std::vector<std::pair<double, double>> slices;
  double stall = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") != "X" || e.value("tid", -1) != 1) continue;
    const double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
    slices.emplace_back(ts, ts + dur);
    if (e["name"] == "stall") stall += dur;
  }
  EXPECT_DOUBLE_EQ(stall, 0.150);  // microseconds
  std::sort(slices.begin(), slices.end());
  ASSERT_EQ(slices.size(), 5u);  // two steps, a recompute, two stall slices
  for (std::size_t i = 1; i < slices.size(); ++i)
    EXPECT_LE(slices[i - 1].second, slices[i].first + 1e-9) << i;
}

}  // namespace
}  // namespace swapscope::store
