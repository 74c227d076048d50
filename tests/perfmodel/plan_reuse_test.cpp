// SPDX-License-Identifier: MIT
// A Planner keeps accudnn's plans at one k with the window of budgets each holds for, and reuses
// them for later budgets of that window. A plan made from kept plans must equal, to the bit, the
// plan of a planner that has planned nothing before.
#include <gtest/gtest.h>

#include <cmath>

#include "graph/zoo.h"
#include "perfmodel/planner.h"
#include "sample_runs.h"
#include "store/run_db.h"

namespace swapscope::perf {
namespace {

const PerfModel& sampleModel() {
  static const PerfModel model =
      PerfModel::fit(store::RunReader(swapscope::testing::resnet56Run()).load());
  return model;
}

void expectSamePlan(const PlanResult& cold, const PlanResult& warm) {
  ASSERT_EQ(cold.trainable, warm.trainable);
  EXPECT_EQ(cold.reason, warm.reason);
  EXPECT_EQ(cold.evaluated, warm.evaluated);
  if (!cold.trainable) return;
  EXPECT_EQ(cold.best.k, warm.best.k);
  EXPECT_EQ(cold.best.swapped, warm.best.swapped);
  EXPECT_EQ(cold.best.reuse_delay, warm.best.reuse_delay);
  EXPECT_EQ(cold.best.peak, warm.best.peak);
  EXPECT_EQ(cold.best.sim.t_iter, warm.best.sim.t_iter);
  EXPECT_EQ(cold.best.sim.stall, warm.best.sim.stall);
  EXPECT_EQ(cold.best.sim.stalled_steps(), warm.best.sim.stalled_steps());
  EXPECT_EQ(cold.best.bytesMoved(), warm.best.bytesMoved());
}

// A drag of the budget up and back down, in steps fine enough that neighbouring budgets share
// most k plans, and coarse jumps: every plan equals a cold planner's, and kept plans are used.
TEST(PlanReuse, PlansFromKeptPlansEqualPlansMadeAfresh) {
  for (const auto& [name, lo, hi] :
       {std::tuple<std::string, double, double>{"resnet56", 40.0 * (1 << 20), 90.0 * (1 << 20)},
        {"resnet152", 6.0 * (1 << 30), 9.0 * (1 << 30)}}) {
    const Network net = buildZooModel(name);
    const Planner warm(sampleModel(), net);
    std::vector<std::int64_t> budgets;
    constexpr int kSteps = 9;
    for (int i = 0; i <= kSteps; ++i)
      budgets.push_back(static_cast<std::int64_t>(lo * std::pow(hi / lo, i / double(kSteps))));
    for (int i = kSteps; i >= 0; i -= 3)  // back down, to budgets planned before and between
      budgets.push_back(static_cast<std::int64_t>(lo * std::pow(hi / lo, i / double(kSteps))) + 1);
    int reused = 0;
    for (const std::int64_t budget : budgets) {
      for (const std::int64_t dataset : {std::int64_t{0}, std::int64_t{50000}}) {
        PlanRequest r;
        r.policy = Policy::AccUdnn;
        r.budget = budget;
        r.dataset_size = dataset;
        r.threads = 1;
        SCOPED_TRACE(name + " at " + std::to_string(budget) +
                     " bytes, m = " + std::to_string(dataset));
        const PlanResult cold = Planner(sampleModel(), net).plan(r);
        EXPECT_EQ(cold.reused, 0);
        const PlanResult kept = warm.plan(r);
        expectSamePlan(cold, kept);
        reused += kept.reused;
      }
    }
    // The check above would pass with nothing kept: the plans must have been reused too.
    EXPECT_GT(reused, static_cast<int>(budgets.size())) << name;
  }
}

// Budgets from the least that trains up, where k_max is small and every k is planned, then the
// same range in a shuffled order: each budget's k plans are new (their windows do not reach it),
// and phase 1 replays the pin rounds of the k plans of other budgets, up and down, as far as
// their comparisons with the budget come out the same. Every plan equals a cold planner's, under
// both policies whose k search pins.
TEST(PlanReuse, PinRoundsReplayedFromOtherBudgetsGiveTheSamePlans) {
  const Network net = buildZooModel("resnet56");
  const Planner warm(sampleModel(), net);
  const double lo = static_cast<double>(warm.minBudget());
  constexpr int kBudgets = 12;
  std::vector<std::int64_t> budgets;
  for (int i = 0; i < kBudgets; ++i)
    budgets.push_back(static_cast<std::int64_t>(lo * std::pow(3.0, i / double(kBudgets - 1))));
  for (int i = 0; i < kBudgets; ++i)  // 5 is prime to 12: every budget again, in jumps
    budgets.push_back(budgets[static_cast<std::size_t>(i * 5 % kBudgets)] + 4096);
  for (const std::int64_t budget : budgets) {
    for (const Policy policy : {Policy::AccUdnn, Policy::Ito}) {
      PlanRequest r;
      r.policy = policy;
      r.budget = budget;
      r.threads = 1;
      SCOPED_TRACE(std::string(policyName(policy)) + " at " + std::to_string(budget) + " bytes");
      expectSamePlan(Planner(sampleModel(), net).plan(r), warm.plan(r));
    }
  }
  EXPECT_GT(warm.pinRoundsReplayed(), 0u);
}

// Phase 1 replays the trace, of those kept at a k from other budgets, that holds the longest: a
// plan at another budget (here a tighter one, whose pin rounds part from the first budget's
// early), made before or after the first budget, takes nothing from what a later budget near the
// first replays. The plans equal a cold planner's either way.
TEST(PlanReuse, APlanAtAnotherBudgetLeavesTheRoundsOfTheNearestOne) {
  const Network net = buildZooModel("resnet56");
  const double lo = static_cast<double>(Planner(sampleModel(), net).minBudget());
  const auto at = [&](double step) {
    PlanRequest r;
    r.budget = static_cast<std::int64_t>(lo * std::pow(3.0, step / 11.0));
    r.threads = 1;
    return r;
  };
  // Alone: the budget at step 6, then one half a step above.
  const Planner alone(sampleModel(), net);
  alone.plan(at(6));
  const std::uint64_t before = alone.pinRoundsReplayed();
  const PlanResult near = alone.plan(at(6.5));
  const std::uint64_t replayedAlone = alone.pinRoundsReplayed() - before;
  EXPECT_GT(replayedAlone, 0u);
  expectSamePlan(Planner(sampleModel(), net).plan(at(6.5)), near);
  for (const double other : {3.0, 4.0}) {
    for (const bool otherFirst : {false, true}) {
      SCOPED_TRACE("the other budget at step " + std::to_string(other) +
                   (otherFirst ? ", planned first" : ", planned second"));
      const Planner warm(sampleModel(), net);
      warm.plan(at(otherFirst ? other : 6));
      warm.plan(at(otherFirst ? 6 : other));
      const std::uint64_t beforeNear = warm.pinRoundsReplayed();
      const PlanResult nearAfter = warm.plan(at(6.5));
      EXPECT_GE(warm.pinRoundsReplayed() - beforeNear, replayedAlone);
      expectSamePlan(near, nearAfter);
    }
  }
}

// accudnn at one k, with and without phase 2, on a planner that planned neighbouring budgets.
TEST(PlanReuse, AccudnnAtOneKEqualsAFreshPlanner) {
  const Network net = buildZooModel("resnet56");
  const Planner warm(sampleModel(), net);
  for (const std::int64_t k : {8, 32, 64}) {
    for (const bool keep : {false, true}) {
      for (const std::int64_t mib : {40, 41, 48, 47, 64, 40}) {
        const std::int64_t budget = mib << 20;
        SCOPED_TRACE("k = " + std::to_string(k) + " at " + std::to_string(mib) + " MiB" +
                     (keep ? ", phase 2" : ""));
        int coldCount = 0, warmCount = 0;
        const auto cold = Planner(sampleModel(), net).accudnnAt(k, budget, -1, &coldCount, keep);
        const auto kept = warm.accudnnAt(k, budget, -1, &warmCount, keep);
        ASSERT_EQ(cold.has_value(), kept.has_value());
        EXPECT_EQ(coldCount, warmCount);
        if (!cold) continue;
        EXPECT_EQ(cold->swapped, kept->swapped);
        EXPECT_EQ(cold->reuse_delay, kept->reuse_delay);
        EXPECT_EQ(cold->sim.t_iter, kept->sim.t_iter);
      }
    }
  }
}

}  // namespace
}  // namespace swapscope::perf
