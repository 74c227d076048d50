// SPDX-License-Identifier: MIT
// The argmin search simulates several k values at once; the plan and its simulation count must
// be those of one thread.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "graph/zoo.h"
#include "perfmodel/planner.h"
#include "sample_runs.h"
#include "store/run_db.h"

namespace swapscope::perf {
namespace {

/// The model fitted to the resnet56 sample, fitted once.
const PerfModel& resnet56Model() {
  static const PerfModel model =
      PerfModel::fit(store::RunReader(swapscope::testing::resnet56Run()).load());
  return model;
}

TEST(PlannerThreads, SamePlanAndCountOnAnyNumberOfThreads) {
  const PerfModel& model = resnet56Model();
  // resnet56 as profiled, and ResNet-152 with the curves transferred (a wide k range whose
  // search stops before the last k); ResNet-50 near its minimum, where plans that bound the
  // search over k do not run, and k values pruned by them are searched after all (settle()).
  constexpr std::int64_t kMiB = std::int64_t{1} << 20;
  int compared = 0;
  for (const auto& [name, budgets] :
       {std::pair<std::string, std::vector<std::int64_t>>{
            "resnet56", {24 * kMiB, 40 * kMiB, 64 * kMiB, 256 * kMiB}},
        {"resnet152", {3072 * kMiB, 8192 * kMiB}},
        {"resnet50", {332'598'752, 347'215'950}}}) {
    const Network net = buildZooModel(name);
    // A planner per thread count: one planner would take the later plans from the plans it
    // kept (perfmodel/planner.h), and the threads would simulate nothing.
    const Planner planner(model, net);
    std::vector<std::unique_ptr<const Planner>> others;
    for (int i = 0; i < 3; ++i)
      others.push_back(std::make_unique<const Planner>(model, net));
    bool firstPlan = true;
    for (const Policy policy : {Policy::AccUdnn, Policy::SwapAll}) {
      for (const std::int64_t bytes : budgets) {
        for (const std::int64_t dataset : {std::int64_t{0}, std::int64_t{50000}}) {
          PlanRequest r;
          r.policy = policy;
          r.budget = bytes;
          r.dataset_size = dataset;
          r.threads = 1;
          const PlanResult one = planner.plan(r);
          const bool first = std::exchange(firstPlan, false);
          for (std::size_t i = 0; i < others.size(); ++i) {
            const int threads = std::array{2, 3, 8}[i];
            r.threads = threads;
            const PlanResult many = others[i]->plan(r);
            SCOPED_TRACE(name + ", " + std::string(policyName(policy)) + " at " +
                         std::to_string(bytes) + " bytes on " + std::to_string(threads) +
                         " threads");
            ASSERT_EQ(one.trainable, many.trainable);
            EXPECT_EQ(one.evaluated, many.evaluated);
            // A planner's first plan reuses nothing, on any number of threads (later ones take
            // what earlier plans made, and threads make k plans one thread would not).
            if (first) {
              EXPECT_EQ(one.reused, 0);
              EXPECT_EQ(many.reused, 0);
            }
            if (!one.trainable) continue;
            EXPECT_EQ(one.best.k, many.best.k);
            EXPECT_EQ(one.best.swapped, many.best.swapped);
            EXPECT_EQ(one.best.sim.t_iter, many.best.sim.t_iter);
            EXPECT_EQ(one.best.peak, many.best.peak);
            ++compared;
          }
        }
      }
    }
  }
  EXPECT_GE(compared, 40);
}

// A pause point (the app's background sweep waits there while the user's plan runs) is called
// between the search's pieces of work, on the threads doing them, and a pause there changes
// nothing: the plan and its count are those of a plan without one.
TEST(PlannerThreads, APausePointIsCalledBetweenPiecesOfWorkAndChangesNothing) {
  const PerfModel& model = resnet56Model();
  const Network net = buildZooModel("resnet56");
  for (const int threads : {1, 2}) {
    PlanRequest r;
    r.budget = std::int64_t{40} << 20;
    r.threads = threads;
    const PlanResult plain = Planner(model, net).plan(r);
    std::atomic<int> calls{0};
    r.pause_point = [&calls] {
      ++calls;
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    };
    const PlanResult paused = Planner(model, net).plan(r);
    SCOPED_TRACE(std::to_string(threads) + " threads");
    ASSERT_TRUE(plain.trainable);
    ASSERT_TRUE(paused.trainable);
    EXPECT_EQ(plain.evaluated, paused.evaluated);
    EXPECT_EQ(plain.best.k, paused.best.k);
    EXPECT_EQ(plain.best.swapped, paused.best.swapped);
    EXPECT_EQ(plain.best.sim.t_iter, paused.best.sim.t_iter);
    // At least once per k simulated: resnet56's search at 40 MiB simulates several.
    EXPECT_GT(calls.load(), 3);
  }
}

// A sweep plans several budgets at once on one planner (the Trade-off view's); each outcome
// must be the plan a planner of its own makes of that budget, whatever the lanes and the order
// the budgets were taken in. Below the minimum budget nothing trains, and says why.
TEST(PlannerThreads, ASweepOnSeveralLanesGivesEachBudgetThePlanItHasAlone) {
  const PerfModel& model = resnet56Model();
  const Network net = buildZooModel("resnet56");
  const std::int64_t low = Planner(model, net).minBudget();
  std::vector<std::int64_t> budgets{low / 2};
  for (int i = 0; i < 9; ++i)
    budgets.push_back(static_cast<std::int64_t>(static_cast<double>(low) * std::pow(1.6, i)));
  PlanRequest base;
  std::vector<PlanResult> alone;
  for (const std::int64_t b : budgets) {
    PlanRequest r = base;
    r.budget = b;
    r.threads = 1;
    alone.push_back(Planner(model, net).plan(r));
  }
  ASSERT_FALSE(alone.front().trainable);
  ASSERT_TRUE(alone.back().trainable);
  for (const int lanes : {1, 2, 3}) {
    const Planner planner(model, net);
    std::mutex m;
    std::vector<SweepOutcome> outcomes;
    std::vector<std::size_t> order;
    const std::size_t planned = sweep(planner, base, budgets, lanes, [&](SweepOutcome&& o) {
      const std::lock_guard<std::mutex> lock(m);
      order.push_back(o.index);
      outcomes.push_back(std::move(o));
    });
    SCOPED_TRACE(std::to_string(lanes) + " lanes");
    ASSERT_EQ(planned, budgets.size());
    ASSERT_EQ(outcomes.size(), budgets.size());
    if (lanes == 1) {  // one lane plans them in order
      for (std::size_t i = 0; i < order.size(); ++i)
        EXPECT_EQ(order[i], i);
    }
    std::vector<int> seen(budgets.size(), 0);
    for (const SweepOutcome& o : outcomes) {
      ASSERT_LT(o.index, budgets.size());
      ++seen[o.index];
      EXPECT_EQ(o.budget, budgets[o.index]);
      ASSERT_TRUE(o.plan) << o.error;
      const PlanResult& a = alone[o.index];
      const PlanResult& p = *o.plan;
      SCOPED_TRACE("budget " + std::to_string(o.budget));
      ASSERT_EQ(p.trainable, a.trainable);
      EXPECT_EQ(p.evaluated, a.evaluated);
      if (!p.trainable) {
        EXPECT_EQ(p.reason, a.reason);
        continue;
      }
      EXPECT_EQ(p.best.k, a.best.k);
      EXPECT_EQ(p.best.swapped, a.best.swapped);
      EXPECT_EQ(p.best.sim.t_iter, a.best.sim.t_iter);
      EXPECT_EQ(p.best.peak, a.best.peak);
      EXPECT_EQ(p.best.reuse_delay, a.best.reuse_delay);
      EXPECT_EQ(p.best.prefetches_moved, a.best.prefetches_moved);
    }
    EXPECT_EQ(seen, std::vector<int>(budgets.size(), 1));
  }
}

// Once `stop` says so, no lane starts a budget: each lane finishes the one it has.
TEST(PlannerThreads, ASweepStartsNoBudgetOnceToldToStop) {
  const PerfModel& model = resnet56Model();
  const Network net = buildZooModel("resnet56");
  const Planner planner(model, net);
  std::vector<std::int64_t> budgets;
  for (int i = 0; i < 12; ++i)
    budgets.push_back((std::int64_t{24} + 8 * i) << 20);
  for (const int lanes : {1, 2}) {
    std::atomic<int> done{0}, asked{0};
    const std::size_t planned = sweep(
        planner, PlanRequest{}, budgets, lanes, [&](SweepOutcome&&) { ++done; },
        [&] { return ++asked > 3; });
    SCOPED_TRACE(std::to_string(lanes) + " lanes");
    EXPECT_EQ(planned, static_cast<std::size_t>(done.load()));
    // Three answers said go on: three budgets started, and no more.
    EXPECT_EQ(planned, 3u);
  }
}

// Two lanes are two threads planning at once: the first lane to ask `stop` waits until another
// thread asks too (a sweep that ran its lanes one after another would make it wait in vain).
TEST(PlannerThreads, ASweepsLanesPlanAtOnce) {
  const PerfModel& model = resnet56Model();
  const Network net = buildZooModel("resnet56");
  const Planner planner(model, net);
  std::mutex m;
  std::condition_variable cv;
  std::set<std::thread::id> askers;
  const std::vector<std::int64_t> budgets{std::int64_t{32} << 20, std::int64_t{48} << 20};
  const std::size_t planned = sweep(
      planner, PlanRequest{}, budgets, 2, [](SweepOutcome&&) {},
      [&] {
        std::unique_lock<std::mutex> lock(m);
        askers.insert(std::this_thread::get_id());
        cv.notify_all();
        cv.wait_for(lock, std::chrono::seconds(20), [&] { return askers.size() >= 2; });
        return false;
      });
  EXPECT_EQ(planned, budgets.size());
  EXPECT_EQ(askers.size(), 2u);
}

// A `done` that throws ends the sweep: no budget is started after it, and the caller gets the
// exception. A plan() that throws does not. No budgets: nothing is planned, and `done` is never
// called.
TEST(PlannerThreads, ASweepEndsAtAnExceptionOfDoneNotAtAPlansAndPlansNothingWithoutBudgets) {
  const PerfModel& model = resnet56Model();
  const Network net = buildZooModel("resnet56");
  const Planner planner(model, net);
  std::vector<std::int64_t> budgets;
  for (int i = 0; i < 6; ++i)
    budgets.push_back((std::int64_t{24} + 8 * i) << 20);
  int calls = 0;
  EXPECT_THROW(sweep(planner, PlanRequest{}, budgets, 1,
                     [&](SweepOutcome&&) {
                       if (++calls == 2) throw std::runtime_error("the view is gone");
                     }),
               std::runtime_error);
  EXPECT_EQ(calls, 2);
  // A plan() that throws is the outcome of its budget, with the error, and the sweep goes on.
  PlanRequest paperIto;
  paperIto.policy = Policy::Ito;
  paperIto.mode = PlanMode::Paper;
  std::vector<std::string> errors;
  std::mutex m;
  EXPECT_EQ(sweep(planner, paperIto, budgets, 2,
                  [&](SweepOutcome&& o) {
                    const std::lock_guard<std::mutex> lock(m);
                    EXPECT_FALSE(o.plan);
                    errors.push_back(o.error);
                  }),
            budgets.size());
  ASSERT_EQ(errors.size(), budgets.size());
  for (const std::string& e : errors)
    EXPECT_NE(e.find("--policy ito has no paper mode"), std::string::npos) << e;
  for (const int lanes : {1, 0, -1}) {
    bool called = false;
    EXPECT_EQ(sweep(planner, PlanRequest{}, {}, lanes, [&](SweepOutcome&&) { called = true; }), 0u);
    EXPECT_FALSE(called);
  }
}

}  // namespace
}  // namespace swapscope::perf
