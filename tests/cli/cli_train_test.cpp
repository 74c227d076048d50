// SPDX-License-Identifier: MIT
/// `swapscope train` in-process: a short synthetic run with its JSON report, the same weights
/// whatever the policy, a budget below the plan refused with its shortfall, and bad options.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "analysis/network_analysis.h"
#include "graph/zoo.h"
#include "run_cli.h"
#include "runtime/dataset.h"
#include "runtime/trainer.h"
#include "spawn_cli.h"

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
  const auto plan = planMemory(net, costs, makeSwapSet(Policy::SwapAll, net, costs));
  EXPECT_EQ(j["pool"]["high_water"].get<std::int64_t>(), plan.curve.peak(8));
  EXPECT_GT(j["offload_bytes"].get<std::int64_t>(), 0);
  EXPECT_GE(j["stall_seconds"].get<double>(), 0);
  EXPECT_FALSE(j.contains("test")) << "synthetic data has no test split";
}

/// What a `train` run printed (standard output and error, in `printed`) once SIGINT stopped it:
/// sent `delay` after the first line holding `marker` is out, the run's exit status checked.
std::string interruptedTraining(const std::vector<std::string>& args, const std::string& printed,
                                const std::string& marker, std::chrono::milliseconds delay) {
  const pid_t pid = testing::startCli(args, printed);
  EXPECT_GT(pid, 0);
  if (pid <= 0) return "";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto text = [&] {
    std::ifstream in(printed);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  while (text().find(marker) == std::string::npos && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(delay);
  kill(pid, SIGINT);
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status)) << "killed by the signal";
  EXPECT_EQ(WEXITSTATUS(status), kExitFailure);
  return text();
}

TEST(CliTrain, AnInterruptedTrainingSavesItsWeightsAndExitsOne) {
  // As profile and run: Ctrl-C stops after the iteration, and the exit status says the training
  // did not finish (it used to be 0); the weights reached are saved all the same.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("swapscope-train-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string printed = (dir / "out.txt").string(), weights = (dir / "w.weights").string();
  // Training has begun once the first line is out (its interrupt handler follows at once).
  const std::string text =
      interruptedTraining({"train", "--model", "fmnist-cnn", "--data", "synthetic", "--batch", "8",
                           "--iters", "100000", "--budget", "16MiB", "--save-weights", weights},
                          printed, "training ", std::chrono::milliseconds(500));
  EXPECT_NE(text.find("interrupted after "), std::string::npos) << text;
  EXPECT_NE(text.find("weights             saved to '" + weights + "'"), std::string::npos) << text;
  EXPECT_TRUE(std::filesystem::exists(weights));
  std::filesystem::remove_all(dir);
}

TEST(CliTrain, AnInterruptionBeforeAnIterationCompletesLeavesTheWeightFileAsItWas) {
  // Stopped within its first iteration, a training has learnt nothing: its weights are the
  // starting ones, and --force would have replaced an earlier training's file with them.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("swapscope-train-first-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string printed = (dir / "out.txt").string(), weights = (dir / "w.weights").string();
  const std::string earlier = "an earlier training's weights";
  std::ofstream(weights, std::ios::binary) << earlier;
  // An iteration of k = 2048 takes seconds on this CPU, and the interrupt handler is installed
  // once the line with the predicted peak is out: the signal lands in the first iteration.
  const std::string text = interruptedTraining(
      {"train", "--model", "fmnist-cnn", "--data", "synthetic", "--synthetic-size", "2048",
       "--batch", "2048", "--iters", "3", "--budget", "1GiB", "--save-weights", weights, "--force"},
      printed, "predicted peak", std::chrono::milliseconds(100));
  EXPECT_NE(text.find("interrupted after 0 iterations"), std::string::npos) << text;
  EXPECT_NE(text.find("weights             not saved: interrupted before an iteration "
                      "completed ('" +
                      weights + "' is left as it was)"),
            std::string::npos)
      << text;
  std::ifstream in(weights, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), earlier);
  std::filesystem::remove_all(dir);
}

// --epochs 4611686018427387905 overflowed the count of iterations: 4 were trained, exit 0.
TEST(CliTrain, EpochsAreAtMostAMillionAsPlansAre) {
  const std::vector<std::string> base = {"train",     "--model",          "fmnist-cnn", "--data",
                                         "synthetic", "--batch",          "16",         "--budget",
                                         "64MiB",     "--synthetic-size", "64",         "--epochs"};
  for (const std::string& e : {std::string("4611686018427387905"), std::string("1000001")}) {
    std::vector<std::string> args = base;
    args.push_back(e);
    const Result r = run(args);
    EXPECT_EQ(r.code, kExitUsage) << r.out << r.err;
    EXPECT_NE(r.err.find("--epochs"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("1000000"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("trained"), std::string::npos) << r.out;
  }
}

TEST(CliTrain, ReportsTheMedianIterationAfterTheWarmUp) {
  auto args = trainArgs("keep-all", "16MiB");
  args.insert(args.end(), {"--warmup", "2"});
  Result r = run(args);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["warmup"], 2);
  EXPECT_EQ(j["iterations"], 3);  // the warm-up iterations train too
  ASSERT_TRUE(j["t_iter_median_s"].is_number()) << r.out;
  const double median = j["t_iter_median_s"].get<double>();
  EXPECT_GT(median, 0);
  EXPECT_DOUBLE_EQ(j["images_per_s_median"].get<double>(), 8 / median);

  // Nothing left after the warm-up: no median, rather than one of warm-up iterations.
  args.back() = "3";
  r = run(args);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["t_iter_median_s"].is_null()) << r.out;
  EXPECT_TRUE(j["images_per_s_median"].is_null()) << r.out;

  // The text report states it with the warm-up.
  args = {"train",   "--model", "fmnist-cnn", "--data", "synthetic", "--batch", "8",
          "--iters", "3",       "--budget",   "16MiB",  "--warmup",  "1"};
  r = run(args);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find(" ms after 1 warm-up: "), std::string::npos) << r.out;

  args.back() = "-1";
  EXPECT_EQ(run(args).code, kExitUsage);
}

TEST(CliTrain, AWarmUpCoveringEveryIterationIsWarnedOfNamingBothOptions) {
  const std::vector<std::string> base = {"train",   "--model", "fmnist-cnn", "--data", "synthetic",
                                         "--batch", "8",       "--budget",   "16MiB"};
  std::vector<std::string> args = base;
  args.insert(args.end(), {"--iters", "2", "--warmup", "5"});
  Result r = run(args);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.err.find("warning: --warmup 5 leaves none of the 2 iterations of --iters 2 for the "
                       "median iteration, so none is reported (give --warmup below 2)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("(no median iteration: the 2 iterations were all warm-up, --warmup 5)"),
            std::string::npos)
      << r.out;
  // --epochs: the iterations are the epochs' minibatches (4 of 8 synthetic samples each).
  args = base;
  args.insert(args.end(), {"--epochs", "1", "--warmup", "4", "--json"});
  r = run(args);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.err.find("warning: --warmup 4 leaves none of the 4 iterations of --epochs 1 (4 "
                       "minibatches of 8) for the median iteration"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out)["t_iter_median_s"].is_null());
  // One iteration left after the warm-up: nothing to say.
  args = base;
  args.insert(args.end(), {"--iters", "2", "--warmup", "1"});
  r = run(args);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.err.find("--warmup"), std::string::npos) << r.err;
}

TEST(CliTrain, ADivergedTrainingSaysSoAndWritesNoWeightFileThatWouldBeRefused) {
  // --lr 100 overflows batch norm's running statistics within 4 iterations, the loss still
  // finite: the weights reached are no weights --load-weights reads.
  const std::string file = (std::filesystem::temp_directory_path() /
                            ("swapscope-diverged-" + std::to_string(getpid()) + ".weights"))
                               .string();
  std::ofstream(file) << "an earlier training's weights";
  const std::vector<std::string> base = {"train",   "--model", "fmnist-cnn", "--data", "synthetic",
                                         "--batch", "8",       "--iters",    "4",      "--budget",
                                         "16MiB",   "--lr",    "100"};
  std::vector<std::string> args = base;
  args.insert(args.end(), {"--save-weights", file, "--force"});
  Result r = run(args);
  EXPECT_EQ(r.code, kExitFailure) << r.out << r.err;
  EXPECT_NE(r.err.find("swapscope train: error: the weight file --save-weights '" + file +
                       "' is not written: the training diverged: after iteration 4"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(" holds "), std::string::npos) << r.err;  // names the tensor and value
  EXPECT_NE(r.err.find("; try a smaller --lr ('" + file + "' is left as it was)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("  weights             not saved: after iteration 4, '"), std::string::npos)
      << r.out;
  std::ifstream in(file);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "an earlier training's weights");

  // --json: the report, then the same error.
  args.push_back("--json");
  r = run(args);
  EXPECT_EQ(r.code, kExitFailure) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["diverged"].is_string()) << r.out;
  EXPECT_FALSE(j["save_weights"]["saved"].get<bool>());
  EXPECT_NE(j["save_weights"]["reason"].get<std::string>().find("not saved: after iteration 4"),
            std::string::npos);

  // Without --save-weights it is a warning.
  r = run(base);
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.err.find("warning: the training diverged: after iteration 4 (loss "),
            std::string::npos)
      << r.err;

  // The engine never writes what it would refuse, whoever asks.
  const Network net = buildZooModel("fmnist-cnn");
  std::vector<std::vector<float>> weights, stats;
  const auto costs = computeLayerCosts(net);
  for (int i = 0; i < net.size(); ++i) {
    if (costs[i].params > 0) weights.emplace_back(static_cast<std::size_t>(costs[i].params), 0.5f);
    if (costs[i].running_stats > 0)
      stats.emplace_back(static_cast<std::size_t>(costs[i].running_stats), 1.0f);
  }
  EXPECT_EQ(rt::unsavableWeights(net, weights, stats), "");
  weights.back()[3] = std::numeric_limits<float>::quiet_NaN();
  const std::string why = rt::unsavableWeights(net, weights, stats);
  EXPECT_NE(why.find(".weights' holds NaN at value 3 of "), std::string::npos) << why;
  files::OutputRules rules;
  rules.force = true;
  try {
    rt::saveWeights(file, net, weights, stats, rules);
    ADD_FAILURE() << "saved NaN weights";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    EXPECT_NE(std::string(e.what()).find("is not written: " + why), std::string::npos) << e.what();
  }
  in = std::ifstream(file);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "an earlier training's weights");
  std::filesystem::remove(file);
}

TEST(CliTrain, SavedWeightsAreIdenticalUnderKeepAllAndVdnnConv) {
  const std::string dir = ::testing::TempDir();
  std::filesystem::remove(dir + "/keep.w");  // an earlier run's: --save-weights never replaces
  std::filesystem::remove(dir + "/vdnn.w");
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

TEST(CliTrain, TheMultiTensorUpdateTrainsAsThePerLayerUpdate) {
  const std::string dir = ::testing::TempDir();
  std::filesystem::remove(dir + "/per-layer.w");
  std::filesystem::remove(dir + "/multi.w");
  auto perLayer = trainArgs("swap-all", "64MiB");
  perLayer.insert(perLayer.end(), {"--save-weights", dir + "/per-layer.w"});
  auto multi = trainArgs("swap-all", "64MiB");
  multi.insert(multi.end(), {"--update", "multi-tensor", "--save-weights", dir + "/multi.w"});
  const Result a = run(perLayer), b = run(multi);
  ASSERT_EQ(a.code, kExitOk) << a.err;
  ASSERT_EQ(b.code, kExitOk) << b.err;
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  EXPECT_EQ(ja["update"], "per-layer");
  EXPECT_EQ(jb["update"], "multi-tensor");
  EXPECT_EQ(ja["final_loss"], jb["final_loss"]);
  // The update's tasks: one per layer with weights against one.
  int withWeights = 0;
  for (const LayerCost& c : computeLayerCosts(buildZooModel("fmnist-cnn")))
    withWeights += c.params > 0 ? 1 : 0;
  ASSERT_GT(withWeights, 1);
  EXPECT_EQ(ja["last_iteration"]["tasks"].get<int>() - jb["last_iteration"]["tasks"].get<int>(),
            withWeights - 1);
  auto slurp = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(slurp(dir + "/per-layer.w"), slurp(dir + "/multi.w"));

  auto bad = trainArgs("keep-all", "64MiB");
  bad.insert(bad.end(), {"--update", "fused"});
  const Result r = run(bad);
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--update: unknown update 'fused'"), std::string::npos) << r.err;
}

TEST(CliTrain, RecomputeLightRunsAtItsPeakWithKeepAllsWeights) {
  // fmnist-cnn re-makes its flatten and dropout outputs; the pool's high-water mark is the
  // analyzer's peak with them, and the saved weights are keep-all's byte for byte.
  const std::string dir = ::testing::TempDir();
  std::filesystem::remove(dir + "/keep-rl.w");
  std::filesystem::remove(dir + "/rl.w");
  const Network net = buildZooModel("fmnist-cnn");
  const auto costs = computeLayerCosts(net);
  const auto plan = planMemory(net, costs, Policy::RecomputeLight);
  const std::string budget = std::to_string(plan.curve.peak(8));
  auto keep = trainArgs("keep-all", "64MiB");
  keep.insert(keep.end(), {"--save-weights", dir + "/keep-rl.w"});
  auto rl = trainArgs("recompute-light", budget);
  rl.insert(rl.end(), {"--save-weights", dir + "/rl.w"});
  ASSERT_EQ(run(keep).code, kExitOk);
  const Result r = run(rl);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["policy"], "recompute-light");
  EXPECT_EQ(j["pool"]["high_water"].get<std::int64_t>(), plan.curve.peak(8));
  auto slurp = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(slurp(dir + "/keep-rl.w"), slurp(dir + "/rl.w"));
}

TEST(CliTrain, SubBatchesTrainKInTheMemoryOfOneSubBatch) {
  // k = 8 in 4 sub-batches: the pool's high-water mark is the analyzer's peak at 2, which is
  // what `analyze --sub-batches 4` shows, and a budget of exactly it trains.
  const Network net = buildZooModel("fmnist-cnn");
  const auto plan = planMemory(net, computeLayerCosts(net), Policy::SwapAll);
  const std::int64_t peak = plan.curve.peak(2);
  ASSERT_LT(peak, plan.curve.peak(8));
  const Result a = run({"analyze", "--model", "fmnist-cnn", "--batch", "8", "--policy", "swap-all",
                        "--sub-batches", "4", "--budget", std::to_string(peak), "--json"});
  ASSERT_EQ(a.code, kExitOk) << a.err;
  const auto aj = nlohmann::json::parse(a.out);
  EXPECT_EQ(aj["sub_batches"], 4);
  EXPECT_EQ(aj["memory"]["sub_batch"], 2);
  EXPECT_EQ(aj["memory"]["swap_all_peak"]["bytes"].get<std::int64_t>(), peak);
  EXPECT_EQ(aj["k_max"]["swap_all"], 8) << "S times the largest sub-batch that fits";
  EXPECT_EQ(aj["batch"], 8);
  // The work is the whole minibatch's; only the memory is one sub-batch's.
  const Result whole =
      run({"analyze", "--model", "fmnist-cnn", "--batch", "8", "--policy", "swap-all", "--json"});
  ASSERT_EQ(whole.code, kExitOk);
  EXPECT_EQ(aj["training_flops"], nlohmann::json::parse(whole.out)["training_flops"]);
  auto args = trainArgs("swap-all", std::to_string(peak));
  args.insert(args.end(), {"--sub-batches", "4"});
  const Result r = run(args);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["batch"], 8);
  EXPECT_EQ(j["sub_batches"], 4);
  EXPECT_EQ(j["pool"]["high_water"].get<std::int64_t>(), peak);
  EXPECT_EQ(j["pool"]["predicted_peak"].get<std::int64_t>(), peak);
  // The same by size, and the minibatch whole does not fit that budget.
  auto bySize = trainArgs("swap-all", std::to_string(peak));
  bySize.insert(bySize.end(), {"--sub-batch-size", "2"});
  EXPECT_EQ(run(bySize).code, kExitOk);
  EXPECT_EQ(run(trainArgs("swap-all", std::to_string(peak))).code, kExitUsage);
}

TEST(CliTrain, BadSubBatchesNameTheOptionAndValue) {
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"--sub-batches", "0"}, "--sub-batches 0: the sub-batch count must be at least 1, not 0"},
      {{"--sub-batches", "-2"}, "--sub-batches -2: the sub-batch count must be at least 1"},
      {{"--sub-batches", "3"},
       "--sub-batches 3: the minibatch of 8 does not split evenly: 8 is "
       "not a multiple of 3"},
      {{"--sub-batches", "9"}, "--sub-batches 9: a minibatch of 8 has no sub-batch count of 9"},
      {{"--sub-batches", "two"}, "option --sub-batches: expected an integer, got 'two'"},
      {{"--sub-batch-size", "3"}, "--sub-batch-size 3: the minibatch of 8 does not split"},
      {{"--sub-batch-size", "16"}, "--sub-batch-size 16: a minibatch of 8 has no sub-batch size"},
      {{"--sub-batches", "2", "--sub-batch-size", "4"}, "give at most one of --sub-batches"}};
  for (const auto& [extra, why] : cases) {
    auto args = trainArgs("keep-all", "64MiB");
    args.insert(args.end(), extra.begin(), extra.end());
    const Result r = run(args);
    EXPECT_EQ(r.code, kExitUsage) << extra[0] << " " << extra[1];
    EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
    // analyze reads the same options.
    std::vector<std::string> a{"analyze", "--model", "fmnist-cnn", "--batch", "8"};
    a.insert(a.end(), extra.begin(), extra.end());
    const Result ar = run(a);
    EXPECT_EQ(ar.code, kExitUsage);
    EXPECT_NE(ar.err.find(why), std::string::npos) << ar.err;
  }
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

TEST(CliTrain, AHugeMinibatchIsRefusedAtOnceWithTheShortfall) {
  const Network net = buildZooModel("fmnist-cnn");
  const auto costs = computeLayerCosts(net);
  const MemoryCurve curve = planMemory(net, costs, makeSwapSet(Policy::KeepAll, net, costs)).curve;
  const std::int64_t budget = 64 << 20;
  for (const std::int64_t k : {100000, 200000, 1048576}) {
    const Result r = run({"train", "--model", "fmnist-cnn", "--data", "synthetic", "--batch",
                          std::to_string(k), "--iters", "1", "--budget", "64MiB"});
    EXPECT_EQ(r.code, kExitUsage) << k << ": " << r.err;
    EXPECT_NE(r.err.find(": " + std::to_string(curve.peak(k) - budget) + " bytes short"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(" at step "), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << "refused before the run";
  }
}

TEST(CliTrain, ABudgetBeyondTheHostMemoryIsRefusedNamingTheFigures) {
  // On the CPU backend the pool is host memory: 2^63 - 1 bytes is more than any machine has.
  const Result r = run({"train", "--model", "fmnist-cnn", "--data", "synthetic", "--batch", "8",
                        "--iters", "1", "--budget", "9223372036854775807"});
  EXPECT_EQ(r.code, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("of host memory ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the pool, in host memory on this device: 8388608 TiB"), std::string::npos)
      << r.err;
  // 32 samples (4 minibatches) of 784 floats and a label.
  EXPECT_NE(r.err.find("the synthetic data set (32 samples): 98.1 KiB"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(" available: "), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

/// Runs the real program with its address space limited to `limit` bytes, so that a large
/// allocation fails at once instead of being made. Returns the exit status and the standard
/// error.
testing::Result runWithAddressSpaceLimit(const std::vector<std::string>& args, rlim_t limit) {
  int fds[2];
  if (::pipe(fds) != 0) return {-1, "", "pipe failed"};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    rlimit lim{limit, limit};
    ::setrlimit(RLIMIT_AS, &lim);
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(SWAPSCOPE_CLI_BINARY));
    for (const std::string& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(SWAPSCOPE_CLI_BINARY, argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string err;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
    err.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), "", err};
}

TEST(CliTrainBinary, UnderATwoGibAddressSpaceHugeRunsAreRefusedNotOutOfMemory) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of shadow address space, so no program "
                  "built with it starts under a 2 GiB address-space limit";
#endif
  constexpr rlim_t kLimit = rlim_t{2} << 30;
  const std::vector<std::string> train = {"train",     "--model", "fmnist-cnn", "--data",
                                          "synthetic", "--iters", "1"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> a = train;
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  // The limit leaves room for a normal run.
  const auto small = runWithAddressSpaceLimit(with({"--batch", "8", "--budget", "64MiB"}), kLimit);
  ASSERT_EQ(small.code, 0) << small.err;
  for (const char* batch : {"100000", "200000", "1048576"}) {
    const auto r = runWithAddressSpaceLimit(with({"--batch", batch, "--budget", "64MiB"}), kLimit);
    EXPECT_EQ(r.code, 2) << batch << ": " << r.err;
    EXPECT_NE(r.err.find("bytes short"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("bad_alloc"), std::string::npos) << r.err;
  }
  const auto host =
      runWithAddressSpaceLimit(with({"--batch", "8", "--budget", "9223372036854775807"}), kLimit);
  EXPECT_EQ(host.code, 2) << host.err;
  EXPECT_NE(host.err.find("of host memory"), std::string::npos) << host.err;
}

}  // namespace
}  // namespace swapscope::cli

namespace swapscope::cli {
namespace {

// The accuracy bar of the CPU backend: one epoch of the Fashion-MNIST CNN at k = 64 with the
// default SGD reaches 85 % on the test split (about a minute on two cores).
TEST(CliTrainSlow, OneFashionMnistEpochReachesEightyFivePercent) {
  const std::string data = std::string(rt::kFashionMnistDir) + "/train-images-idx3-ubyte.gz";
  if (!std::filesystem::exists(data)) {
    GTEST_SKIP() << "Fashion-MNIST is not installed (Debian package dataset-fashion-mnist)";
  }
  const Result r = run({"train", "--model", "fmnist-cnn", "--data", "fashion-mnist", "--batch",
                        "64", "--epochs", "1", "--budget", "64MiB", "--json"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["test"]["samples"], 10000);
  EXPECT_GE(j["test"]["accuracy"].get<double>(), 0.85);
  EXPECT_EQ(j["pool"]["high_water"], j["pool"]["predicted_peak"]);
}

}  // namespace
}  // namespace swapscope::cli
