// SPDX-License-Identifier: MIT
#include "analysis/memory.h"

#include <gtest/gtest.h>

#include "analysis/network_analysis.h"
#include "graph/zoo.h"
#include "tiny_network.h"

namespace swapscope {
namespace {

TEST(KMax, LargestKThatFitsByHand) {
  MemoryCurve c;
  c.persistent = {1000, 0};
  c.resident = {{1000, 0}, {1000, 100}, {1500, 60}};
  // Step 1 fits k <= (B-1000)/100, step 2 k <= (B-1500)/60.
  EXPECT_EQ(c.kMax(2000), 8);   // min(10, 8)
  EXPECT_EQ(c.kMax(6000), 50);  // min(50, 75)
  EXPECT_EQ(c.kMax(1099), 0);   // k = 1 needs 1100
  EXPECT_EQ(c.kMax(999), 0);
}

TEST(KMax, ConsistentWithPeakOnEveryZooModel) {
  for (const ZooEntry& e : zooEntries()) {
    const NetworkAnalysis a = analyzeNetwork(buildZooModel(e.name));
    for (const MemoryPlan* p : {&a.keep_all, &a.swap_all}) {
      for (std::int64_t budget : {std::int64_t{64} << 20, std::int64_t{8} << 30}) {
        const std::int64_t k = p->curve.kMax(budget);
        if (k > 0) {
          EXPECT_LE(p->curve.peak(k), budget) << e.name;
        }
        EXPECT_GT(p->curve.peak(k + 1), budget) << e.name;
      }
    }
  }
}

TEST(LowerBound, TinyNetworkAndOrdering) {
  const NetworkAnalysis a = analyzeNetwork(testing::tinyNetwork());
  EXPECT_EQ(a.lower_bound, 1404 + 384);
  EXPECT_LE(a.lower_bound, a.swap_all.curve.peak(1));
  EXPECT_LE(a.swap_all.curve.peak(1), a.keep_all.curve.peak(1));
}

TEST(LowerBound, DominatedByWeightsForVgg) {
  // moDNN notes the bound is dominated by the weights for VGG-class networks: here 3 copies of
  // 138M parameters (weights, gradients, momentum) against one step's buffers at k = 1.
  const NetworkAnalysis a = analyzeNetwork(buildZooModel("vgg16"));
  const std::int64_t weights = 3 * a.totals.params * 4;
  EXPECT_GT(a.lower_bound, weights);
  EXPECT_LT(a.lower_bound, weights + (std::int64_t{64} << 20));
}

}  // namespace
}  // namespace swapscope
