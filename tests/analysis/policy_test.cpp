// SPDX-License-Identifier: MIT
/// The policy table: its names, and the behaviour each row carries. A fixed row's function makes
/// the sets its policy's rule describes, which makeSwapSet, makeRecomputeSet and the analyzer
/// read; a searched row has none.
#include "analysis/policy.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "analysis/network_analysis.h"
#include "analysis/swap_policy.h"
#include "common/error.h"
#include "graph/zoo.h"

namespace swapscope {
namespace {

TEST(PolicyTable, NamesAndIdsAreUniqueAndParseBack) {
  std::set<Policy> ids;
  std::set<std::string_view> names;
  for (const PolicyInfo& info : policyTable()) {
    EXPECT_TRUE(ids.insert(info.id).second) << info.name;
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_EQ(policyFromName(info.name), info.id);
    EXPECT_EQ(&policyInfo(info.id), &info);
    EXPECT_FALSE(info.description.empty()) << info.name;
  }
  EXPECT_EQ(policyFromName("swap-some"), std::nullopt);
}

TEST(PolicyTable, AFixedRowCarriesItsFunctionASearchedRowNone) {
  int fixed = 0, searched = 0;
  for (const PolicyInfo& info : policyTable()) {
    EXPECT_EQ(info.sets != nullptr, info.fixed()) << info.name;
    (info.fixed() ? fixed : searched) += 1;
  }
  EXPECT_EQ(fixed, 4);
  EXPECT_EQ(searched, 2);
  EXPECT_EQ(joinPolicyNames(PolicyRows::Fixed, "|", "|"),
            "keep-all|swap-all|vdnn-conv|recompute-light");
}

/// Networks with convolutions, light layers, residual adds and concatenations.
class FixedSetsOn : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    net = std::make_unique<Network>(buildZooModel(GetParam()));
    costs = computeLayerCosts(*net);
    swappable = swappableFms(*net, costs);
  }
  FixedSets of(Policy p) const { return fixedSets(p, *net, costs); }
  std::unique_ptr<Network> net;
  std::vector<LayerCost> costs;
  std::vector<bool> swappable;
};

TEST_P(FixedSetsOn, EveryFixedRowMakesSetsWithinItsAttributes) {
  const std::vector<bool> none(net->size(), false);
  for (const PolicyInfo& info : policyTable()) {
    if (!info.fixed()) {
      EXPECT_THROW((void)makeSwapSet(info.id, *net, costs), Error) << info.name;
      EXPECT_EQ(makeRecomputeSet(info.id, *net, costs), none) << info.name;
      continue;
    }
    const FixedSets s = info.sets(*net, costs);
    ASSERT_EQ(s.swapped.size(), none.size()) << info.name;
    ASSERT_EQ(s.recomputed.size(), none.size()) << info.name;
    // makeSwapSet and makeRecomputeSet are the row's sets.
    EXPECT_EQ(makeSwapSet(info.id, *net, costs), s.swapped) << info.name;
    EXPECT_EQ(makeRecomputeSet(info.id, *net, costs), s.recomputed) << info.name;
    bool anySwapped = false, anyRecomputed = false;
    for (int i = 0; i < net->size(); ++i) {
      EXPECT_FALSE(s.swapped[i] && s.recomputed[i]) << info.name << " " << net->layer(i).name;
      EXPECT_TRUE(!(s.swapped[i] || s.recomputed[i]) || swappable[i])
          << info.name << ": " << net->layer(i).name << " is read by no backward step";
      anySwapped = anySwapped || s.swapped[i];
      anyRecomputed = anyRecomputed || s.recomputed[i];
    }
    EXPECT_EQ(anySwapped, info.uses(kFmSwap)) << info.name;
    EXPECT_EQ(anyRecomputed, info.uses(kFmRecompute)) << info.name;
  }
}

TEST_P(FixedSetsOn, EachRuleAsItsDescriptionSays) {
  const std::vector<bool> none(net->size(), false);
  EXPECT_EQ(of(Policy::KeepAll).swapped, none);
  EXPECT_EQ(of(Policy::KeepAll).recomputed, none);
  EXPECT_EQ(of(Policy::SwapAll).swapped, swappable);
  EXPECT_EQ(of(Policy::SwapAll).recomputed, none);
  // vdnn-conv: exactly the swappable FMs some convolution reads.
  std::vector<bool> convInputs(net->size(), false);
  for (int i = 0; i < net->size(); ++i) {
    if (net->layer(i).kind != LayerKind::Conv2d) continue;
    for (int src : net->inputsOf(i))
      convInputs[src] = swappable[src];
  }
  EXPECT_EQ(of(Policy::VdnnConv).swapped, convInputs);
  EXPECT_EQ(of(Policy::VdnnConv).recomputed, none);
  // recompute-light: recomputableFms re-made, every other swappable FM swapped.
  const FixedSets light = of(Policy::RecomputeLight);
  EXPECT_EQ(light.recomputed, recomputableFms(*net, costs));
  for (int i = 0; i < net->size(); ++i)
    EXPECT_EQ(light.swapped[i], swappable[i] && !light.recomputed[i]) << net->layer(i).name;
}

TEST_P(FixedSetsOn, TheAnalyzerHoldsEveryFixedRowsPlan) {
  const NetworkAnalysis a = analyzeNetwork(*net);
  std::vector<Policy> others;
  for (const PolicyInfo& info : policyTable()) {
    if (!info.fixed()) {
      EXPECT_THROW((void)a.plan(info.id), Error) << info.name;
      continue;
    }
    const FixedSets s = info.sets(*net, costs);
    EXPECT_EQ(a.plan(info.id).gmap.swapped, s.swapped) << info.name;
    EXPECT_EQ(a.plan(info.id).curve.peak(8),
              computeMemoryCurve(buildGmap(*net, costs, s.swapped, s.recomputed)).peak(8))
        << info.name;
    if (!isBaselinePolicy(info.id)) others.push_back(info.id);
  }
  EXPECT_EQ(&a.plan(Policy::KeepAll), &a.keep_all);
  EXPECT_EQ(&a.plan(Policy::SwapAll), &a.swap_all);
  ASSERT_EQ(a.other_fixed.size(), others.size());
  for (std::size_t i = 0; i < others.size(); ++i)
    EXPECT_EQ(a.other_fixed[i].first, others[i]) << i;
}

INSTANTIATE_TEST_SUITE_P(Zoo, FixedSetsOn, ::testing::Values("fmnist-cnn", "resnet20", "googlenet"),
                         [](const auto& param) {
                           std::string n = param.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace swapscope
