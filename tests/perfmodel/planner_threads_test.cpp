// SPDX-License-Identifier: MIT
// The argmin search simulates several k values at once; the plan and its simulation count must
// be those of one thread.
#include <gtest/gtest.h>

#include <array>
#include <memory>

#include "graph/zoo.h"
#include "perfmodel/planner.h"
#include "sample_runs.h"
#include "store/run_db.h"

namespace swapscope::perf {
namespace {

TEST(PlannerThreads, SamePlanAndCountOnAnyNumberOfThreads) {
  const PerfModel model =
      PerfModel::fit(store::RunReader(swapscope::testing::resnet56Run()).load());
  // resnet56 as profiled, and ResNet-152 with the curves transferred (a wide k range whose
  // search stops before the last k).
  int compared = 0;
  for (const auto& [name, budgets] :
       {std::pair<std::string, std::vector<std::int64_t>>{"resnet56", {24, 40, 64, 256}},
        {"resnet152", {3072, 8192}}}) {
    const Network net = buildZooModel(name);
    // A planner per thread count: one planner would take the later plans from the plans it
    // kept (perfmodel/planner.h), and the threads would simulate nothing.
    const Planner planner(model, net);
    std::vector<std::unique_ptr<const Planner>> others;
    for (int i = 0; i < 3; ++i)
      others.push_back(std::make_unique<const Planner>(model, net));
    for (const Policy policy : {Policy::AccUdnn, Policy::SwapAll}) {
      for (const std::int64_t mib : budgets) {
        for (const std::int64_t dataset : {std::int64_t{0}, std::int64_t{50000}}) {
          PlanRequest r;
          r.policy = policy;
          r.budget = mib << 20;
          r.dataset_size = dataset;
          r.threads = 1;
          const PlanResult one = planner.plan(r);
          for (std::size_t i = 0; i < others.size(); ++i) {
            const int threads = std::array{2, 3, 8}[i];
            r.threads = threads;
            const PlanResult many = others[i]->plan(r);
            SCOPED_TRACE(name + ", " + std::string(policyName(policy)) + " at " +
                         std::to_string(mib) + " MiB on " + std::to_string(threads) + " threads");
            ASSERT_EQ(one.trainable, many.trainable);
            EXPECT_EQ(one.evaluated, many.evaluated);
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

}  // namespace
}  // namespace swapscope::perf
