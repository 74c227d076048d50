// SPDX-License-Identifier: MIT
// `swapscope plan | run`, in-process, on the fmnist-cnn sample run: a plan written and run back
// with the exact predicted peak; plans refused for another network, edited steps and bad fields.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "analysis/network_analysis.h"
#include "analysis/swap_policy.h"
#include "common/bytes.h"
#include "common/format.h"
#include "edit_db.h"
#include "graph/network_json.h"
#include "graph/zoo.h"
#include "run_cli.h"
#include "runtime/dataset.h"
#include "sample_runs.h"
#include "store/plan_file.h"
#include "store/run_db.h"

namespace swapscope::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::run;

const std::string kSample = swapscope::testing::fmnistRun();

fs::path scratch(const std::string& name) {
  return fs::temp_directory_path() / ("swapscope-plan-" + std::to_string(getpid()) + "-" + name);
}

json readJson(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

void writeJson(const fs::path& p, const json& j) {
  std::ofstream(p) << j.dump(2);
}

class CliPlan : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    s_plan = scratch("swap-all.json");
    s_result = run({"plan", "--db", kSample, "--budget", "16MiB", "--policy", "swap-all", "--batch",
                    "8", "--out", s_plan.string(), "--json"});
  }
  static void TearDownTestSuite() { fs::remove(s_plan); }
  static inline fs::path s_plan;
  static inline testing::Result s_result;
};

TEST_F(CliPlan, WritesTheSamePlanItPrints) {
  ASSERT_EQ(s_result.code, 0) << s_result.err;
  const json printed = json::parse(s_result.out);
  EXPECT_EQ(printed, readJson(s_plan));
  const store::PlanFile p = store::readPlanFile(s_plan.string());
  EXPECT_EQ(p.k, 8);
  EXPECT_EQ(p.policy, "swap-all");
  EXPECT_EQ(p.mode, "fixed");
  EXPECT_EQ(p.network_name, "fmnist-cnn");
  EXPECT_EQ(p.source_db, kSample);
  EXPECT_LE(p.predictions.peak_bytes, 16 << 20);
  // Swap-all swaps every FM a backward step reads, the minibatch among them.
  const Network net = buildZooModel("fmnist-cnn");
  const std::vector<bool> swappable = swappableFms(net, computeLayerCosts(net));
  EXPECT_EQ(p.swap_set.size(),
            static_cast<std::size_t>(std::count(swappable.begin(), swappable.end(), true)));
  EXPECT_EQ(p.swap_set.front().fm, "data");
}

TEST_F(CliPlan, RunsThePlanWithTheExactPeakAndRecordsIt) {
  ASSERT_EQ(s_result.code, 0) << s_result.err;
  const fs::path db = scratch("run.swapdb");
  fs::remove(db);
  const auto r = run({"run", "--plan", s_plan.string(), "--iters", "2", "--warmup", "0", "--db",
                      db.string(), "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["k"], 8);
  EXPECT_EQ(j["iterations"], 2);
  EXPECT_EQ(j["peak_bytes"]["measured"], j["peak_bytes"]["predicted"]);
  EXPECT_GT(j["t_iter_s"]["measured"].get<double>(), 0);
  const store::RunData d = store::RunReader(db.string()).load();
  EXPECT_EQ(d.meta.status, store::RunStatus::Complete);
  EXPECT_EQ(d.meta.kind, "run");
  ASSERT_EQ(d.plans.size(), 1u);
  EXPECT_EQ(d.plans[0].k, 8);
  EXPECT_EQ(json::parse(d.plans[0].json), readJson(s_plan));
  EXPECT_EQ(d.iterations.size(), 2u);
  // A plan from that run's database rests on its one minibatch: it says so (it read as a profile).
  const auto again = run({"plan", "--db", db.string(), "--budget", "64MiB"});
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_NE(again.out.find("it is a 'run' database, not a profile: the model is fitted to the one "
                           "minibatch it ran (k = 8), so the times at other k are extrapolated"),
            std::string::npos)
      << again.out;
  fs::remove(db);
}

TEST(CliPlanRecompute, PlansThatRecomputeAreWrittenAndRunWithTheExactPeak) {
  // recompute-light's plan file lists the FMs it re-makes, with the GMAP's steps; ito's plan file
  // is written too; `run --plan` executes both with the predicted peak to the byte.
  const Network net = buildZooModel("fmnist-cnn");
  const auto costs = computeLayerCosts(net);
  const RecomputeSet expected = makeRecomputeSet(Policy::RecomputeLight, net, costs);
  const Gmap g = buildGmap(net, costs, makeSwapSet(Policy::RecomputeLight, net, costs), expected);
  for (const std::string policy : {"recompute-light", "ito"}) {
    const fs::path out = scratch(policy + ".json");
    fs::remove(out);
    const auto r = run({"plan", "--db", kSample, "--budget", "24MiB", "--policy", policy, "--batch",
                        "8", "--out", out.string()});
    ASSERT_EQ(r.code, 0) << policy << ": " << r.err;
    const store::PlanFile p = store::readPlanFile(out.string());
    EXPECT_EQ(p.policy, policy);
    if (policy == "recompute-light") {
      std::vector<std::string> names;
      for (int i = 0; i < net.size(); ++i) {
        if (expected[static_cast<std::size_t>(i)]) names.push_back(net.layer(i).name);
      }
      ASSERT_EQ(p.recompute.size(), names.size());
      ASSERT_GE(names.size(), 2u) << "fmnist-cnn re-makes its flatten and dropout outputs";
      for (std::size_t i = 0; i < names.size(); ++i) {
        EXPECT_EQ(p.recompute[i].fm, names[i]);
        int release = 0, remake = 0;
        for (const GmapOp& op : g.ops) {
          if (op.buffer < 0 || g.buffers[static_cast<std::size_t>(op.buffer)].name != names[i] ||
              g.buffers[static_cast<std::size_t>(op.buffer)].kind != BufferKind::FeatureMap)
            continue;
          if (op.kind == GmapOpKind::Release && op.step <= g.forward_steps) release = op.step;
          if (op.kind == GmapOpKind::Recompute && remake == 0) remake = op.step;
        }
        EXPECT_EQ(p.recompute[i].release_step, release) << names[i];
        EXPECT_EQ(p.recompute[i].recompute_step, remake) << names[i];
        EXPECT_GT(remake, g.forward_steps) << names[i];
      }
    }
    const auto ran =
        run({"run", "--plan", out.string(), "--iters", "2", "--warmup", "0", "--json"});
    ASSERT_EQ(ran.code, 0) << policy << ": " << ran.err;
    const json j = json::parse(ran.out);
    EXPECT_EQ(j["peak_bytes"]["measured"], j["peak_bytes"]["predicted"]) << policy;
    EXPECT_EQ(j["peak_bytes"]["predicted"].get<std::int64_t>(), p.predictions.peak_bytes);
    // A recompute step that is not the GMAP's is refused before the run.
    if (!p.recompute.empty()) {
      json doc = readJson(out);
      doc["recompute"][0]["recompute_step"] = doc["recompute"][0]["recompute_step"].get<int>() + 1;
      writeJson(out, doc);
      const auto bad = run({"run", "--plan", out.string(), "--iters", "1"});
      EXPECT_EQ(bad.code, 2);
      EXPECT_NE(bad.err.find("field 'recompute[0]' puts " + p.recompute[0].fm + " at steps"),
                std::string::npos)
          << bad.err;
      doc["recompute"][0]["fm"] = "nosuchlayer";
      writeJson(out, doc);
      const auto unknown = run({"run", "--plan", out.string(), "--iters", "1"});
      EXPECT_EQ(unknown.code, 2);
      EXPECT_NE(unknown.err.find("recompute[0].fm: 'nosuchlayer' does not name a layer of"),
                std::string::npos)
          << unknown.err;
    }
    fs::remove(out);
  }
}

TEST(CliPlanSubBatches, PlansAndRunsKInSubBatchesWithTheExactPeakOfOne) {
  // k = 8 does not fit 3 MiB whole under swap-all; in 4 sub-batches of 2 it does. The plan file
  // records S, and `run` executes it with the pass's peak to the byte.
  const Network net = buildZooModel("fmnist-cnn");
  const auto plan = planMemory(net, computeLayerCosts(net), Policy::SwapAll);
  const std::int64_t budget = plan.curve.peak(2);
  ASSERT_GT(plan.curve.peak(8), budget);
  const fs::path out = scratch("sub-batches.json");
  fs::remove(out);
  const std::vector<std::string> base{
      "plan",     "--db",     kSample,   "--budget", std::to_string(budget),
      "--policy", "swap-all", "--batch", "8"};
  EXPECT_EQ(run(base).code, kExitUsage) << "the whole minibatch does not fit";
  auto args = base;
  args.insert(args.end(), {"--sub-batches", "4", "--out", out.string()});
  const auto r = run(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("k                 8 in 4 sub-batches of 2"), std::string::npos) << r.out;
  const store::PlanFile p = store::readPlanFile(out.string());
  EXPECT_EQ(p.k, 8);
  EXPECT_EQ(p.sub_batches, 4);
  EXPECT_EQ(p.predictions.peak_bytes, budget);
  EXPECT_EQ(readJson(out)["version"], store::kPlanVersion);
  const auto ran = run({"run", "--plan", out.string(), "--iters", "2", "--warmup", "0", "--json"});
  ASSERT_EQ(ran.code, 0) << ran.err;
  const json j = json::parse(ran.out);
  EXPECT_EQ(j["k"], 8);
  EXPECT_EQ(j["sub_batches"], 4);
  EXPECT_EQ(j["peak_bytes"]["measured"].get<std::int64_t>(), budget);
  EXPECT_EQ(j["peak_bytes"]["predicted"].get<std::int64_t>(), budget);
  // auto plans every divisor of 8 and keeps one that fits.
  auto autoArgs = base;
  autoArgs.insert(autoArgs.end(), {"--sub-batches", "auto", "--json"});
  const auto a = run(autoArgs);
  ASSERT_EQ(a.code, 0) << a.err;
  const json aj = json::parse(a.out);
  EXPECT_GE(aj["sub_batches"].get<std::int64_t>(), 4);
  EXPECT_LE(aj["predictions"]["peak_bytes"].get<std::int64_t>(), budget);
  // Refusals name the option and the value, before the database is read.
  auto bad = base;
  bad.insert(bad.end(), {"--sub-batches", "3"});
  const auto b = run(bad);
  EXPECT_EQ(b.code, kExitUsage);
  EXPECT_NE(b.err.find("--sub-batches 3: the minibatch of 8 does not split evenly"),
            std::string::npos)
      << b.err;
  auto both = base;
  both.insert(both.end(), {"--sub-batches", "auto", "--sub-batch-size", "4"});
  const auto bb = run(both);
  EXPECT_EQ(bb.code, kExitUsage);
  EXPECT_NE(bb.err.find("give at most one of --sub-batches S and --sub-batch-size B, not both "
                        "(auto and 4)"),
            std::string::npos)
      << bb.err;
  const auto noK = run({"plan", "--db", kSample, "--budget", "16MiB", "--sub-batches", "2"});
  EXPECT_EQ(noK.code, kExitUsage);
  EXPECT_NE(noK.err.find("--sub-batches splits a fixed minibatch: give --batch K"),
            std::string::npos)
      << noK.err;
  fs::remove(out);
}

/// The text's "stall" figure (e.g. "1.25 ms"), "" where the text has none.
std::string textStall(const std::string& text) {
  const std::string key = "\n  stall             ";
  const auto at = text.find(key);
  if (at == std::string::npos) return "";
  const auto from = at + key.size();
  return text.substr(from, text.find(" per iteration", from) - from);
}

TEST(CliPlanSubBatches, AllowedTheyAreChosenWhereKDoesNotFitAndTheTextSaysWhy) {
  const Network net = buildZooModel("fmnist-cnn");
  const auto plan = planMemory(net, computeLayerCosts(net), Policy::SwapAll);
  const std::int64_t budget = plan.curve.peak(2);
  ASSERT_GT(plan.curve.peak(8), budget);
  const fs::path out = scratch("allowed.json");
  fs::remove(out);
  const std::vector<std::string> base{"plan",     "--db",    kSample, "--policy",
                                      "swap-all", "--batch", "8",     "--allow-sub-batches"};
  // K does not fit whole: the S that auto picks, and the text says why.
  auto split = base;
  split.insert(split.end(), {"--budget", std::to_string(budget), "--out", out.string()});
  const auto r = run(split);
  ASSERT_EQ(r.code, 0) << r.err;
  const store::PlanFile p = store::readPlanFile(out.string());
  EXPECT_EQ(p.k, 8);
  EXPECT_GE(p.sub_batches, 4);
  EXPECT_LE(p.predictions.peak_bytes, budget);
  const auto a = run({"plan", "--db", kSample, "--policy", "swap-all", "--batch", "8", "--budget",
                      std::to_string(budget), "--sub-batches", "auto", "--json"});
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(json::parse(a.out)["sub_batches"].get<std::int64_t>(), p.sub_batches);
  const std::string why = "  sub-batches       k = 8 alone needs " +
                          formatBytes(plan.curve.peak(8)) + " (" +
                          std::to_string(plan.curve.peak(8)) + " bytes) under swap-all, the " +
                          "budget is " + formatBytes(budget) + " (" + std::to_string(budget) +
                          " bytes): split into " + std::to_string(p.sub_batches) + " passes\n";
  EXPECT_NE(r.out.find(why), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find("k                 8 in " + std::to_string(p.sub_batches) + " sub-batches of " +
                 std::to_string(8 / p.sub_batches) + " (least t_iter of 4 divisors of k)"),
      std::string::npos)
      << r.out;
  // The text's stall is the file's.
  EXPECT_EQ(textStall(r.out), formatMilliseconds(p.predictions.stall_s) + " ms") << r.out;
  // A searched policy needs at least swap-all's peak at K.
  const auto searched = run({"plan", "--db", kSample, "--policy", "accudnn", "--batch", "8",
                             "--allow-sub-batches", "--budget", std::to_string(budget)});
  ASSERT_EQ(searched.code, 0) << searched.err;
  EXPECT_NE(searched.out.find("k = 8 alone needs at least " + formatBytes(plan.curve.peak(8)) +
                              " (" + std::to_string(plan.curve.peak(8)) +
                              " bytes, swap-all's peak) under accudnn"),
            std::string::npos)
      << searched.out;

  // K fits whole: planned as without the flag, the same file and no word of sub-batches.
  const std::string roomy = std::to_string(plan.curve.peak(8));
  auto whole = base;
  whole.insert(whole.end(), {"--budget", roomy, "--json"});
  const auto w = run(whole);
  ASSERT_EQ(w.code, 0) << w.err;
  const auto plain = run({"plan", "--db", kSample, "--policy", "swap-all", "--batch", "8",
                          "--budget", roomy, "--json"});
  ASSERT_EQ(plain.code, 0) << plain.err;
  json wj = json::parse(w.out), pj = json::parse(plain.out);
  EXPECT_EQ(wj["sub_batches"], 1);
  EXPECT_EQ(wj, pj);
  whole.back() = "--out";
  whole.push_back(out.string());
  whole.push_back("--force");
  const auto wt = run(whole);
  ASSERT_EQ(wt.code, 0) << wt.err;
  EXPECT_EQ(wt.out.find("sub-batches"), std::string::npos) << wt.out;
  EXPECT_EQ(textStall(wt.out),
            formatMilliseconds(store::readPlanFile(out.string()).predictions.stall_s) + " ms")
      << wt.out;
  fs::remove(out);
}

TEST(CliPlanSubBatches, AllowingThemNeedsAFixedKAndNoGivenCount) {
  const std::vector<std::string> base{"plan", "--db", kSample, "--budget", "16MiB"};
  auto noK = base;
  noK.push_back("--allow-sub-batches");
  const auto r = run(noK);
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--allow-sub-batches splits a fixed minibatch: give --batch K"),
            std::string::npos)
      << r.err;
  for (const std::string option : {"--sub-batches", "--sub-batch-size"}) {
    auto both = base;
    both.insert(both.end(), {"--batch", "8", "--allow-sub-batches", option, "2"});
    const auto b = run(both);
    EXPECT_EQ(b.code, kExitUsage) << option;
    EXPECT_NE(b.err.find("give at most one of --allow-sub-batches and " + option + ", not both"),
              std::string::npos)
        << b.err;
  }
  const auto help = run({"plan", "--help"});
  EXPECT_NE(help.out.find("--allow-sub-batches"), std::string::npos) << help.out;
}

TEST_F(CliPlan, RefusesAPlanForAnotherNetwork) {
  ASSERT_EQ(s_result.code, 0) << s_result.err;
  const auto r = run({"run", "--plan", s_plan.string(), "--model", "resnet20", "--iters", "1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("was made for network fmnist-cnn"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("the name is the same"), std::string::npos) << r.err;
  // It says how to give the plan's network.
  EXPECT_NE(r.err.find("not resnet20 (structure " + buildZooModel("resnet20").structureHash() +
                       "): give --model fmnist-cnn (with the --input and --classes the plan was "
                       "made with, if any) or the --net or --onnx file it was made for\n"),
            std::string::npos)
      << r.err;
}

TEST_F(CliPlan, APlanForTheSameModelBuiltOtherwiseSaysWhichOptionsDiffer) {
  // resnet20 planned at 1x28x28 and run at its default input: the same name, another structure.
  const std::string plan = scratch("resnet20-28.json").string();
  ASSERT_EQ(run({"plan", "--db", kSample, "--model", "resnet20", "--input", "1x28x28", "--budget",
                 "64MiB", "--batch", "4", "--out", plan})
                .code,
            0);
  const auto r = run({"run", "--plan", plan, "--model", "resnet20", "--iters", "1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("was made for network resnet20"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("another --input or --classes"), std::string::npos) << r.err;
  fs::remove(plan);
}

TEST_F(CliPlan, RefusesEditedStepsAndBadFieldsNamingThem) {
  ASSERT_EQ(s_result.code, 0) << s_result.err;
  const fs::path bad = scratch("bad.json");
  json j = readJson(s_plan);
  j["swap_set"][2]["prefetch_step"] = j["swap_set"][2]["prefetch_step"].get<int>() + 1;
  writeJson(bad, j);
  auto r = run({"run", "--plan", bad.string(), "--iters", "1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("'swap_set[2]'"), std::string::npos) << r.err;

  j = readJson(s_plan);
  j["swap_set"][0]["fm"] = "no-such-layer";
  writeJson(bad, j);
  r = run({"run", "--plan", bad.string(), "--iters", "1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no-such-layer"), std::string::npos) << r.err;

  j = readJson(s_plan);
  j["predictions"].erase("t_iter_s");
  writeJson(bad, j);
  r = run({"run", "--plan", bad.string(), "--iters", "1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("missing field 'predictions.t_iter_s'"), std::string::npos) << r.err;

  j = readJson(s_plan);
  j["budget"] = "16MiB";
  writeJson(bad, j);
  r = run({"run", "--plan", bad.string(), "--iters", "1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("'budget' must be an integer, got string"), std::string::npos) << r.err;
  fs::remove(bad);
}

TEST(CliPlanSearch, SearchesKAndExplainsAnUntrainableBudget) {
  auto r = run({"plan", "--db", kSample, "--budget", "24MiB", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["policy"], "accudnn");
  EXPECT_EQ(j["mode"], "argmin");
  EXPECT_GE(j["k"].get<int>(), 1);
  EXPECT_LE(j["predictions"]["peak_bytes"].get<std::int64_t>(), 24 << 20);

  r = run({"plan", "--db", kSample, "--budget", "24MiB", "--mode", "paper", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["mode"], "paper");

  // recompute-light plans and prints, and its plan JSON lists the recomputed FMs.
  r = run({"plan", "--db", kSample, "--budget", "24MiB", "--policy", "recompute-light"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("recompute-light"), std::string::npos) << r.out;
  r = run({"plan", "--db", kSample, "--budget", "24MiB", "--policy", "recompute-light", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(json::parse(r.out)["recompute"].empty());

  // ito has no paper mode: Algorithm 2 cannot weigh recompute.
  r = run({"plan", "--db", kSample, "--budget", "24MiB", "--policy", "ito", "--mode", "paper"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--policy ito has no paper mode"), std::string::npos) << r.err;

  r = run({"plan", "--db", kSample, "--budget", "1MiB"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("untrainable"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no policy fits below swap-all's peak at k = 1, "), std::string::npos)
      << r.err;
}

// The whole-training time of a small data set (--dataset-size 16 at k = 8: two iterations)
// printed as "0.0 s" with one decimal of a second: below a second it is in milliseconds, as
// t_iter is; a long one in minutes or hours. The JSON keeps the seconds as they are.
TEST(CliPlanWholeTraining, ASmallDataSetsTimeIsPrintedInMilliseconds) {
  const std::vector<std::string> small = {"plan",    "--db", kSample,          "--budget", "64MiB",
                                          "--batch", "8",    "--dataset-size", "16"};
  auto withJson = [](std::vector<std::string> args) {
    args.push_back("--json");
    return args;
  };
  testing::Result r = run(withJson(small));
  ASSERT_EQ(r.code, 0) << r.err;
  const json predictions = json::parse(r.out)["predictions"];
  const double whole = predictions["t_whole_s"].get<double>();
  EXPECT_DOUBLE_EQ(whole, 2 * predictions["t_iter_s"].get<double>());  // Δ = 0 on one GPU
  ASSERT_GT(whole, 0);
  ASSERT_LT(whole, 0.05);  // printed as 0.0 s before
  r = run(small);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("  whole training    " + formatMilliseconds(whole) + " ms\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("whole training    0.0 s"), std::string::npos) << r.out;
  EXPECT_NE(formatMilliseconds(whole), "0.000");

  // Ten epochs of 60,000 samples: seconds, minutes or hours as the time calls for.
  std::vector<std::string> large = small;
  large.back() = "60000";
  large.insert(large.end(), {"--epochs", "10"});
  r = run(withJson(large));
  ASSERT_EQ(r.code, 0) << r.err;
  const double longWhole = json::parse(r.out)["predictions"]["t_whole_s"].get<double>();
  ASSERT_GT(longWhole, 1.0);
  r = run(large);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("  whole training    " + formatDuration(longWhole) + "\n"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace swapscope::cli

namespace swapscope::cli {
namespace {

const std::string kResnet56 = swapscope::testing::resnet56Run();

TEST(CliPlanPaper, SaysWhyNoKMeetsConstraint6AndExits1) {
  // swap-all pins nothing: on resnet56 in 64 MiB some backward step waits for a prefetch at
  // every k. That is the model's answer, not bad input.
  auto r = testing::run(
      {"plan", "--db", kResnet56, "--budget", "64MiB", "--mode", "paper", "--policy", "swap-all"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.err.find("Algorithm 2 found no feasible k"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("at k = 1, step "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("swap-all pins nothing"), std::string::npos) << r.err;
  // accudnn pins into the rest of the budget: a k that meets (6), and the bytes it moves.
  r = testing::run({"plan", "--db", kResnet56, "--budget", "4GiB", "--mode", "paper"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("constraint (6)    met by Algorithm 1's t_ready at all 400 steps"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("moved per iteration"), std::string::npos) << r.out;
  // 4 GiB holds keep-all at argmin's k: nothing is swapped.
  r = testing::run({"plan", "--db", kResnet56, "--budget", "4GiB"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("swap set          0 of 115 swappable FMs, 0 B moved per iteration"),
            std::string::npos)
      << r.out;
}

TEST(CliCompare, ARunAgainstItselfDiffersNowhere) {
  const auto r = testing::run({"compare", kSample, kSample, "--json", "--top", "5"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_TRUE(j["same_network"].get<bool>());
  EXPECT_EQ(j["steps"]["k"], 94);      // the largest k of the profile
  EXPECT_EQ(j["steps"]["total"], 28);  // 2N steps of fmnist-cnn
  EXPECT_EQ(j["steps"]["largest"].size(), 5u);
  for (const auto& s : j["steps"]["largest"])
    EXPECT_EQ(s["seconds_a"], s["seconds_b"]);
  ASSERT_FALSE(j["curves"].empty());
  for (const auto& c : j["curves"]) {
    EXPECT_EQ(c["seconds_a"], c["seconds_b"]) << c["target"];
    EXPECT_FALSE(c["extrapolated"].get<bool>()) << c["target"];
  }
  EXPECT_EQ(j["a"]["pcie"], j["b"]["pcie"]);
  EXPECT_TRUE(j["a"]["predicted_vs_measured"].is_null());  // a profile has no plan
}

TEST(CliCompare, DifferentNetworksShareOnlyLayerTypeCurves) {
  const auto r = testing::run({"compare", kSample, kResnet56, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_FALSE(j["same_network"].get<bool>());
  EXPECT_EQ(j["steps"]["k"], 0);
  EXPECT_TRUE(j["steps"]["largest"].empty());
  std::set<std::string> types;
  for (const auto& c : j["curves"])
    types.insert(c["target"].get<std::string>());
  // Types in both networks; not fmnist's maxpool2d or dropout, which resnet56 lacks.
  for (const char* t : {"conv2d", "batchnorm2d", "relu", "linear"})
    EXPECT_TRUE(types.count(t)) << t;
  EXPECT_FALSE(types.count("maxpool2d"));
  EXPECT_FALSE(types.count("dropout"));
  // Text output names both files and explains the missing step comparison.
  const auto text = testing::run({"compare", kSample, kResnet56});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("not compared, the networks differ"), std::string::npos);
}

TEST(CliCompare, ARatioIsPrintedOnlyWhereBothTimesShow) {
  // resnet56 against fmnist-cnn: batch norm's update takes under 0.0005 ms in fmnist-cnn's fit.
  const auto r = testing::run({"compare", kResnet56, kSample});
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream lines(r.out.substr(r.out.find("fitted curves at common work")));
  std::string line;
  std::getline(lines, line);  // the title
  std::getline(lines, line);  // the header
  std::getline(lines, line);  // the rule
  int rows = 0, zeros = 0;
  const std::regex gap("  +");
  while (std::getline(lines, line) && line.rfind("  (*", 0) != 0) {
    const std::vector<std::string> cells(
        std::sregex_token_iterator(line.begin(), line.end(), gap, -1), {});
    ASSERT_EQ(cells.size(), 7u) << line;
    const std::string &a = cells[3], &b = cells[4], &ratio = cells[5];
    ++rows;
    if (a == "0.000" || b == "0.000") {
      ++zeros;
      EXPECT_EQ(ratio, "-") << line;
    } else {
      EXPECT_EQ(ratio.back(), 'x') << line;
    }
  }
  EXPECT_GT(rows, 5) << r.out;
  EXPECT_GE(zeros, 1) << "the case this test is for:\n" << r.out;
}

TEST(CliCompare, ShowsPredictedAgainstMeasuredForARunOfAPlan) {
  const fs::path plan = scratch("cmp-plan.json"), db = scratch("cmp-run.swapdb");
  fs::remove(db);
  ASSERT_EQ(testing::run({"plan", "--db", kSample, "--budget", "16MiB", "--batch", "12", "--policy",
                          "swap-all", "--out", plan.string()})
                .code,
            0);
  ASSERT_EQ(testing::run({"run", "--plan", plan.string(), "--iters", "2", "--warmup", "0", "--db",
                          db.string()})
                .code,
            0);
  const auto r = testing::run({"compare", kSample, db.string(), "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["steps"]["k"], 12);  // both recorded k = 12
  const json& check = j["b"]["predicted_vs_measured"];
  ASSERT_FALSE(check.is_null());
  EXPECT_EQ(check["k"], 12);
  EXPECT_EQ(check["peak_bytes"]["predicted"], check["peak_bytes"]["measured"]);
  EXPECT_EQ(check["t_iter_s"]["predicted"],
            store::readPlanFile(plan.string()).predictions.t_iter_s);
  fs::remove(plan);
  fs::remove(db);
}

// A plan whose learning rate (eq. 9) diverges the training: `run --db` failed on SQLite's NOT NULL
// constraint of the loss, and `run` without --db reported the run as a success.
TEST(CliRun, ALossThatIsNoNumberEndsTheRunSayingSoAndTheDatabaseKeepsWhyItFailed) {
  const fs::path plan = scratch("nan-plan.json"), db = scratch("nan-run.swapdb");
  fs::remove(db);
  ASSERT_EQ(testing::run({"plan", "--db", kSample, "--budget", "32MiB", "--batch", "64",
                          "--lr-base", "100", "--k-base", "1", "--out", plan.string()})
                .code,
            0);
  ASSERT_GT(store::readPlanFile(plan.string()).learning_rate, 1000);
  const std::string why =
      "the plan's learning rate 6400 (eq. 9 at k = 64) diverged the training "
      "(plan it with a smaller --lr-base)";
  for (const bool withDb : {true, false}) {
    std::vector<std::string> args = {"run", "--plan", plan.string(), "--iters", "10"};
    if (withDb) args.insert(args.end(), {"--db", db.string()});
    const auto r = testing::run(args);
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("swapscope run: error: the loss became NaN at iteration "),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("NOT NULL"), std::string::npos) << r.err;
  }
  const store::RunData d = store::RunReader(db.string()).load();
  EXPECT_EQ(d.meta.status, store::RunStatus::Failed);
  EXPECT_NE(d.meta.status_message.find(why), std::string::npos) << d.meta.status_message;
  for (const store::IterationRow& it : d.iterations)
    EXPECT_TRUE(std::isfinite(it.loss));
  fs::remove(plan);
  fs::remove(db);
}

TEST(CliCompare, RefusesAMissingFileOrArgument) {
  auto r = testing::run({"compare", kSample});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("missing B.swapdb"), std::string::npos) << r.err;
  r = testing::run({"compare", kSample, "/nonexistent/x.swapdb"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/nonexistent/x.swapdb"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace swapscope::cli

namespace swapscope::cli {
namespace {

TEST(CliRunData, RunsOnFashionMnistOrExplainsWhyNot) {
  const fs::path plan = scratch("fmnist-data.json");
  ASSERT_EQ(testing::run({"plan", "--db", kSample, "--budget", "16MiB", "--batch", "8", "--policy",
                          "swap-all", "--out", plan.string()})
                .code,
            0);
  const auto bad = testing::run({"run", "--plan", plan.string(), "--data", "imagenet"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("unknown data set 'imagenet'"), std::string::npos) << bad.err;
  if (!fs::exists(std::string(rt::kFashionMnistDir))) {
    fs::remove(plan);
    GTEST_SKIP() << "Fashion-MNIST is not installed at " << rt::kFashionMnistDir;
  }
  const auto r = testing::run({"run", "--plan", plan.string(), "--data", "fashion-mnist", "--iters",
                               "3", "--warmup", "0", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["iterations"], 3);
  EXPECT_EQ(j["peak_bytes"]["measured"], j["peak_bytes"]["predicted"]);
  fs::remove(plan);
}

TEST(CliRunCollector, ProfilesAgainUnderTheCollectorAndReportsItsOverhead) {
  const fs::path plan = scratch("collector.json");
  ASSERT_EQ(testing::run({"plan", "--db", kSample, "--budget", "16MiB", "--batch", "8", "--policy",
                          "swap-all", "--out", plan.string()})
                .code,
            0);
  const auto bad = testing::run({"run", "--plan", plan.string(), "--collector", "nvprof"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("unknown collector 'nvprof'"), std::string::npos) << bad.err;

  const auto r = testing::run({"run", "--plan", plan.string(), "--iters", "2", "--warmup", "0",
                               "--collector", "cupti", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  const json& c = j["collector"];
  // On the CPU backend CUPTI falls back to the task timers, and says why.
  EXPECT_NE(c["source"].get<std::string>().find("CUPTI unavailable"), std::string::npos) << c;
  EXPECT_EQ(c["iterations"], 2);
  EXPECT_GT(c["t_iter_profiled_s"].get<double>(), 0.0);
  EXPECT_NEAR(c["overhead"].get<double>(),
              c["t_iter_profiled_s"].get<double>() / c["t_iter_unprofiled_s"].get<double>() - 1,
              1e-12);
  EXPECT_GT(c["transfers"]["d2h"]["bytes"].get<std::int64_t>(), 0);  // swap-all offloads
  EXPECT_GT(c["steps"].size(), 0u);

  const auto text = testing::run(
      {"run", "--plan", plan.string(), "--iters", "1", "--warmup", "0", "--collector", "events"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("collector: cpu task timers"), std::string::npos) << text.out;
  // The text's overhead is the JSON's, profiled against unprofiled, from the times it prints.
  std::smatch m;
  const std::regex line(
      R"(overhead +([+-]?[0-9.]+) % \(median of 1 profiled iterations, ([0-9.]+) ms, against )"
      R"(([0-9.]+) ms unprofiled\))");
  ASSERT_TRUE(std::regex_search(text.out, m, line)) << text.out;
  const double shown = std::stod(m[1]), profiled = std::stod(m[2]), unprofiled = std::stod(m[3]);
  ASSERT_GT(unprofiled, 0.0) << text.out;
  // Each time is printed to 3 decimals below 10 ms, else to 1.
  const double rounding = (profiled < 10 ? 5e-4 : 0.05) + (unprofiled < 10 ? 5e-4 : 0.05);
  const double bound = 100 * rounding * (1 + profiled / unprofiled) / unprofiled + 0.05;
  EXPECT_NEAR(shown, 100 * (profiled / unprofiled - 1), bound) << text.out;
  fs::remove(plan);
}

}  // namespace
}  // namespace swapscope::cli

namespace swapscope::cli {
namespace {

TEST_F(CliPlan, WarnsWhenThePlanWasFittedOnAnotherDeviceAndStrictRefuses) {
  ASSERT_EQ(s_result.code, 0) << s_result.err;
  // The same plan, as a plan fitted on a GPU would record it.
  const fs::path gpuPlan = scratch("gpu-plan.json");
  json j = readJson(s_plan);
  j["device"] = {{"name", "NVIDIA H100 80GB HBM3"}, {"backend", "cuda"}};
  writeJson(gpuPlan, j);
  auto r = run({"run", "--plan", gpuPlan.string(), "--iters", "1", "--warmup", "0"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("warning: the plan's model was fitted on NVIDIA H100 80GB HBM3 (cuda)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("not comparable"), std::string::npos) << r.out;
  r = run({"run", "--plan", gpuPlan.string(), "--iters", "1", "--warmup", "0", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["warnings"].size(), 1u) << r.out;
  const std::string thisDevice = json::parse(r.out)["device"];
  r = run({"run", "--plan", gpuPlan.string(), "--iters", "1", "--strict-device"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--strict-device: the plan's model was fitted on"), std::string::npos)
      << r.err;
  // A plan fitted on this very device: no warning.
  j["device"] = {{"name", thisDevice}, {"backend", "cpu"}};
  writeJson(gpuPlan, j);
  r = run({"run", "--plan", gpuPlan.string(), "--iters", "1", "--warmup", "0", "--strict-device"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
  fs::remove(gpuPlan);
}

}  // namespace
}  // namespace swapscope::cli

namespace swapscope::cli {
namespace {

TEST_F(CliPlan, RunRefusesAHugeKFromThePlanAtOnceAndCreatesNoDatabase) {
  ASSERT_EQ(s_result.code, 0) << s_result.err;
  const fs::path hugePlan = scratch("huge-k.json");
  const fs::path db = scratch("huge-k.swapdb");
  fs::remove(db);
  json j = readJson(s_plan);
  j["k"] = 16000000;  // below the limit of every verb
  // The predictions made for that k's iteration time (k / t_iter is the throughput).
  j["predictions"]["throughput"] = 16000000 / j["predictions"]["t_iter_s"].get<double>();
  writeJson(hugePlan, j);
  // The shortfall from the analysis of the plan's own swap set.
  const store::PlanFile plan = store::readPlanFile(hugePlan.string());
  const Network net = buildZooModel("fmnist-cnn");
  const auto costs = computeLayerCosts(net);
  std::vector<std::string> names;
  for (const store::PlanSwap& w : plan.swap_set)
    names.push_back(w.fm);
  const std::int64_t peak =
      planMemory(net, costs, swapSetFromNames(net, costs, names)).curve.peak(16000000);
  auto r = run({"run", "--plan", hugePlan.string(), "--iters", "1", "--db", db.string()});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(": " + std::to_string(peak - plan.budget) + " bytes short"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(db));

  // A budget that holds that k: the host memory cannot, and the figures say so.
  j["budget"] = std::int64_t{1} << 62;
  writeJson(hugePlan, j);
  r = run({"run", "--plan", hugePlan.string(), "--iters", "1", "--db", db.string()});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("of host memory ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the pool, in host memory on this device: 4194304 TiB"), std::string::npos)
      << r.err;
  // k samples of 784 floats and a label.
  EXPECT_NE(r.err.find("the synthetic data set (16000000 samples): "), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(db));
  fs::remove(hugePlan);
}

TEST_F(CliPlan, PlanSaysWhichDeviceTheFitsDescribeAndWhetherTheyModelStalls) {
  const std::string device = store::RunReader(kSample).load().meta.device;
  auto r =
      run({"plan", "--db", kSample, "--budget", "16MiB", "--policy", "swap-all", "--batch", "8"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("fits describe     " + device + " (backend cpu, profiled "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("stall model       hand-off "), std::string::npos) << r.out;
  // The same profile as schema version 1 recorded it: no timeline, so no stall model.
  const fs::path v1 = scratch("v1.swapdb");
  fs::copy_file(kSample, v1, fs::copy_options::overwrite_existing);
  for (const char* sql :
       {"ALTER TABLE batches DROP COLUMN dispatch_ns", "ALTER TABLE samples DROP COLUMN ready_ns",
        "ALTER TABLE samples DROP COLUMN copy_overlap_ns", "PRAGMA user_version = 1"}) {
    ASSERT_GE(testing::editDb(v1.string(), sql), 0);
  }
  r = run(
      {"plan", "--db", v1.string(), "--budget", "16MiB", "--policy", "swap-all", "--batch", "8"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("fits describe     " + device), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("records no t_ready (run-database schema version 1)"), std::string::npos)
      << r.out;
  fs::remove(v1);
}

TEST(CliPlanCurves, APlanWhoseStepsHaveNoCurveSaysSoNamingTheLayerTypes) {
  // resnet20 planned on the fmnist-cnn profile: the layer types fmnist-cnn does not have get no
  // curve and count as 0 s; the plan says how many steps that is and which types, as a warning
  // in the text and a note in --json. Expected from the two networks' layer kinds alone.
  const Network profiled = buildZooModel("fmnist-cnn");
  const Network target = buildZooModel("resnet20", ZooOptions{Shape{{1, 28, 28}}, 10});
  std::set<LayerKind> have;
  for (int i = 0; i < profiled.size(); ++i)
    have.insert(profiled.layer(i).kind);
  std::set<std::string> kinds;
  int steps = 0;
  for (int i = 0; i < target.size(); ++i) {
    const LayerKind kind = target.layer(i).kind;
    if (kind == LayerKind::Input || have.count(kind)) continue;
    kinds.insert(std::string(layerKindName(kind)));
    steps += 2;  // forward and backward
  }
  ASSERT_GT(steps, 0);
  std::string names;
  for (const std::string& k : kinds)
    names += (names.empty() ? "" : ", ") + k;
  const std::string warning = std::to_string(steps) +
                              " steps have no fitted curve and are counted as 0 s, so t_iter is "
                              "low by their time (layer types the profile did not record: " +
                              names + ")";
  const std::vector<std::string> args = {"plan",    "--db",    kSample,     "--model", "resnet20",
                                         "--input", "1x28x28", "--classes", "10",      "--budget",
                                         "64MiB",   "--batch", "4"};
  auto r = run(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("  warning           " + kSample + ": " + warning), std::string::npos)
      << r.out;
  std::vector<std::string> withJson = args;
  withJson.push_back("--json");
  r = run(withJson);
  ASSERT_EQ(r.code, 0) << r.err;
  const json doc = json::parse(r.out);
  ASSERT_TRUE(doc.contains("notes")) << r.out;
  EXPECT_NE(std::find(doc["notes"].begin(), doc["notes"].end(), json(warning)), doc["notes"].end())
      << r.out;
  // The profiled network has a curve for every step: no such warning.
  r = run({"plan", "--db", kSample, "--budget", "64MiB", "--batch", "4"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("no fitted curve"), std::string::npos) << r.out;
  // Nor where a step runs no kernel: a ReLU on the minibatch computes no gradient in backward,
  // so no curve is looked for (it was named as a type the profile did not record).
  json net = networkToJson(buildZooModel("fmnist-cnn"));
  json& layers = net["layers"];
  ASSERT_EQ(layers[1]["inputs"], json::array({"data"}));
  layers[1]["inputs"] = json::array({"r0"});
  layers.insert(layers.begin() + 1, json{{"name", "r0"}, {"type", "relu"}, {"inputs", {"data"}}});
  const fs::path file = scratch("relu-on-input.json");
  writeJson(file, net);
  r = run({"plan", "--db", kSample, "--net", file.string(), "--budget", "64MiB", "--batch", "4"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("no fitted curve"), std::string::npos) << r.out;
}

// A layer type recorded at no time at all (every sample 0 ns: below the clock's resolution, as
// a GPU's events time a step that launches no kernel) was measured: it gets the curve t = 0.
// `compare` shows the type, and `plan` does not count it among the types the profile did not
// record.
TEST(CliPlanCurves, ALayerTypeRecordedAtZeroTimeIsMeasuredNotMissing) {
  const fs::path db = scratch("flatten-at-zero.swapdb");
  fs::copy_file(kSample, db, fs::copy_options::overwrite_existing);
  ASSERT_GT(testing::editDb(db.string(),
                            "UPDATE samples SET time_ns = 0, copy_overlap_ns = 0 WHERE layer IN "
                            "(SELECT id FROM layers WHERE kind = 'flatten')"),
            0);

  // The plan of the profiled network has a curve for every step; one of resnet20 lacks the
  // types fmnist-cnn does not have, as from the sample itself, and flatten is not among them.
  const auto missing = [](const std::string& out) {
    const std::size_t at = out.find("no fitted curve");
    return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
  };
  for (const std::vector<std::string>& plan :
       {std::vector<std::string>{"plan", "--budget", "64MiB", "--batch", "4"},
        {"plan", "--model", "resnet20", "--input", "1x28x28", "--classes", "10", "--budget",
         "64MiB", "--batch", "4"}}) {
    SCOPED_TRACE(plan[1]);
    for (const bool withJson : {false, true}) {
      std::vector<std::string> edited = plan, sample = plan;
      edited.insert(edited.end(), {"--db", db.string()});
      sample.insert(sample.end(), {"--db", kSample});
      if (withJson) {
        edited.push_back("--json");
        sample.push_back("--json");
      }
      const auto r = run(edited), s = run(sample);
      ASSERT_EQ(r.code, 0) << r.err;
      ASSERT_EQ(s.code, 0) << s.err;
      EXPECT_EQ(missing(r.out), missing(s.out)) << r.out;
      EXPECT_EQ(missing(r.out).find("flatten"), std::string::npos) << r.out;
    }
  }

  // Both directions of the type at common work: 0 in the edited run, the sample's time in the
  // other, the ratio none.
  auto r = run({"compare", db.string(), kSample, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json doc = json::parse(r.out);
  int found = 0;
  for (const json& c : doc["curves"]) {
    if (c["target"] != "flatten@bytes") continue;
    ++found;
    EXPECT_EQ(c["seconds_a"].get<double>(), 0.0) << c.dump();
    EXPECT_GT(c["seconds_b"].get<double>(), 0.0) << c.dump();
    EXPECT_EQ(c["form_a"], "affine") << c.dump();
  }
  EXPECT_EQ(found, 2) << doc["curves"].dump();
  r = run({"compare", db.string(), kSample});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(
      std::regex_search(r.out, std::regex("\\n *flatten@bytes +fwd +[^\\n]* 0\\.000 +[0-9.]+ +- ")))
      << r.out;
  fs::remove(db);
}

TEST_F(CliPlan, RunReportsStallsAgainstItsRecordedTimeline) {
  ASSERT_EQ(s_result.code, 0) << s_result.err;
  const fs::path db = scratch("stalls.swapdb");
  fs::remove(db);
  const auto r = run({"run", "--plan", s_plan.string(), "--iters", "3", "--warmup", "0", "--db",
                      db.string(), "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  const store::PlanFile plan = store::readPlanFile(s_plan.string());
  const store::RunData d = store::RunReader(db.string()).load();
  ASSERT_EQ(d.iterations.size(), 3u);
  // The measured stall: the median of the recorded iterations' compute-stream idle time.
  std::vector<std::int64_t> totals;
  for (const store::IterationRow& it : d.iterations)
    totals.push_back(it.stall_ns);
  std::sort(totals.begin(), totals.end());
  EXPECT_NEAR(j["stall_s"]["measured"].get<double>(), static_cast<double>(totals[1]) * 1e-9, 1e-12);
  EXPECT_EQ(j["stall_s"]["predicted"].get<double>(), plan.predictions.stall_s);
  // Stalled steps: a step whose stall exceeds 1 % of its iteration, in at least 2 of the 3.
  std::map<int, int> count;
  for (const store::SampleRow& s : d.samples) {
    if (s.direction == store::Direction::Update) continue;
    const auto& it = d.iterations.at(static_cast<std::size_t>(s.iteration));
    if (static_cast<double>(s.stall_ns) > 0.01 * static_cast<double>(it.duration_ns))
      ++count[s.step];
  }
  std::vector<int> measured;
  for (const auto& [step, n] : count)
    if (n >= 2) measured.push_back(step);
  EXPECT_EQ(j["stalled_steps"]["measured"].get<std::vector<int>>(), measured);
  std::vector<int> predicted;
  for (const store::PlanStall& s : plan.predictions.stalls)
    if (s.seconds > 0.01 * plan.predictions.t_iter_s) predicted.push_back(s.step);
  EXPECT_EQ(j["stalled_steps"]["predicted"].get<std::vector<int>>(), predicted);
  for (const char* score : {"precision", "recall", "f1"}) {
    EXPECT_GE(j["stalled_steps"][score].get<double>(), 0.0) << score;
    EXPECT_LE(j["stalled_steps"][score].get<double>(), 1.0) << score;
  }
  // The scores come from each iteration's own stalled steps, whose counts are given with them:
  // the median of the iterations' precision, recall and F1 against the predicted set (an empty
  // set scores 1).
  std::vector<std::vector<int>> stalledIn(d.iterations.size());
  for (const store::SampleRow& s : d.samples) {
    if (s.direction == store::Direction::Update) continue;
    const auto& it = d.iterations.at(static_cast<std::size_t>(s.iteration));
    if (static_cast<double>(s.stall_ns) > 0.01 * static_cast<double>(it.duration_ns))
      stalledIn.at(static_cast<std::size_t>(s.iteration)).push_back(s.step);
  }
  std::vector<int> perIteration;
  std::vector<double> precision, recall, f1;
  for (std::vector<int>& set : stalledIn) {
    std::sort(set.begin(), set.end());
    perIteration.push_back(static_cast<int>(set.size()));
    std::size_t both = 0;
    for (const int step : predicted)
      both += std::binary_search(set.begin(), set.end(), step) ? 1 : 0;
    const double p =
        predicted.empty() ? 1.0 : static_cast<double>(both) / static_cast<double>(predicted.size());
    const double q =
        set.empty() ? 1.0 : static_cast<double>(both) / static_cast<double>(set.size());
    precision.push_back(p);
    recall.push_back(q);
    f1.push_back(p + q > 0 ? 2 * p * q / (p + q) : 0);
  }
  EXPECT_EQ(j["stalled_steps"]["per_iteration"].get<std::vector<int>>(), perIteration) << r.out;
  const auto middle = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];  // three iterations
  };
  EXPECT_DOUBLE_EQ(j["stalled_steps"]["precision"].get<double>(), middle(precision));
  EXPECT_DOUBLE_EQ(j["stalled_steps"]["recall"].get<double>(), middle(recall));
  EXPECT_DOUBLE_EQ(j["stalled_steps"]["f1"].get<double>(), middle(f1));
  // Every step has a predicted start, so the start error is reported, bounded by the iteration.
  ASSERT_TRUE(j["start_error_s"].is_object()) << r.out;
  EXPECT_LE(j["start_error_s"]["median"].get<double>(), j["start_error_s"]["max"].get<double>());
  EXPECT_GE(j["start_error_s"]["max_step"].get<int>(), 1);
  // The schedule the plan predicts is the one that ran: its reuse delay and moved prefetches are
  // the batch the run recorded.
  ASSERT_EQ(d.batches.size(), 1u);
  EXPECT_GE(plan.prefetches_moved, 0);
  EXPECT_EQ(j["prefetches_moved"]["planned"].get<int>(), plan.prefetches_moved);
  EXPECT_EQ(j["prefetches_moved"]["run"].get<int>(), d.batches[0].hoisted_prefetches);
  EXPECT_EQ(j["reuse_delay"]["run"].get<int>(), d.batches[0].reuse_delay);
  EXPECT_EQ(plan.prefetches_moved, d.batches[0].hoisted_prefetches);
  EXPECT_EQ(plan.reuse_delay, d.batches[0].reuse_delay);
  fs::remove(db);
}

TEST_F(CliPlan, RunPrintsTheStalledStepCountsItsScoresComeFrom) {
  ASSERT_EQ(s_result.code, 0) << s_result.err;
  const auto r = run({"run", "--plan", s_plan.string(), "--iters", "2", "--warmup", "0"});
  ASSERT_EQ(r.code, 0) << r.err;
  // The sets, the majority's; then each iteration's count, and the scores as medians of those.
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("\n  stalled +[0-9]+ steps? +[0-9]+ steps? +\\(stall > 1 % of t_iter; "
                        "measured: the steps stalled in more than half of the 2 iterations\\)\n")))
      << r.out;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("\n  scores      each iteration's stalled steps \\([0-9]+ and [0-9]+\\) "
                        "against the [0-9]+ predicted: precision [01]\\.[0-9]{2}, recall "
                        "[01]\\.[0-9]{2}, F1 [01]\\.[0-9]{2}, medians over the iterations "
                        "\\(precision is 1 where none is predicted, recall 1 where none "
                        "stalled\\)\n")))
      << r.out;
  EXPECT_EQ(r.out.find("the scores: medians of each iteration's own"), std::string::npos) << r.out;
  // Beyond ten iterations, their range and median, without brackets inside the line's own (it
  // read "(from 4 to 5 (median 5.0))").
  const auto many = run({"run", "--plan", s_plan.string(), "--iters", "11", "--warmup", "0"});
  ASSERT_EQ(many.code, 0) << many.err;
  EXPECT_TRUE(std::regex_search(
      many.out, std::regex("\n  scores      each iteration's stalled steps \\(from [0-9]+ to "
                           "[0-9]+, median [0-9]+(\\.5)?\\) against the [0-9]+ predicted: ")))
      << many.out;
}

TEST(CliPlanDevice, ABudgetAboveTheProfiledDevicesMemoryIsWarnedOfInTextAndJson) {
  // The sample profile's device has 23.5 GiB; a plan for 1 TiB is made, and said not to run there.
  const store::RunData d = store::RunReader(kSample).load();
  ASSERT_GT(d.meta.device_memory, 0);
  ASSERT_LT(d.meta.device_memory, std::int64_t{1} << 40);
  const std::string want = "the budget is above the " + formatBytes(d.meta.device_memory) +
                           " the profiled device has: a plan for it cannot run there";
  EXPECT_EQ(store::budgetAboveDeviceWarning(std::int64_t{1} << 40, d.meta.device_memory), want);
  const std::vector<std::string> plan = {"plan",    "--db", kSample,    "--budget", "1TiB",
                                         "--batch", "8",    "--policy", "swap-all"};
  const auto text = run(plan);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.err.find("warning: --budget 1TiB: " + want), std::string::npos) << text.err;
  EXPECT_EQ(text.out.find(want), std::string::npos) << "stderr only:\n" << text.out;
  std::vector<std::string> withJson = plan;
  withJson.push_back("--json");
  const auto j = run(withJson);
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_EQ(j.err, "");
  const json doc = json::parse(j.out);
  ASSERT_TRUE(doc.contains("notes")) << j.out;
  EXPECT_NE(std::find(doc["notes"].begin(), doc["notes"].end(), json("--budget: " + want)),
            doc["notes"].end())
      << doc["notes"].dump();
  // At the device's own memory, and below it, nothing is said.
  const auto at = run({"plan", "--db", kSample, "--budget", std::to_string(d.meta.device_memory),
                       "--batch", "8", "--policy", "swap-all", "--json"});
  ASSERT_EQ(at.code, 0) << at.err;
  EXPECT_EQ(at.out.find("profiled device has"), std::string::npos) << at.out;
  EXPECT_EQ(store::budgetAboveDeviceWarning(d.meta.device_memory, d.meta.device_memory), "");
  EXPECT_EQ(store::budgetAboveDeviceWarning(std::int64_t{1} << 40, 0), "")
      << "a device of unknown memory";
  // Just above: the two print alike, so the bytes are given (it said "above the 23.5 GiB" of a
  // budget printed as 23.5 GiB).
  EXPECT_EQ(store::budgetAboveDeviceWarning(d.meta.device_memory + (1 << 20), d.meta.device_memory),
            "the budget is above the " + formatBytes(d.meta.device_memory) +
                " the profiled device has (" + std::to_string(d.meta.device_memory + (1 << 20)) +
                " bytes against " + std::to_string(d.meta.device_memory) +
                "): a plan for it cannot run there");
}

}  // namespace
}  // namespace swapscope::cli
