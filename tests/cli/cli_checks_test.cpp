// SPDX-License-Identifier: MIT
/// Silent wrong answers and wrong reasons in the verbs, in-process: one minibatch limit for every
/// verb, a plan whose predictions are not its schedule's, options that contradict or do not
/// apply, keys given twice, out-of-range numbers, and compare's (k, passes) and empty runs.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/network_analysis.h"
#include "common/batch_limit.h"
#include "common/bytes.h"
#include "common/error.h"
#include "graph/zoo.h"
#include "options/args.h"
#include "options/network_options.h"
#include "options/plan_options.h"
#include "run_cli.h"
#include "runtime/device.h"
#include "runtime/executor.h"
#include "sample_runs.h"

namespace swapscope::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using testing::Result;
using testing::run;

const std::string kRuns = swapscope::testing::sampleRunsDir();
const std::string kSample = kRuns + "/fmnist-cnn-cpu-profile.swapdb";

fs::path scratch(const std::string& name) {
  return fs::temp_directory_path() / ("swapscope-checks-" + std::to_string(getpid()) + "-" + name);
}

std::string readText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeText(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

void expectRefused(const Result& r, const std::string& part) {
  EXPECT_EQ(r.code, kExitUsage) << r.err.substr(0, 600);
  EXPECT_TRUE(has(r.err, part)) << r.err.substr(0, 600) << "\nexpected: " << part;
}

void expectWarned(const Result& r, const std::string& part) {
  EXPECT_EQ(r.code, kExitOk) << r.err.substr(0, 600);
  EXPECT_TRUE(has(r.err, "warning: " + part)) << r.err.substr(0, 600) << "\nexpected: " << part;
}

std::vector<std::string> planArgs(std::vector<std::string> extra) {
  std::vector<std::string> a = {"plan", "--db", kSample, "--budget", "16MiB"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// --- one minibatch limit ------------------------------------------------------------------------

TEST(BatchLimit, EveryVerbRefusesAboveTheOneLimitNamingOptionValueAndLimit) {
  const std::string above = std::to_string(kMaxBatch + 1);
  const std::string limit = "above the limit of " + std::to_string(kMaxBatch);
  expectRefused(run({"analyze", "--model", "resnet20", "--batch", above}),
                "--batch " + above + ": " + limit);
  expectRefused(run(planArgs({"--batch", above})), "--batch " + above + ": " + limit);
  expectRefused(run(planArgs({"--max-batch", above})), "--max-batch " + above + ": " + limit);
  expectRefused(run({"train", "--model", "fmnist-cnn", "--data", "synthetic", "--batch", above,
                     "--iters", "1", "--budget", "16MiB"}),
                "--batch " + above + ": " + limit);
  expectRefused(run({"profile", "--model", "fmnist-cnn", "--budget", "16MiB", "--max-batch", above,
                     "--db", scratch("never.swapdb").string()}),
                "--max-batch " + above + ": " + limit);
  EXPECT_FALSE(fs::exists(scratch("never.swapdb")));
  expectRefused(
      run({"trace", "--db", kSample, "--k", above, "--out", scratch("never.json").string()}),
      "--k " + above + ": " + limit);
  // Beyond 64 bits is above the limit too, not "expected a positive integer".
  expectRefused(run({"analyze", "--model", "resnet20", "--batch", "99999999999999999999"}),
                "--batch 99999999999999999999: " + limit);
  // At the limit it is accepted.
  EXPECT_EQ(
      run({"analyze", "--model", "fmnist-cnn", "--batch", std::to_string(kMaxBatch), "--json"})
          .code,
      kExitOk);
}

// analyze's k_max stops at the limit that plan and run would hold it to, and says so; a budget
// whose k_max is below the limit is printed as it is.
TEST(BatchLimit, AnalyzesKMaxStopsAtTheLimitAndSaysMoreWouldFit) {
  const Result big =
      run({"analyze", "--model", "fmnist-cnn", "--batch", "1", "--budget", "100TiB"});
  ASSERT_EQ(big.code, kExitOk) << big.err;
  EXPECT_TRUE(has(big.out, "swap-all            " + std::to_string(kMaxBatch) +
                               " (the minibatch limit; more would fit)"))
      << big.out;
  const Result asJson =
      run({"analyze", "--model", "fmnist-cnn", "--batch", "1", "--budget", "100TiB", "--json"});
  ASSERT_EQ(asJson.code, kExitOk) << asJson.err;
  EXPECT_EQ(json::parse(asJson.out)["k_max"]["keep_all"].get<std::int64_t>(), kMaxBatch);
  const Result small =
      run({"analyze", "--model", "fmnist-cnn", "--batch", "1", "--budget", "1GiB"});
  ASSERT_EQ(small.code, kExitOk) << small.err;
  EXPECT_FALSE(has(small.out, "minibatch limit")) << small.out;
}

// analyze --device cuda counts the pool as the CUDA executor does: the peaks padded, k_max the
// executor's placement on a 256-byte-aligned pool (rt::poolKMax, which the runtime tests compare
// with the executor's decision), never above the CPU's.
TEST(AnalyzeDevice, CudaCountsThePaddedPoolAndTheExecutorsKMax) {
  const std::vector<std::string> args{"analyze", "--model",  "fmnist-cnn", "--batch",
                                      "4",       "--budget", "24MiB",      "--json"};
  const Result cpu = run(args);
  ASSERT_EQ(cpu.code, kExitOk) << cpu.err;
  std::vector<std::string> cudaArgs = args;
  cudaArgs.insert(cudaArgs.end(), {"--device", "cuda"});
  const Result cuda = run(cudaArgs);
  ASSERT_EQ(cuda.code, kExitOk) << cuda.err;
  const json c = json::parse(cpu.out), g = json::parse(cuda.out);
  EXPECT_FALSE(c.contains("pool"));
  EXPECT_EQ(g["pool"], json::parse(R"({"device": "cuda", "alignment": 256, "buffer_padding": 16,
                                       "workspace_padding": 256})"));
  const Network net = buildZooModel("fmnist-cnn");
  const auto costs = computeLayerCosts(net);
  for (const Policy policy : {Policy::KeepAll, Policy::SwapAll}) {
    const std::string key = policy == Policy::KeepAll ? "keep_all" : "swap_all";
    SCOPED_TRACE(key);
    const Gmap gmap = planMemory(net, costs, policy).gmap;
    const std::int64_t kMax = g["k_max"][key].get<std::int64_t>();
    EXPECT_EQ(kMax, rt::poolKMax(gmap, 24 << 20, rt::kCudaPoolShape, kMaxBatch));
    EXPECT_LE(kMax, c["k_max"][key].get<std::int64_t>());
    EXPECT_EQ(g["memory"][key + "_peak"]["bytes"].get<std::int64_t>(),
              computeMemoryCurve(padGmap(gmap, rt::kCudaPoolShape.padding)).peak(4));
    EXPECT_GT(g["memory"][key + "_peak"]["bytes"], c["memory"][key + "_peak"]["bytes"]);
  }
  // The host memory is the tensors' own, as on the CPU.
  EXPECT_EQ(g["host_memory"], c["host_memory"]);

  const Result text = run({"analyze", "--model", "fmnist-cnn", "--batch", "4", "--budget", "24MiB",
                           "--device", "cuda"});
  ASSERT_EQ(text.code, kExitOk) << text.err;
  EXPECT_TRUE(has(text.out, "as the CUDA pool holds it: every buffer padded to 16 bytes"))
      << text.out;
  EXPECT_TRUE(has(text.out, "as the CUDA executor places it")) << text.out;
  expectRefused(run({"analyze", "--model", "fmnist-cnn", "--batch", "4", "--device", "tpu"}),
                "--device tpu: expected cpu or cuda");
}

// A split minibatch far above the limit is refused while the options are read, before any
// planning, and no saturated byte count is printed.
TEST(BatchLimit, AHugeSplitBatchIsRefusedBeforeAnyPlanning) {
  const Result r = run(planArgs({"--batch", "9223372036854775783", "--allow-sub-batches"}));
  expectRefused(r, "--batch 9223372036854775783: above the limit of 16777216");
  EXPECT_TRUE(r.out.empty());
  EXPECT_FALSE(has(r.err, "9223372036854775807"));
}

TEST(BatchLimit, APlanFileAboveTheLimitIsRefusedByRunNamingTheField) {
  const fs::path plan = scratch("k-above.json");
  ASSERT_EQ(testing::writeFmnistPlan(kRuns, plan.string()).code, kExitOk);
  json doc = json::parse(readText(plan));
  doc["k"] = kMaxBatch + 1;
  writeText(plan, doc.dump(2));
  expectRefused(run({"run", "--plan", plan.string(), "--iters", "1"}),
                "field 'k' must be at most 16777216");
  fs::remove(plan);
}

// --- predictions that are not the schedule's ----------------------------------------------------

class EditedPlan : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(testing::writeFmnistPlan(kRuns, m_plan.string()).code, kExitOk);
    m_doc = json::parse(readText(m_plan));
  }
  void TearDown() override { fs::remove(m_plan); }
  Result runEdited() {
    writeText(m_plan, m_doc.dump(2));
    return run({"run", "--plan", m_plan.string(), "--iters", "1", "--warmup", "0"});
  }
  fs::path m_plan = scratch("edited.json");
  json m_doc;
};

TEST_F(EditedPlan, AnEditedPeakIsRefusedNamingBothFigures) {
  const std::int64_t peak = m_doc["predictions"]["peak_bytes"].get<std::int64_t>();
  m_doc["predictions"]["peak_bytes"] = peak + 4096;
  const Result r = runEdited();
  expectRefused(r, "field 'predictions.peak_bytes' is " + std::to_string(peak + 4096) +
                       ", but its swap set's GMAP at k = 8 peaks at " + std::to_string(peak) +
                       " bytes");
  EXPECT_FALSE(has(r.err + r.out, "workspace"));
}

TEST_F(EditedPlan, AnEditedPeakInSubBatchesNamesThePassSamplesAndTheMinibatch) {
  // The plan predicts the peak of the whole minibatch; edited into 2 sub-batches, the schedule's
  // GMAP is one pass's, at 4 of the 8 samples, and peaks lower.
  const std::int64_t peak = m_doc["predictions"]["peak_bytes"].get<std::int64_t>();
  m_doc["sub_batches"] = 2;
  const Result r = runEdited();
  expectRefused(r, "field 'predictions.peak_bytes' is " + std::to_string(peak) +
                       ", but its swap set's GMAP at 4 samples (one pass of k = 8) peaks at ");
  EXPECT_FALSE(has(r.err + r.out, "at k = 4")) << r.err;
}

TEST_F(EditedPlan, TheUneditedPlanRunsWithoutAWorkspaceLineOnTheCpu) {
  const Result r = runEdited();
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_FALSE(has(r.out, "workspace")) << r.out;
  EXPECT_FALSE(has(r.out, "padding")) << r.out;
}

// A fixed policy's sets are the policy's: swap-all with nothing swapped ran keep-all's schedule
// and reported it as swap-all's.
TEST_F(EditedPlan, AFixedPolicysSetsOtherThanItsOwnAreRefused) {
  const Network net = buildZooModel("fmnist-cnn");
  const auto costs = computeLayerCosts(net);
  const SwapSet all = makeSwapSet(Policy::SwapAll, net, costs);
  const auto swapped = std::count(all.begin(), all.end(), true);
  m_doc["policy"] = "swap-all";
  m_doc["swap_set"] = json::array();
  expectRefused(runEdited(), "field 'swap_set' lists 0 feature maps, but policy 'swap-all' " +
                                 std::string("swaps ") + std::to_string(swapped) +
                                 " of fmnist-cnn's: the plan was edited; plan it again");
}

TEST_F(EditedPlan, AStartArrayOfTheWrongLengthSaysSoNotThatItIsOld) {
  const std::size_t steps = m_doc["predictions"]["start_s"].size();
  ASSERT_GT(steps, 2u);
  m_doc["predictions"]["start_s"].erase(steps - 1);
  const Result r = runEdited();
  expectRefused(r, "field 'predictions.start_s' holds " + std::to_string(steps - 1) +
                       " starts, but the GMAP has " + std::to_string(steps) + " steps");
  EXPECT_FALSE(has(r.err, "older"));
}

// A stalled step past the GMAP's last step was ignored; it names no step of the run.
TEST_F(EditedPlan, AStallAtAStepTheGmapDoesNotHaveIsRefused) {
  const std::size_t steps = m_doc["predictions"]["start_s"].size();
  ASSERT_GT(steps, 2u);
  json& stalls = m_doc["predictions"]["stalls"];
  const std::size_t index = stalls.size();
  stalls.push_back(
      {{"step", steps + 5}, {"layer", "conv1"}, {"direction", "bwd"}, {"seconds", 0.001}});
  expectRefused(runEdited(), "field 'predictions.stalls[" + std::to_string(index) + "].step' is " +
                                 std::to_string(steps + 5) + ", but the GMAP's steps are 1 to " +
                                 std::to_string(steps));
}

TEST_F(EditedPlan, NoStartsAtAllIsAnOlderPlan) {
  m_doc["predictions"]["start_s"] = json::array();
  const Result r = runEdited();
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(has(r.out, "the plan holds no predicted starts (made by an older Swapscope)"));
}

// --- keys given twice ---------------------------------------------------------------------------

TEST_F(EditedPlan, AKeyGivenTwiceIsRefusedNamingKeyLineAndFile) {
  std::string text = m_doc.dump(2);
  const std::size_t at = text.find("\"k\": 8");
  ASSERT_NE(at, std::string::npos);
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(at), '\n');
  text.replace(at, 6, "\"k\": 16, \"k\": 8");
  writeText(m_plan, text);
  expectRefused(run({"run", "--plan", m_plan.string(), "--iters", "1"}),
                "plan '" + m_plan.string() + "': key \"k\" is given twice in one object (line " +
                    std::to_string(line) + ")");
}

TEST(DuplicateKeys, ANetworkFileGivingALayerFieldTwiceIsRefused) {
  const fs::path net = scratch("twice-net.json");
  ASSERT_EQ(run({"analyze", "--model", "fmnist-cnn", "--batch", "1", "--dump-net", net.string(),
                 "--force"})
                .code,
            kExitOk);
  std::string text = readText(net);
  const std::size_t at = text.find("\"out_channels\":");
  ASSERT_NE(at, std::string::npos);
  text.insert(at, "\"out_channels\":1,");
  writeText(net, text);
  expectRefused(run({"analyze", "--net", net.string(), "--batch", "1"}),
                net.string() + ": key \"out_channels\" is given twice in one object (line ");
  fs::remove(net);
}

// --- options that contradict or do not apply ----------------------------------------------------

TEST(OptionChecks, PlanRefusesOptionsThatContradictNamingBoth) {
  expectRefused(run(planArgs({"--batch", "8", "--mode", "paper"})),
                "give --batch K or --mode paper, not both");
  expectRefused(run(planArgs({"--batch", "8", "--max-batch", "16"})),
                "give --batch K or --max-batch K, not both: --batch 8 fixes k, --max-batch 16");
  expectRefused(run(planArgs({"--input", "1x32x32"})),
                "--input 1x32x32 shapes a zoo model, but no --model is given: plan takes the "
                "network profiled in");
  expectRefused(run(planArgs({"--classes", "7"})), "--classes 7 shapes a zoo model");
}

TEST(OptionChecks, PlanWarnsAboutOptionsWithoutEffect) {
  expectWarned(run(planArgs({"--link-bandwidth", "25GB"})),
               "--link-bandwidth 25GB has no effect: it sets the all-reduce between GPUs");
  expectWarned(run(planArgs({"--link-bandwidth", "25GB", "--gpus", "1"})),
               "--link-bandwidth 25GB has no effect");
  expectWarned(run(planArgs({"--batch", "8", "--mode", "argmin"})),
               "--mode argmin has no effect: --batch 8 fixes k");
  expectWarned(run(planArgs({"--epochs", "3"})), "--epochs 3 has no effect");
  expectWarned(run(planArgs({"--force"})),
               "--force has no effect: no file is written without --out");
  // With the options they need, no warning.
  const Result quiet = run(planArgs(
      {"--link-bandwidth", "25GB", "--gpus", "4", "--epochs", "3", "--dataset-size", "6000"}));
  ASSERT_EQ(quiet.code, kExitOk) << quiet.err;
  EXPECT_FALSE(has(quiet.err, "warning")) << quiet.err;
  // The all-reduce it adds is printed beside t_iter (the text gave the throughput without it).
  EXPECT_TRUE(has(quiet.out, "  all-reduce (Δ)    ")) << quiet.out;
  EXPECT_TRUE(has(quiet.out, " per iteration across 4 GPUs (ring all-reduce of the parameters)"))
      << quiet.out;
}

TEST(OptionChecks, CudaOptionsOnTheCpuAndDataOptionsOfOtherDataAreNamed) {
  const Result r =
      run({"train", "--model", "fmnist-cnn", "--data", "synthetic", "--batch", "4", "--iters", "1",
           "--budget", "16MiB", "--math", "tf32", "--data-dir", "/nonexistent", "--json"});
  expectWarned(r, "--math tf32 has no effect: it applies to the CUDA backend");
  expectWarned(r, "--data-dir has no effect: it locates Fashion-MNIST, and --data is synthetic");
  expectRefused(run({"run", "--plan", "plan.json", "--input", "1x28x28"}),
                "--input 1x28x28 shapes a zoo model, but no --model is given: run takes the "
                "network the plan names");
}

// --- numbers: the reason, with the range --------------------------------------------------------

TEST(NumberReasons, ASeedIsAWholeNumberSaidAsSuch) {
  // It read "not a number from 0 to 9.0072e+15" for -1.
  for (const char* bad : {"-1", "1.5", "1e3", "9007199254740993", "x"}) {
    expectRefused(
        run({"train", "--model", "fmnist-cnn", "--data", "synthetic", "--batch", "4", "--iters",
             "1", "--budget", "16MiB", "--seed", bad}),
        std::string("--seed: '") + bad + "' is not a whole number from 0 to 9007199254740992");
  }
  EXPECT_EQ(run({"train", "--model", "fmnist-cnn", "--data", "synthetic", "--batch", "4", "--iters",
                 "1", "--budget", "16MiB", "--seed", "9007199254740992"})
                .code,
            kExitOk);
}

TEST(NumberReasons, OutOfRangeSaysSoWithTheRange) {
  expectRefused(run({"analyze", "--model", "fmnist-cnn", "--batch", "8", "--sub-batches",
                     "18446744073709551618"}),
                "option --sub-batches: 18446744073709551618 is out of range: from 1 to 8");
  expectRefused(run(planArgs({"--gpus", "4294967297"})),
                "option --gpus: 4294967297 is out of range: from 1 to 1024");
  expectRefused(run({"run", "--plan", "p.json", "--iters", "100001"}),
                "option --iters: 100001 is out of range: from 1 to 100000");
  // A fraction was truncated to an int (1.5 warm-up iterations ran 1).
  expectRefused(run({"run", "--plan", "p.json", "--warmup", "1.5"}),
                "option --warmup: expected an integer, got '1.5'");
  expectRefused(run({"analyze", "--model", "fmnist-cnn", "--batch", "two"}),
                "--batch: expected a positive integer, got 'two'");
}

TEST(NumberReasons, TheOneParserSaysWhy) {
  const auto reason = [](const std::string& text, std::int64_t lo, std::int64_t hi) {
    try {
      (void)parseInteger(text, "--n", lo, hi);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(reason("7", 0, 10), "accepted");
  EXPECT_EQ(reason("11", 0, 10), "--n: 11 is out of range: from 0 to 10");
  EXPECT_EQ(reason("-1", 0, 10), "--n: -1 is out of range: from 0 to 10");
  EXPECT_EQ(reason("0", 1, 10), "--n: expected a positive integer, got '0'");
  EXPECT_EQ(reason("-99999999999999999999", 0, 10),
            "--n: -99999999999999999999 is out of range: from 0 to 10");
  EXPECT_EQ(reason("7x", 0, 10), "--n: expected an integer, got '7x'");
  EXPECT_EQ(reason("", 0, 10), "--n: expected an integer, got ''");
  EXPECT_EQ(parseBatch("0016", "--batch"), 16);
}

TEST(NumberReasons, DecimalNumbersOnlyNotHexOrPaddedText) {
  // std::stod would read "0x10" as 16 and skip a leading space; the options take what
  // parseInteger takes for an integer: decimal text, and nothing around it.
  for (const char* text : {"0x10", " 0.1", "0.1 ", "+0.1", "nan", "inf", "0.1x"}) {
    SCOPED_TRACE(text);
    EXPECT_THROW((void)parseNumber(text, "--lr", 0, 100), Error);
  }
  EXPECT_DOUBLE_EQ(parseNumber("0.05", "--lr", 0, 100), 0.05);
  EXPECT_DOUBLE_EQ(parseNumber("5e-2", "--lr", 0, 100), 0.05);
  EXPECT_DOUBLE_EQ(parseNumber("7", "--lr", 0, 100), 7.0);
  expectRefused(run({"train", "--model", "fmnist-cnn", "--data", "synthetic", "--batch", "8",
                     "--budget", "64MiB", "--iters", "1", "--lr", "0x10"}),
                "--lr");
}

/// The message of the Error(BadInput) that `f` throws; "" where it throws none.
template <class F>
std::string refusal(F f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    return e.what();
  }
  return "";
}

TEST(BudgetGib, IsTheBudgetInGibWrittenAsBudgetWritesItsNumber) {
  // --budget-gib G is --budget GGiB, byte for byte.
  for (const char* g : {"1", "0.5", "1.25", "16", "1000", "99999999", "0"}) {
    SCOPED_TRACE(g);
    EXPECT_EQ(parseBudgetGib(g), parseByteSize(std::string(g) + "GiB", "--budget"));
  }
  EXPECT_EQ(parseBudgetGib("99999999"), std::int64_t{99999999} << 30);
  // An exponent is refused as --budget refuses it, saying how to write the number.
  EXPECT_NE(refusal([] { (void)parseByteSize("1e3", "--budget"); }), "");
  for (const char* g : {"1e3", "1E3", "-1", "+1", " 1", "1 ", "1GiB", "0x10", "1.2.3", ".", ""}) {
    SCOPED_TRACE(g);
    EXPECT_NE(refusal([&] { (void)parseBudgetGib(g); })
                  .find("is not a number of GiB: write decimal digits with at most one point, as "
                        "--budget writes its number (no exponent, sign, unit or space)"),
              std::string::npos);
  }
  EXPECT_EQ(refusal([] { (void)parseBudgetGib("1e3"); }),
            "--budget-gib: '1e3' is not a number of GiB: write decimal digits with at most one "
            "point, as --budget writes its number (no exponent, sign, unit or space), e.g. "
            "--budget-gib 1000 or --budget 1000GiB");
  // Too large is said with the limit, which is --budget's: what a 64-bit byte count holds.
  EXPECT_EQ(parseBudgetGib("8589934591"), std::int64_t{8589934591} << 30);
  for (const std::string& g :
       {std::string("8589934592"), std::string("99999999999999"), "1" + std::string(400, '0')}) {
    SCOPED_TRACE(g);
    EXPECT_NE(refusal([&] { (void)parseBudgetGib(g); })
                  .find(": too large: a budget is below 8 EiB (8589934592 GiB), the most bytes a "
                        "64-bit count holds, as for --budget"),
              std::string::npos);
    EXPECT_NE(refusal([&] { (void)parseByteSize(g + "GiB", "--budget"); }), "");
  }
  // One of the two, not both.
  EXPECT_EQ(budgetFromOptions("64MiB", std::nullopt), std::int64_t{64} << 20);
  EXPECT_EQ(budgetFromOptions(std::nullopt, "2"), std::int64_t{2} << 30);
  EXPECT_EQ(budgetFromOptions(std::nullopt, std::nullopt), std::nullopt);
  EXPECT_EQ(refusal([] { (void)budgetFromOptions("64MiB", "2"); }),
            "give --budget or --budget-gib, not both: --budget '64MiB' and --budget-gib '2' each "
            "set the budget");
}

// --- compare: (k, passes) and runs without iterations -------------------------------------------

/// Two runs of fmnist-cnn at k = 16, in one pass and in two, recorded by `run --db`, made once.
class PassesCompare : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    for (const auto& [passes, db] : {std::pair{"1", &one_}, std::pair{"2", &two_}}) {
      const fs::path plan = scratch(std::string("k16-") + passes + ".json");
      *db = scratch(std::string("k16-") + passes + ".swapdb");
      const Result p = run(planArgs({"--policy", "swap-all", "--batch", "16", "--sub-batches",
                                     passes, "--out", plan.string(), "--force"}));
      ASSERT_EQ(p.code, kExitOk) << p.err;
      const Result r = run({"run", "--plan", plan.string(), "--iters", "1", "--warmup", "0", "--db",
                            db->string(), "--force"});
      ASSERT_EQ(r.code, kExitOk) << r.err;
      fs::remove(plan);
    }
  }
  static void TearDownTestSuite() {
    fs::remove(one_);
    fs::remove(two_);
  }
  static fs::path one_, two_;
};
fs::path PassesCompare::one_, PassesCompare::two_;

TEST_F(PassesCompare, TheHeaderAndThePairingSpeakOfKAndPasses) {
  const Result r = run({"compare", one_.string(), two_.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(has(r.out, "16 in 2 passes of 8")) << r.out;
  EXPECT_TRUE(has(r.out,
                  "per-step median times: not compared, no pass size was recorded by both (A: "
                  "k = 16; B: k = 16 in 2 passes of 8)"))
      << r.out;
  EXPECT_FALSE(has(r.out, "no minibatch was recorded by both")) << r.out;
  const json j = json::parse(run({"compare", one_.string(), two_.string(), "--json"}).out);
  EXPECT_EQ(j["b"]["batches"], json::parse(R"([{"k": 16, "passes": 2}])"));
  EXPECT_EQ(j["a"]["batches"], json::parse(R"([{"k": 16, "passes": 1}])"));
  // The same run twice pairs at its pass size.
  const Result same = run({"compare", two_.string(), two_.string()});
  EXPECT_TRUE(has(same.out, "per-step median times at 8 samples per pass")) << same.out;
}

// A run that copies nothing to the host but its loss, and nothing beside a copy the other way,
// measured no device-to-host line and no duplex factor: compare says "-" and null, where it
// showed the model's assumed factor of 1 as "1.00x slower" (and 0 B/s in --json).
TEST(CliCompare, FiguresNothingMeasuredAreShownAsNone) {
  const fs::path plan = scratch("keep-all-k8.json"), db = scratch("keep-all-k8.swapdb");
  const Result p =
      run(planArgs({"--policy", "keep-all", "--batch", "8", "--out", plan.string(), "--force"}));
  ASSERT_EQ(p.code, kExitOk) << p.err;
  const Result r = run({"run", "--plan", plan.string(), "--iters", "2", "--warmup", "0", "--db",
                        db.string(), "--force"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const json j = json::parse(run({"compare", db.string(), kSample, "--json"}).out);
  const json& none = j["a"]["pcie"];
  EXPECT_EQ(none["duplex_points"], 0) << none;
  EXPECT_TRUE(none["duplex_factor"].is_null()) << none;
  EXPECT_EQ(none["d2h_points"], 0) << none;
  EXPECT_TRUE(none["d2h_bytes_per_s"].is_null()) << none;
  EXPECT_TRUE(none["h2d_bytes_per_s"].is_number()) << none;
  const Result text = run({"compare", db.string(), db.string()});
  ASSERT_EQ(text.code, kExitOk) << text.err;
  const auto row = text.out.find("both directions");
  ASSERT_NE(row, std::string::npos) << text.out;
  const std::string line = text.out.substr(row, text.out.find('\n', row) - row);
  EXPECT_FALSE(has(line, "slower")) << line;
  fs::remove(plan);
  fs::remove(db);
}

/// A copy of the sample run with every recorded row of its iterations deleted.
fs::path sampleWithoutIterations() {
  const fs::path db = scratch("no-iterations.swapdb");
  fs::copy_file(kSample, db, fs::copy_options::overwrite_existing);
  sqlite3* h = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  for (const char* table : {"iterations", "samples", "transfers", "memory", "batches", "fits"}) {
    EXPECT_EQ(
        sqlite3_exec(h, ("DELETE FROM " + std::string(table)).c_str(), nullptr, nullptr, nullptr),
        SQLITE_OK)
        << table;
  }
  sqlite3_close(h);
  return db;
}

TEST(CompareEmpty, ARunWithoutIterationsHasNothingToCompareAndNoRatio) {
  const fs::path empty = sampleWithoutIterations();
  const Result r = run({"compare", kSample, empty.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(has(r.out, "B (" + empty.string() + ") records no iterations: nothing to compare"))
      << r.out;
  EXPECT_FALSE(has(r.out, "1.00x")) << r.out;
  EXPECT_FALSE(has(r.out, "B/A")) << r.out;
  const json j = json::parse(run({"compare", empty.string(), empty.string(), "--json"}).out);
  EXPECT_TRUE(j["a"]["pcie"].is_null());
  EXPECT_TRUE(has(j["nothing_to_compare"].get<std::string>(), "record no iterations"));
  EXPECT_EQ(j["steps"]["not_compared"], "A records no iterations");
  fs::remove(empty);
}

}  // namespace
}  // namespace swapscope::cli
