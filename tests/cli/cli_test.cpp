// SPDX-License-Identifier: MIT
/// The CLI verbs run in-process: exit codes, --json documents, --dump-net and error messages.
#include "run_cli.h"

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analysis/network_analysis.h"
#include "common/bytes.h"
#include "graph/zoo.h"

namespace swapscope::cli {
namespace {

using testing::Result;
using testing::run;

TEST(Cli, ModelsListsTheWholeZoo) {
  const Result r = run({"models"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  for (const ZooEntry& e : zooEntries())
    EXPECT_NE(r.out.find(e.name), std::string::npos);
  EXPECT_NE(r.out.find("25,557,032"), std::string::npos);  // resnet50's parameters

  const Result j = run({"models", "--json"});
  ASSERT_EQ(j.code, kExitOk);
  const auto doc = nlohmann::json::parse(j.out);
  ASSERT_EQ(doc.size(), zooEntries().size());
  EXPECT_EQ(doc[0]["name"], "alexnet");
  EXPECT_EQ(doc[0]["params"], 61100840);
}

TEST(Cli, AnalyzeJsonHasTheDocumentedKeys) {
  const Result r =
      run({"analyze", "--model", "resnet18", "--batch", "16", "--budget", "2GiB", "--json"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  for (const char* key : {"params", "forward_macs", "forward_flops", "layers", "memory", "k_max"}) {
    EXPECT_TRUE(doc.contains(key)) << key;
  }
  EXPECT_EQ(doc["params"], 11689512);
  // Independent check against the analyzer library at the same k.
  const NetworkAnalysis a = analyzeNetwork(buildZooModel("resnet18"));
  EXPECT_EQ(doc["forward_macs"], a.totals.fwd_macs * 16);
  EXPECT_EQ(doc["memory"]["keep_all_peak"]["bytes"], a.keep_all.curve.peak(16));
  EXPECT_EQ(doc["memory"]["swap_all_peak"]["bytes"], a.swap_all.curve.peak(16));
  EXPECT_EQ(doc["k_max"]["swap_all"], a.swap_all.curve.kMax(std::int64_t{2} << 30));
  EXPECT_EQ(doc["layers"].size(), 71u);
  EXPECT_EQ(doc["layers"][1]["name"], "conv1");
  EXPECT_EQ(doc["layers"][1]["output"], nlohmann::json::array({64, 112, 112}));
  EXPECT_EQ(doc["memory"]["curve"].size(), 140u);  // 2N steps, N = 70 non-input layers
}

TEST(Cli, AnalyzeJsonGivesTheHostMemoryOfARunOfThePlan) {
  // What a run of the swap-all plan at k holds in host memory (its pool in device memory): the
  // swapped FMs' host copies grow with k, the weights' host copy does not.
  auto hostAt = [](int k) {
    const Result r = run({"analyze", "--model", "resnet18", "--batch", std::to_string(k),
                          "--policy", "swap-all", "--json"});
    EXPECT_EQ(r.code, kExitOk) << r.err;
    return nlohmann::json::parse(r.out)["host_memory"];
  };
  const auto h8 = hostAt(8), h16 = hostAt(16);
  EXPECT_EQ(h16["batch"], 16);
  std::int64_t sum = 0;
  for (const auto& part : h16["parts"])
    sum += part["bytes"].get<std::int64_t>();
  EXPECT_EQ(h16["bytes"].get<std::int64_t>(), sum);
  const Network net = buildZooModel("resnet18");
  const auto costs = computeLayerCosts(net);
  const SwapSet swapped = makeSwapSet(Policy::SwapAll, net, costs);
  std::int64_t perSample = net.sampleShape().numel() * 4 + 4 + net.classes() * 4;  // staging
  for (int i = 0; i < net.size(); ++i) {
    if (swapped[i] && i != net.inputLayer()) perSample += costs[i].fm.at(1);
  }
  EXPECT_EQ(h16["bytes"].get<std::int64_t>() - h8["bytes"].get<std::int64_t>(), 8 * perSample);
}

TEST(Cli, AnalyzeRecomputeLightNamesItsRecomputedFmsAndItsPeakAndKMax) {
  const Network net = buildZooModel("resnet20");
  const auto costs = computeLayerCosts(net);
  const RecomputeSet recomputed = makeRecomputeSet(Policy::RecomputeLight, net, costs);
  const MemoryPlan plan = planMemory(net, costs, Policy::RecomputeLight);
  Result r = run({"analyze", "--model", "resnet20", "--batch", "32", "--budget", "64MiB",
                  "--policy", "recompute-light", "--json"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  int count = 0;
  for (int i = 0; i < net.size(); ++i) {
    EXPECT_EQ(doc["layers"][i]["recomputed"], static_cast<bool>(recomputed[i])) << i;
    count += recomputed[i] ? 1 : 0;
  }
  EXPECT_GT(count, 0);
  EXPECT_EQ(doc["memory"]["policy_peak"]["bytes"], plan.curve.peak(32));
  EXPECT_EQ(doc["k_max"]["recompute_light"], plan.curve.kMax(std::int64_t{64} << 20));
  // The lower bound with recompute next to moDNN's: eq. 2 on recompute-light's GMAP.
  const std::int64_t recomputeBound = memoryLowerBound(plan.gmap);
  EXPECT_EQ(doc["memory"]["lower_bound_recompute_k1"], recomputeBound);
  EXPECT_GE(recomputeBound, doc["memory"]["lower_bound_k1"].get<std::int64_t>());
  // Policies without recompute keep their JSON as it was.
  r = run({"analyze", "--model", "resnet20", "--batch", "32", "--json"});
  EXPECT_FALSE(nlohmann::json::parse(r.out)["layers"][1].contains("recomputed"));

  r = run({"analyze", "--model", "resnet20", "--batch", "32", "--budget", "64MiB", "--policy",
           "recompute-light"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  for (const std::string& part :
       {std::string("recompute-light peak "),
        "  recompute-light     " + std::to_string(plan.curve.kMax(std::int64_t{64} << 20)),
        std::string("recompute\n"),
        "  recompute LB (k=1)  " + formatBytes(memoryLowerBound(plan.gmap)) + "  (eq. 2"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
}

TEST(Cli, AnalyzeTextShowsTotalsAndKMax) {
  const Result r = run({"analyze", "--model", "resnet20", "--batch", "32", "--budget", "64MiB",
                        "--policy", "swap-all"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  for (const char* part :
       {"layer1.0.conv1", "parameters          272,474", "keep-all peak", "swap-all peak",
        "lower bound (k=1)", "k_max for a budget of 64.0 MiB"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
}

TEST(Cli, GmapListsEveryOperation) {
  const Result r = run({"analyze", "--model", "fmnist-cnn", "--batch", "10", "--policy", "swap-all",
                        "--gmap", "--json"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const Network net = buildZooModel("fmnist-cnn");
  const auto costs = computeLayerCosts(net);
  const Gmap g = buildGmap(net, costs, makeSwapSet(Policy::SwapAll, net, costs));
  ASSERT_EQ(doc["gmap"].size(), g.ops.size());
  EXPECT_EQ(doc["gmap"][0]["op"], "allocate");  // setup: conv1.weights
  EXPECT_EQ(doc["gmap"][0]["buffer"], "conv1.weights");
  // Every swappable FM is offloaded once, except the minibatch, whose host copy is kept.
  int swappable = 0;
  for (bool b : swappableFms(net, costs))
    swappable += b;
  int offloads = 0;
  for (const auto& op : doc["gmap"])
    offloads += op["op"] == "offload";
  EXPECT_EQ(offloads, swappable - 1);
  EXPECT_EQ(swappable, 11);  // data, conv1, relu1, pool1, conv2, relu2, pool2, flatten, relu3,
                             // dropout, fc2
  const Result text = run({"analyze", "--model", "fmnist-cnn", "--batch", "10", "--gmap"});
  EXPECT_NE(text.out.find("compute   step 1, forward of conv1"), std::string::npos) << text.out;
}

TEST(Cli, DumpNetWritesAFileThatAnalyzesTheSame) {
  const auto path = std::filesystem::temp_directory_path() / "swapscope_cli_dump_test.json";
  const Result a = run(
      {"analyze", "--model", "googlenet", "--batch", "4", "--json", "--dump-net", path.string()});
  ASSERT_EQ(a.code, kExitOk) << a.err;
  const Result b = run({"analyze", "--net", path.string(), "--batch", "4", "--json"});
  ASSERT_EQ(b.code, kExitOk) << b.err;
  EXPECT_EQ(a.out, b.out);
  std::filesystem::remove(path);
}

TEST(Cli, BadUsageExitsWithTwoAndSaysWhy) {
  const std::pair<std::vector<std::string>, const char*> cases[] = {
      {{"analyze", "--model", "resnet20"}, "missing required option --batch"},
      {{"analyze", "--model", "resnet20", "--batch", "0"}, "--batch: expected a positive integer"},
      {{"analyze", "--model", "resnet20", "--batch", "2", "--budget", "lots"}, "'lots'"},
      {{"analyze", "--model", "nope", "--batch", "2"}, "unknown model 'nope'"},
      {{"analyze", "--model", "resnet20", "--batch", "2", "--policy", "swap-some"}, "swap-some"},
      {{"analyze", "--net", "/nonexistent/net.json", "--batch", "2"}, "cannot open"},
      {{"analyze", "--model", "resnet20", "--net", "x.json", "--batch", "2"}, "not both"},
      {{"analyze", "--model", "alexnet", "--input", "3x16x16", "--batch", "2"}, "layer '"},
      {{"analyze", "--model", "resnet20", "--input", "3x-2", "--batch", "2"}, "--input"},
      {{"analyze", "--model", "resnet20", "--batch", "99999999999"},
       "--batch 99999999999: above the limit of 16777216"},
      {{"analyze", "--model", "vgg19", "--input", "3x2048x2048", "--batch", "16000000"},
       "do not fit in 64-bit counts"},
      {{"analyze", "--frobnicate"}, "unknown option '--frobnicate'"},
      {{"explode"}, "unknown verb 'explode'"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = run(args);
    EXPECT_EQ(r.code, kExitUsage) << args[0] << " " << (args.size() > 1 ? args[1] : "");
    EXPECT_NE(r.err.find(message), std::string::npos) << "stderr: " << r.err;
  }
}

TEST(Cli, HelpForEveryVerb) {
  for (const char* verb : {"models", "analyze"}) {
    const Result r = run({verb, "--help"});
    EXPECT_EQ(r.code, kExitOk);
    EXPECT_NE(r.out.find("usage: swapscope " + std::string(verb)), std::string::npos);
  }
  EXPECT_EQ(run({"--help"}).code, kExitOk);
  EXPECT_EQ(run({}).code, kExitUsage);
}

/// The verbs the general help lists, in its order.
std::vector<std::string> listedVerbs() {
  const Result r = run({"--help"});
  std::istringstream in(r.out.substr(r.out.find("\nverbs:\n") + 8));
  std::vector<std::string> verbs;
  std::string line;
  while (std::getline(in, line) && line.rfind("  ", 0) == 0) {
    std::istringstream words(line);
    verbs.emplace_back();
    words >> verbs.back();
  }
  return verbs;
}

/// Every "--name" word in `text`.
std::set<std::string> optionWords(const std::string& text) {
  std::set<std::string> words;
  const std::regex option("--[a-z0-9][a-z0-9-]*");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), option);
       it != std::sregex_iterator(); ++it)
    words.insert(it->str());
  return words;
}

TEST(Cli, EveryVerbsUsageLineNamesEveryOptionItTakesAndNoOther) {
  const std::vector<std::string> verbs = listedVerbs();
  ASSERT_EQ(verbs.size(), 10u);
  for (const std::string& verb : verbs) {
    const Result r = run({verb, "--help"});
    ASSERT_EQ(r.code, kExitOk) << verb;
    // The usage runs from "usage:" to the first blank line; the options are the lines below
    // "options:" that start with two spaces and "--".
    const std::size_t end = r.out.find("\n\n");
    ASSERT_NE(end, std::string::npos) << r.out;
    const std::set<std::string> usage = optionWords(r.out.substr(0, end));
    std::set<std::string> declared;
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind("  --", 0) != 0) continue;
      std::istringstream words(line);
      std::string name;
      words >> name;
      if (name != "--help") declared.insert(name);
    }
    ASSERT_FALSE(declared.empty()) << verb;
    for (const std::string& o : declared)
      EXPECT_TRUE(usage.count(o)) << verb << "'s usage omits " << o << ":\n" << r.out;
    for (const std::string& o : usage)
      EXPECT_TRUE(declared.count(o)) << verb << "'s usage names " << o << ", no option of it";
  }
}

TEST(Cli, HelpVerbPrintsTheVerbsHelpAndRefusesAnUnknownVerb) {
  for (const std::string& verb : listedVerbs()) {
    const Result help = run({"help", verb}), own = run({verb, "--help"});
    EXPECT_EQ(help.code, kExitOk) << verb;
    EXPECT_EQ(help.out, own.out) << verb;
    EXPECT_EQ(help.err, "");
  }
  const Result general = run({"help"});
  EXPECT_EQ(general.code, kExitOk);
  EXPECT_EQ(general.out, run({"--help"}).out);
  EXPECT_NE(general.out.find("swapscope help <verb>"), std::string::npos) << general.out;
  const Result onHelp = run({"help", "help"});  // said "unknown verb 'help'"
  EXPECT_EQ(onHelp.code, kExitOk);
  EXPECT_EQ(onHelp.out, general.out);
  // --help wins wherever it is: after a refused word too (`plan --bogus --help` exited 2).
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"plan", "--bogus", "--help"},
        {"plan", "--help", "--bogus"},
        {"plan", "extra", "-h"}}) {
    const Result r = run(args);
    EXPECT_EQ(r.code, kExitOk) << r.err;
    EXPECT_EQ(r.out, run({"plan", "--help"}).out);
  }
  const Result unknown = run({"help", "nosuch"});
  EXPECT_EQ(unknown.code, kExitUsage);
  EXPECT_EQ(unknown.out, "");
  EXPECT_EQ(unknown.err.rfind("swapscope help: unknown verb 'nosuch'\n", 0), 0u) << unknown.err;
  const Result two = run({"help", "plan", "run"});
  EXPECT_EQ(two.code, kExitUsage);
  EXPECT_EQ(two.err, "swapscope help: give one verb, got 2 words ('run' after 'plan')\n");
}

TEST(Cli, VersionPrintsJsonWithJsonAndRefusesAnyOtherWord) {
  const Result text = run({"--version"});
  ASSERT_EQ(text.code, kExitOk);
  EXPECT_EQ(text.out.rfind("swapscope ", 0), 0u) << text.out;
  const Result j = run({"--version", "--json"});
  ASSERT_EQ(j.code, kExitOk) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ("swapscope " + doc["swapscope"].get<std::string>() + "\n",
            text.out.substr(0, text.out.find('\n') + 1));
  ASSERT_TRUE(doc["gpus"].is_array());
  // Either GPUs or why there are none.
  EXPECT_NE(doc["gpus"].empty(), doc["gpus_unavailable"].is_null()) << j.out;
  EXPECT_TRUE(doc.contains("cuda"));
  // Said "unexpected argument '--json' (--version takes --json only)".
  const Result twice = run({"--version", "--json", "--json"});
  EXPECT_EQ(twice.code, kExitUsage);
  EXPECT_EQ(twice.err, "swapscope --version: option '--json' is given twice\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--version", "--jsn"}, {"--version", "--json", "x"}}) {
    const Result bad = run(args);
    EXPECT_EQ(bad.code, kExitUsage);
    EXPECT_EQ(bad.out, "");
    EXPECT_NE(bad.err.find("(--version takes --json only)"), std::string::npos) << bad.err;
  }
}

}  // namespace
}  // namespace swapscope::cli
