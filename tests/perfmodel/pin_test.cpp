// SPDX-License-Identifier: MIT
// accudnn's pins, simulated: a pinned FM moves nothing, beside compute or not.
#include <gtest/gtest.h>

#include <algorithm>

#include "graph/zoo.h"
#include "perfmodel/planner.h"
#include "sample_runs.h"
#include "store/run_db.h"

namespace swapscope::perf {
namespace {

PerfModel resnet56SampleModel() {
  return PerfModel::fit(store::RunReader(swapscope::testing::resnet56Run()).load());
}

/// With a budget that holds keep-all, phase 1 alone (no keeping of what fits) must pin FMs of
/// stalled steps and remove stall. Copies beside compute have their own fitted rate; a pin
/// that zeroed only the rate without compute left those copies in place, and phase 1 then
/// found no pin that helped.
TEST(AccudnnPins, WhereEveryFmFitsPhaseOneRemovesTheStall) {
  const PerfModel model = resnet56SampleModel();
  const Network net = buildZooModel("resnet56");
  const Planner planner(model, net);
  // From k = 64 on, swap-all's stall is prefetches late for the backward steps, which phase 1
  // pins. At k = 16 it is mostly steps waiting for an offload running when they could start
  // (the sample's fitted start block is 1): phase 1 takes its candidates from the prefetches of
  // stalled steps and removes little of it, and phase 2 keeps those FMs (AccudnnPins.
  // KeepingWhatFitsRemovesTheStallThatOffloadsCause).
  for (const std::int64_t k : {64, 128}) {
    const std::int64_t budget = std::int64_t{4} << 30;  // keep-all fits many times over
    const auto swapAll =
        planner.evaluate(k, makeSwapSet(Policy::SwapAll, net, planner.costs()), budget);
    const auto keepAll =
        planner.evaluate(k, makeSwapSet(Policy::KeepAll, net, planner.costs()), budget);
    ASSERT_TRUE(swapAll && keepAll);
    const auto pinned = planner.accudnnAt(k, budget, -1, nullptr, /*keep_what_fits=*/false);
    ASSERT_TRUE(pinned);
    SCOPED_TRACE("k = " + std::to_string(k));
    ASSERT_GT(swapAll->sim.removableStall(), 0)
        << "swap-all must stall here for the test to mean much";
    // Pins were taken, and they removed most of the stall (the greedy stops when none of the
    // stalled steps' FMs helps; the rest is the exact plan's own schedule).
    const auto swappedFms = std::count(pinned->swapped.begin(), pinned->swapped.end(), true);
    EXPECT_LT(swappedFms, std::count(swapAll->swapped.begin(), swapAll->swapped.end(), true));
    EXPECT_LT(pinned->sim.removableStall(), 0.5 * swapAll->sim.removableStall());
    EXPECT_LT(pinned->sim.t_iter, swapAll->sim.t_iter);
  }
}

TEST(AccudnnPins, KeepingWhatFitsRemovesTheStallThatOffloadsCause) {
  const PerfModel model = resnet56SampleModel();
  const Network net = buildZooModel("resnet56");
  const Planner planner(model, net);
  const std::int64_t k = 16, budget = std::int64_t{4} << 30;
  const auto swapAll =
      planner.evaluate(k, makeSwapSet(Policy::SwapAll, net, planner.costs()), budget);
  const auto keepAll =
      planner.evaluate(k, makeSwapSet(Policy::KeepAll, net, planner.costs()), budget);
  const auto whole = planner.accudnnAt(k, budget, -1, nullptr, /*keep_what_fits=*/true);
  ASSERT_TRUE(swapAll && keepAll && whole);
  ASSERT_GT(swapAll->sim.removableStall(), 0.001)
      << "swap-all must stall for the test to mean much";
  EXPECT_LT(whole->sim.removableStall(), 0.1 * swapAll->sim.removableStall());
  EXPECT_LE(whole->sim.t_iter, keepAll->sim.t_iter * (1 + 1e-9));
}

}  // namespace
}  // namespace swapscope::perf
