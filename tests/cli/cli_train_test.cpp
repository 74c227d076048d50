// SPDX-License-Identifier: MIT
/// `swapscope train` in-process: a short synthetic run with its JSON report, the same weights
/// whatever the policy, a budget below the plan refused with its shortfall, and bad options.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/network_analysis.h"
#include "run_cli.h"
#include "graph/zoo.h"

namespace swapscope::cli {
namespace {

using testing::Result;
using testing::run;

std::vector<std::string> trainArgs(const std::string& policy, const std::string& budget) {
  return {"train",   "--model", "fmnist-cnn", "--data", "synthetic", "--batch", "8",
          "--iters", "3",       "--budget",   budget,   "--policy",  policy,    "--json"};
}

TEST(CliTrain, ReportsLossThroughputPoolAndSwapTraffic) {
  const Result r = run(trainArgs("swap-all", "16MiB"));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["iterations"], 3);
  EXPECT_GT(j["images_per_s"].get<double>(), 0);
  EXPECT_TRUE(std::isfinite(j["final_loss"].get<double>()));
  EXPECT_EQ(j["pool"]["high_water"], j["pool"]["predicted_peak"]);
  const Network net = buildZooModel("fmnist-cnn");
  const auto costs = computeLayerCosts(net);
  const auto plan = planMemory(net, costs, makeSwapSet(SwapPolicy::SwapAll, net, costs));
  EXPECT_EQ(j["pool"]["high_water"].get<std::int64_t>(), plan.curve.peak(8));
  EXPECT_GT(j["offload_bytes"].get<std::int64_t>(), 0);
  EXPECT_GE(j["stall_seconds"].get<double>(), 0);
  EXPECT_FALSE(j.contains("test")) << "synthetic data has no test split";
}

TEST(CliTrain, SavedWeightsAreIdenticalUnderKeepAllAndVdnnConv) {
  const std::string dir = ::testing::TempDir();
  auto keep = trainArgs("keep-all", "64MiB");
  keep.insert(keep.end(), {"--save-weights", dir + "/keep.w"});
  auto vdnn = trainArgs("vdnn-conv", "64MiB");
  vdnn.insert(vdnn.end(), {"--save-weights", dir + "/vdnn.w"});
  ASSERT_EQ(run(keep).code, kExitOk);
  ASSERT_EQ(run(vdnn).code, kExitOk);
  auto slurp = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string a = slurp(dir + "/keep.w"), b = slurp(dir + "/vdnn.w");
  EXPECT_GT(a.size(), 400000u);
  EXPECT_EQ(a, b);

  // Loading them back continues from there; the wrong network is refused.
  auto resume = trainArgs("keep-all", "64MiB");
  resume.insert(resume.end(), {"--load-weights", dir + "/keep.w"});
  EXPECT_EQ(run(resume).code, kExitOk);
  const Result wrong = run({"train", "--model", "resnet20", "--data", "synthetic", "--batch", "2",
                            "--iters", "1", "--budget", "1GiB", "--load-weights", dir + "/keep.w"});
  EXPECT_EQ(wrong.code, kExitUsage);
  EXPECT_NE(wrong.err.find("keep.w"), std::string::npos) << wrong.err;
}

TEST(CliTrain, ABudgetBelowThePlanIsRefusedWithTheShortfall) {
  const Result r = run(trainArgs("keep-all", "1MiB"));
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("bytes short"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("at step"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << "refused before the run";
}

TEST(CliTrain, BadOptionsAreUsageErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"train", "--model", "fmnist-cnn", "--data", "imagenet", "--batch", "8", "--iters", "1",
        "--budget", "1GiB"},
       "unknown data set 'imagenet'"},
      {{"train", "--model", "fmnist-cnn", "--data", "synthetic", "--batch", "8", "--budget",
        "1GiB"},
       "exactly one of --iters"},
      {{"train", "--model", "fmnist-cnn", "--data", "synthetic", "--batch", "8", "--iters", "1",
        "--epochs", "1", "--budget", "1GiB"},
       "exactly one of --iters"},
      {{"train", "--model", "fmnist-cnn", "--data", "synthetic", "--batch", "8", "--iters", "1",
        "--budget", "1GiB", "--device", "cpu:2"},
       "cpu:2"},
      {{"train", "--model", "fmnist-cnn", "--data", "synthetic", "--batch", "8", "--iters", "1",
        "--budget", "1GiB", "--lr", "fast"},
       "--lr: 'fast'"},
      {{"train", "--model", "fmnist-cnn", "--data", "synthetic", "--batch", "8", "--iters", "1",
        "--budget", "1GiB", "--policy", "lru"},
       "unknown policy 'lru'"},
      {{"train", "--model", "fmnist-cnn", "--data", "fashion-mnist", "--batch", "8", "--iters", "1",
        "--budget", "1GiB", "--data-dir", "/nonexistent"},
       "/nonexistent/train-images-idx3-ubyte.gz: no such file"},
      {{"train", "--model", "resnet20", "--data", "fashion-mnist", "--batch", "8", "--iters", "1",
        "--budget", "1GiB"},
       "expects [3,32,32]"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = run(args);
    EXPECT_EQ(r.code, kExitUsage) << message;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace swapscope::cli
