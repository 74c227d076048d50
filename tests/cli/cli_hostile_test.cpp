// SPDX-License-Identifier: MIT
// Hostile inputs through the verbs, in-process: network JSON nested 100,000 deep in a file and in
// a run database (a crash would end this test binary), sizes that overflow 64-bit counts, a
// plan naming a layer the network lacks, and an option missing its value.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/error.h"
#include "options/args.h"
#include "run_cli.h"
#include "sample_runs.h"

namespace swapscope::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::Result;
using testing::run;

const std::string kSample = swapscope::testing::fmnistRun();

fs::path scratch(const std::string& name) {
  return fs::temp_directory_path() / ("swapscope-hostile-" + std::to_string(getpid()) + "-" + name);
}

fs::path writeText(const std::string& name, const std::string& text) {
  const fs::path p = scratch(name);
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

std::string nested(int depth) {
  return std::string(static_cast<std::size_t>(depth), '[') + "1" +
         std::string(static_cast<std::size_t>(depth), ']');
}

/// A network whose `field` ("layers", "shape" or "out_channels") is nested 100,000 deep.
std::string deepNetwork(const std::string& field) {
  const std::string deep = nested(100000);
  const std::string head = R"({"format": "swapscope-network", "version": 1, "name": "deep", )";
  if (field == "layers") return head + R"("layers": [)" + deep + "]}";
  return head + R"("layers": [
    {"name": "data", "type": "input", "shape": )" +
         (field == "shape" ? deep : "[1, 8, 8]") + R"(},
    {"name": "conv", "type": "conv2d", "inputs": ["data"], "out_channels": )" +
         (field == "out_channels" ? deep : "4") + R"(, "kernel": 3},
    {"name": "flat", "type": "flatten", "inputs": ["conv"]},
    {"name": "fc", "type": "linear", "inputs": ["flat"], "out_features": 10},
    {"name": "loss", "type": "softmax_cross_entropy", "inputs": ["fc"]}]})";
}

/// A copy of the fmnist-cnn sample run whose stored network JSON is `text`.
fs::path sampleWithNetworkJson(const std::string& name, const std::string& text) {
  const fs::path db = scratch(name);
  fs::copy_file(kSample, db, fs::copy_options::overwrite_existing);
  sqlite3* h = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(h, "UPDATE network SET json = ?1", -1, &st, nullptr), SQLITE_OK);
  sqlite3_bind_text(st, 1, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  EXPECT_EQ(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return db;
}

void expectRefused(const Result& r, const std::string& part) {
  EXPECT_EQ(r.code, kExitUsage) << r.err.substr(0, 500);
  EXPECT_NE(r.err.find(part), std::string::npos) << r.err.substr(0, 500) << "\nexpected: " << part;
  EXPECT_LT(r.err.size(), 500u);
}

class DeepNetwork : public ::testing::TestWithParam<std::string> {};

TEST_P(DeepNetwork, AnalyzeAndProfileRefuseTheFile) {
  const fs::path net = writeText(GetParam() + ".json", deepNetwork(GetParam()));
  expectRefused(run({"analyze", "--net", net.string(), "--batch", "1"}),
                net.string() + ": JSON nested deeper than 64 levels at line ");
  const fs::path db = scratch("profile.swapdb");
  expectRefused(run({"profile", "--net", net.string(), "--budget", "16MiB", "--db", db.string()}),
                net.string() + ": JSON nested deeper than 64 levels");
  EXPECT_FALSE(fs::exists(db));
  fs::remove(net);
}

TEST_P(DeepNetwork, PlanAndRunRefuseItFromTheRunDatabase) {
  const fs::path db = sampleWithNetworkJson("deep.swapdb", deepNetwork(GetParam()));
  const fs::path planFile = scratch("deep-plan.json");
  // The run database's reader or the network reader refuses it, naming the database.
  const Result plan1 = run({"plan", "--db", db.string(), "--budget", "16MiB", "--batch", "8"});
  expectRefused(plan1, "JSON nested deeper than 64 levels");
  EXPECT_NE(plan1.err.find(db.string()), std::string::npos) << plan1.err;

  // A good plan whose source_db is the damaged copy: run takes the network from there.
  ASSERT_EQ(run({"plan", "--db", kSample, "--budget", "16MiB", "--batch", "8", "--out",
                 planFile.string(), "--force"})
                .code,
            0);
  json plan = json::parse(std::ifstream(planFile));
  plan["source_db"] = db.string();
  std::ofstream(planFile) << plan.dump();
  const Result run1 = run({"run", "--plan", planFile.string(), "--iters", "1"});
  expectRefused(run1, "JSON nested deeper than 64 levels");
  EXPECT_NE(run1.err.find(db.string()), std::string::npos) << run1.err;
  fs::remove(planFile);
  fs::remove(db);
}

INSTANTIATE_TEST_SUITE_P(Fields, DeepNetwork, ::testing::Values("layers", "shape", "out_channels"));

std::string linearNetwork(const std::string& shape, const std::string& outFeatures) {
  return R"({"format": "swapscope-network", "version": 1, "name": "huge", "layers": [
    {"name": "data", "type": "input", "shape": )" +
         shape + R"(},
    {"name": "flat", "type": "flatten", "inputs": ["data"]},
    {"name": "fc", "type": "linear", "inputs": ["flat"], "out_features": )" +
         outFeatures + R"(},
    {"name": "loss", "type": "softmax_cross_entropy", "inputs": ["fc"]}]})";
}

TEST(HostileSizes, AnInputBeyondThirtyTwoBitsIsRefusedNotWrapped) {
  // Read once as 8589934592 x 2147483648 = 2^64 weights: 2,147,483,648 parameters, 0 MACs.
  const fs::path net = writeText("wrap.json", linearNetwork("[8589934592]", "2147483648"));
  expectRefused(run({"analyze", "--net", net.string(), "--batch", "1"}),
                "layer 'data' (input): field 'shape' must be at most 2147483647, got 8589934592");
  fs::remove(net);
}

TEST(HostileSizes, ParameterCountsBeyondSixtyFourBitsNameTheLayer) {
  // 2147483647 input channels, 2147483647 output channels, a 2x2 kernel: about 2^64 weights.
  const fs::path net =
      writeText("params.json",
                R"({"format": "swapscope-network", "version": 1, "name": "huge", "layers": [
    {"name": "data", "type": "input", "shape": [2147483647, 2, 2]},
    {"name": "conv", "type": "conv2d", "inputs": ["data"], "out_channels": 2147483647, "kernel": 2},
    {"name": "flat", "type": "flatten", "inputs": ["conv"]},
    {"name": "loss", "type": "softmax_cross_entropy", "inputs": ["flat"]}]})");
  expectRefused(
      run({"analyze", "--net", net.string(), "--batch", "1"}),
      net.string() + ": layer 'conv' (conv2d): its parameters do not fit in 64-bit integers");
  fs::remove(net);
}

TEST(HostileText, ControlCharactersInNamesAreEscapedInTheTextReport) {
  // A NUL or a newline in a layer's name broke analyze's table (a row cut short, a line of its
  // own); --json writes the name as it is.
  std::string text = linearNetwork("[4]", "3");
  text.replace(text.find(R"("name": "fc")"), 12, R"("name": "f\u0000c\nd")");
  text.replace(text.find(R"("inputs": ["fc"])"), 16, R"("inputs": ["f\u0000c\nd"])");
  const fs::path net = writeText("control.json", text);
  const auto r = run({"analyze", "--net", net.string(), "--batch", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(R"( f\x00c\nd )"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\0'), std::string::npos);
  const auto j = run({"analyze", "--net", net.string(), "--batch", "1", "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_NE(j.out.find(R"("f\u0000c\nd")"), std::string::npos) << j.out;
  fs::remove(net);
}

TEST(HostileSizes, AnInferredSizeBeyondWhatAFileCanStateIsRefused) {
  // 2147483647 x 2 x 2 inputs flattened: a linear layer of 8589934588 input features would be
  // accepted and then written in a form its own reader refuses.
  const fs::path net = writeText("features.json", linearNetwork("[2147483647, 2, 2]", "10"));
  expectRefused(run({"analyze", "--net", net.string(), "--batch", "1"}),
                net.string() +
                    ": layer 'flat' (flatten): output [8589934588] has a dimension above "
                    "2147483647");
  fs::remove(net);
}

TEST(HostileNumbers, ANumberNoDoubleHoldsIsInvalidJsonNotAnInternalError) {
  // nlohmann's parser throws out_of_range, not parse_error, for 1e400.
  const fs::path net = writeText(
      "1e400.json",
      R"({"format":"swapscope-network","version":1,"name":"n","layers":[{"name":"x","type":"input","shape":[1e400]}]})");
  expectRefused(run({"analyze", "--net", net.string(), "--batch", "1"}), "not valid JSON");
  fs::remove(net);
}

TEST(HostileText, BytesThatAreNotUtf8InADatabasePrintAsReplacementCharacters) {
  const fs::path db = scratch("not-utf8.swapdb");
  fs::copy_file(kSample, db, fs::copy_options::overwrite_existing);
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(h, "UPDATE meta SET value = CAST(X'41FF42' AS TEXT) WHERE key = 'host_cpu'",
                   nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(h);
  const Result r = run({"info", "--db", db.string(), "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("A\xEF\xBF\xBD"
                       "B"),
            std::string::npos)
      << r.out.substr(0, 2000);
  fs::remove(db);
}

TEST(HostileSizes, AHugeBatchIsRefused) {
  expectRefused(run({"analyze", "--model", "resnet20", "--batch", "9223372036854775807"}),
                "--batch 9223372036854775807: above the limit of 16777216");
  expectRefused(run({"analyze", "--model", "resnet20", "--batch", "9223372036854775808"}),
                "--batch 9223372036854775808: above the limit of 16777216");
}

TEST(HostilePlan, AnUnknownSwappedLayerNamesThePlanAndTheField) {
  const fs::path planFile = scratch("nosuch.json");
  ASSERT_EQ(run({"plan", "--db", kSample, "--budget", "16MiB", "--policy", "swap-all", "--batch",
                 "8", "--out", planFile.string(), "--force"})
                .code,
            0);
  json plan = json::parse(std::ifstream(planFile));
  plan["swap_set"][0]["fm"] = "nosuchlayer";
  std::ofstream(planFile) << plan.dump(2);
  expectRefused(
      run({"run", "--plan", planFile.string(), "--iters", "1"}),
      planFile.string() + ": swap_set[0].fm: 'nosuchlayer' does not name a layer of 'fmnist-cnn'");
  fs::remove(planFile);
}

TEST(HostilePlan, AKWhoseBytesOverflowNamesThePlanAndTheField) {
  const fs::path planFile = scratch("hugek.json");
  ASSERT_EQ(run({"plan", "--db", kSample, "--budget", "16MiB", "--policy", "swap-all", "--batch",
                 "8", "--out", planFile.string(), "--force"})
                .code,
            0);
  json plan = json::parse(std::ifstream(planFile));
  plan["k"] = std::int64_t{1} << 62;  // every FM's bytes at this k overflow 64 bits
  std::ofstream(planFile) << plan.dump(2);
  std::ostringstream before;
  before << std::ifstream(planFile).rdbuf();
  expectRefused(run({"run", "--plan", planFile.string(), "--iters", "1"}),
                "plan '" + planFile.string() +
                    "': field 'k' must be at most 16777216, got 4611686018427387904");
  std::ostringstream after;
  after << std::ifstream(planFile).rdbuf();
  EXPECT_EQ(after.str(), before.str());
  fs::remove(planFile);
}

TEST(HostileNames, ControlCharactersInAFileNameAreEscapedInTheMessage) {
  // ESC [2J would clear the user's terminal if the message echoed the name raw.
  const std::string name = scratch("no-such-\x1b[2J-net.json").string();
  const Result r = run({"analyze", "--net", name, "--batch", "1"});
  EXPECT_EQ(r.code, kExitUsage) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no-such-\\x1b[2J-net.json"), std::string::npos) << r.err;
}

// --- the argument parser ------------------------------------------------------------------------

ArgParser parser() {
  ArgParser p("t", "test");
  p.option("--model", "NAME", "a model");
  p.option("--batch", "K", "a batch");
  p.option("--shift", "N", "a signed number");
  p.flag("--json", "json");
  return p;
}

std::string refusal(const std::vector<std::string>& args) {
  ArgParser p = parser();
  try {
    p.parse(args);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    return e.what();
  }
  return "";
}

TEST(HostileArgs, AnOptionFollowedByAnotherOptionNeedsAValue) {
  EXPECT_EQ(refusal({"--model", "--batch", "4"}), "option '--model' needs a value (NAME)");
  EXPECT_EQ(refusal({"--model", "--json"}), "option '--model' needs a value (NAME)");
  EXPECT_EQ(refusal({"--model", "--batch=4"}), "option '--model' needs a value (NAME)");
  const Result r = run({"analyze", "--model", "--batch", "4"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("option '--model' needs a value"), std::string::npos) << r.err;
}

TEST(HostileArgs, NegativeNumbersAndOtherWordsAreValues) {
  ArgParser p = parser();
  ASSERT_TRUE(p.parse({"--shift", "-1", "--model", "--not-an-option", "--batch", "-"}));
  EXPECT_EQ(p.value("--shift"), "-1");
  EXPECT_EQ(p.value("--model"), "--not-an-option");
  EXPECT_EQ(p.value("--batch"), "-");
  const Result r = run({"analyze", "--model", "resnet20", "--batch", "-1"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--batch: expected a positive integer, got '-1'"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace swapscope::cli
