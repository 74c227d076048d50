// SPDX-License-Identifier: MIT
// A profile's stability: the spread of its iteration times at each k, by hand, and its meta
// value read back.
#include "perfmodel/stability.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "common/error.h"

namespace swapscope::perf {
namespace {

store::RunData runWith(const std::vector<std::pair<std::int64_t, std::int64_t>>& iterations) {
  store::RunData d;
  d.path = "p.swapdb";
  int n = 0;
  for (const auto& [k, ns] : iterations) {
    store::IterationRow it;
    it.k = k;
    it.iteration = n++;
    it.duration_ns = ns;
    d.iterations.push_back(it);
  }
  return d;
}

TEST(Stability, TheSpreadIsTheMedianOverKOfTheInterpolatedP90LessP10OverTheMedian) {
  // k = 4: 100, 110, 200: median 110, p10 = 100 + 0.2 x 10 = 102, p90 = 110 + 0.8 x 90 = 182.
  // k = 8: three equal times. The median of two spreads is their mean.
  const ProfileStability s = measureStability(
      runWith({{4, 200}, {4, 100}, {4, 110}, {8, 300}, {8, 300}, {8, 300}}), nullptr);
  ASSERT_EQ(s.per_k.size(), 2u);
  EXPECT_EQ(s.per_k[0].k, 4);
  EXPECT_EQ(s.per_k[0].iterations, 3);
  EXPECT_EQ(s.per_k[0].median_ns, 110);
  EXPECT_DOUBLE_EQ(s.per_k[0].spread, (182.0 - 102.0) / 110.0);
  EXPECT_DOUBLE_EQ(s.per_k[1].spread, 0.0);
  EXPECT_DOUBLE_EQ(s.spread, (182.0 - 102.0) / 110.0 / 2);
  EXPECT_DOUBLE_EQ(s.largest, (182.0 - 102.0) / 110.0);
  EXPECT_EQ(s.worst_k, 4);
  EXPECT_TRUE(s.unsteady());
  EXPECT_EQ(s.preempted_compute, -1);  // no model
  EXPECT_NE(stabilityWarning(s).find("iteration times spread 36 % ((p90 - p10) / median at each "
                                     "k, the median over its minibatches)"),
            std::string::npos)
      << stabilityWarning(s);
}

TEST(Stability, ASpreadJustBeyondTheThresholdDoesNotPrintAsTheThreshold) {
  ProfileStability s;
  s.spread = 0.253;
  ASSERT_TRUE(s.unsteady());
  EXPECT_NE(stabilityWarning(s).find("spread 25.3 % ("), std::string::npos) << stabilityWarning(s);
  s.spread = 0.36;
  EXPECT_NE(stabilityWarning(s).find("spread 36 % ("), std::string::npos) << stabilityWarning(s);
}

TEST(Stability, OneDisturbedMinibatchOfFiveIsNotABusyMachine) {
  // k = 1 disturbed once (as a short iteration on a shared machine is), four steady ones.
  std::vector<std::pair<std::int64_t, std::int64_t>> its = {{1, 100}, {1, 100}, {1, 300}};
  for (std::int64_t k : {2, 3, 4, 5}) {
    for (std::int64_t t : {1000, 1010, 1020})
      its.push_back({k, t * k});
  }
  const ProfileStability s = measureStability(runWith(its), nullptr);
  EXPECT_GT(s.largest, 1.0);
  EXPECT_EQ(s.worst_k, 1);
  EXPECT_LT(s.spread, 0.02);
  EXPECT_FALSE(s.unsteady());
}

TEST(Stability, ASteadyProfileHasNoWarning) {
  const ProfileStability s =
      measureStability(runWith({{2, 1000}, {2, 1010}, {2, 1020}, {2, 1030}}), nullptr);
  EXPECT_NEAR(s.spread, (1027.0 - 1003.0) / 1015.0, 1e-12);
  EXPECT_FALSE(s.unsteady());
  EXPECT_EQ(stabilityWarning(s), "");
}

TEST(Stability, OneIterationPerKIsNotMeasurable) {
  const ProfileStability s = measureStability(runWith({{1, 100}, {2, 300}}), nullptr);
  EXPECT_EQ(s.spread, -1);
  EXPECT_FALSE(s.unsteady());
  EXPECT_EQ(describeStability(s),
            "not measurable: one recorded iteration per k (--iters 2 or more)");
}

TEST(Stability, TheMetaValueReadsBackAndItsAbsenceIsNotMeasured) {
  store::RunData d = runWith({{4, 200}, {4, 100}, {4, 110}});
  EXPECT_FALSE(readStability(d).has_value());
  ProfileStability s = measureStability(d, nullptr);
  s.preempted_compute = 3;
  s.preempted_waits = 1;
  d.meta.extra["stability"] = stabilityToMeta(s);
  const auto back = readStability(d);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->spread, s.spread);
  EXPECT_EQ(back->largest, s.largest);
  EXPECT_EQ(back->worst_k, 4);
  EXPECT_EQ(back->preempted_compute, 3);
  EXPECT_EQ(back->preempted_waits, 1);
  ASSERT_EQ(back->per_k.size(), 1u);
  EXPECT_EQ(back->per_k[0].median_ns, 110);
  for (const char* bad : {"[1]", "{\"spread\": \"x\"}", "not json", "{}"}) {
    d.meta.extra["stability"] = bad;
    try {
      readStability(d);
      ADD_FAILURE() << bad << " was read";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find(
                    "'p.swapdb' is damaged: meta 'stability' is not the stability of a profile"),
                std::string::npos)
          << e.what();
    }
  }
  // Spreads out of their range: negative, beyond 1e9 (printed as "inf %"), and "not measured"
  // (-1) where a k recorded three iterations (info said "one recorded iteration per k").
  const nlohmann::json good = nlohmann::json::parse(stabilityToMeta(s));
  const auto edited = [&](const char* field, double value, bool perK) {
    nlohmann::json j = good;
    (perK ? j["per_k"][0][field] : j[field]) = value;
    d.meta.extra["stability"] = j.dump();
    try {
      readStability(d);
      return std::string();
    } catch (const Error& e) {
      return std::string(e.what());
    }
  };
  EXPECT_NE(edited("spread", -5, false).find("(its spread is -5)"), std::string::npos);
  EXPECT_NE(edited("spread", 1e308, false).find("(its spread is 1e+308)"), std::string::npos);
  EXPECT_NE(
      edited("spread", -1, false)
          .find("(its spread is -1, 'not measured', but a k recorded two iterations or more)"),
      std::string::npos);
  EXPECT_NE(edited("largest", -0.5, false).find("(its largest spread is -0.5)"), std::string::npos);
  EXPECT_NE(edited("spread", -3, true).find("(k 4's spread is -3)"), std::string::npos);
  EXPECT_EQ(edited("spread", 0.25, false), "");
}

TEST(Stability, AProfileThatDidNotFinishIsWarnedAboutByItsStatus) {
  struct Case {
    store::RunStatus status;
    std::string message, warning;  // the warning's start; empty: none
  };
  for (const Case& c : std::vector<Case>{
           {store::RunStatus::Complete, "", ""},
           {store::RunStatus::Incomplete, "interrupted after 6 recorded iterations",
            "the profile is incomplete (interrupted after 6 recorded iterations): the model is "
            "fitted to what it recorded before it stopped"},
           {store::RunStatus::Failed, "out of memory at k = 12",
            "the profile failed (out of memory at k = 12): the model is fitted to what it "
            "recorded before then"},
           {store::RunStatus::Running, "",
            "the profile is still running: the model is fitted to what it has recorded so far"}}) {
    store::RunMeta m;
    m.status = c.status;
    m.status_message = c.message;
    const std::string w = unfinishedProfileWarning(m);
    if (c.warning.empty()) {
      EXPECT_EQ(w, "");
    } else {
      EXPECT_EQ(w.rfind(c.warning, 0), 0u) << w;
    }
  }
}

}  // namespace
}  // namespace swapscope::perf
