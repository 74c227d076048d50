// SPDX-License-Identifier: MIT
#include "analysis/memory.h"

#include <gtest/gtest.h>

#include "analysis/network_analysis.h"
#include "analysis/sub_batch.h"
#include "common/error.h"
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

TEST(LowerBound, WithRecomputeTinyNetworkByHand) {
  // recompute-light re-makes f (flatten) from r at fc's backward step (step 7), which then holds
  // r (the source, 128 bytes a sample), f (re-made, 128), f.grad (128) and fc.grad (12): 396,
  // above relu's backward step (r, r.grad, c.grad: 384), moDNN's largest step.
  const NetworkAnalysis a = analyzeNetwork(testing::tinyNetwork());
  EXPECT_EQ(a.lower_bound_recompute, 1404 + 128 + 128 + 128 + 12);
  EXPECT_EQ(a.lower_bound, 1404 + 384);
}

TEST(LowerBound, WithRecomputeIsAtLeastModnnsAndAtMostRecomputeLightsPeak) {
  for (const ZooEntry& e : zooEntries()) {
    const NetworkAnalysis a = analyzeNetwork(buildZooModel(e.name));
    EXPECT_GE(a.lower_bound_recompute, a.lower_bound) << e.name;
    EXPECT_LE(a.lower_bound_recompute, a.plan(Policy::RecomputeLight).curve.peak(1)) << e.name;
  }
}

TEST(LowerBound, DominatedByWeightsForVgg) {
  // moDNN notes the bound is dominated by the weights for VGG-class networks: here 3 copies of
  // 138M parameters (weights, gradients, momentum) against one step's buffers at k = 1.
  const NetworkAnalysis a = analyzeNetwork(buildZooModel("vgg16"));
  const std::int64_t weights = 3 * a.totals.params * 4;
  EXPECT_GT(a.lower_bound, weights);
  EXPECT_LT(a.lower_bound, weights + (std::int64_t{64} << 20));
}

TEST(SubBatches, SplitKEvenlyOrSayWhyNot) {
  EXPECT_EQ(subBatchSize(64, 1, "S"), 64);
  EXPECT_EQ(subBatchSize(64, 4, "S"), 16);
  EXPECT_EQ(subBatchSize(64, 64, "S"), 1);
  EXPECT_EQ(subBatchCount(64, 16, "B"), 4);
  const std::pair<std::int64_t, std::string> counts[] = {
      {0, "--sub-batches 0: the sub-batch count must be at least 1, not 0"},
      {-1, "must be at least 1, not -1"},
      {65, "a minibatch of 64 has no sub-batch count of 65 (at most 64)"},
      {5,
       "the minibatch of 64 does not split evenly: 64 is not a multiple of 5 (64 = 12 x 5 + 4;"}};
  for (const auto& [s, why] : counts) {
    try {
      subBatchSize(64, s, "--sub-batches " + std::to_string(s));
      ADD_FAILURE() << s << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(subBatchCount(64, 3, "B"), Error);
  EXPECT_THROW(subBatchCount(64, 128, "B"), Error);
}

}  // namespace
}  // namespace swapscope
