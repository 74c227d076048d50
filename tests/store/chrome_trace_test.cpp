// SPDX-License-Identifier: MIT
// Picking a recorded iteration as `swapscope trace` and the app's Timeline do, on a sample run.
#include "store/chrome_trace.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace swapscope::store
