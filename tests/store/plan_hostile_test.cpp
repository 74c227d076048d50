// SPDX-License-Identifier: MIT
/// @brief Plan files from a hostile user: nesting 100,000 deep, 20 MB strings, and every string
/// of the schema beyond its maxLength. Messages stay one short line and name the field.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "common/error.h"
#include "store/plan_file.h"

namespace swapscope::store {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr std::size_t kMaxMessage = 400;

json samplePlanJson() {
  PlanFile p;
  p.network_name = "fmnist-cnn";
  p.structure_hash = "0123456789abcdef";
  p.device_name = "cpu:0 test";
  p.backend = "cpu";
  p.source_db = "runs/a.swapdb";
  p.policy = "accudnn";
  p.mode = "argmin";
  p.budget = 32 << 20;
  p.k = 64;
  p.learning_rate = 0.025;
  p.reuse_delay = 4;
  p.swap_set = {{"conv1", 1, 28}, {"relu1", 3, 26}};
  p.predictions = {
      0.0421, 64 / 0.0421, 30 << 20, 0.0032, 0, 0, true, false, {{26, "relu1", "bwd", 0.001}}, {}};
  return planToJson(p);
}

std::string refusal(const json& doc) {
  try {
    planFromJson(doc, "p.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

std::string fileRefusal(const std::string& text) {
  const fs::path p =
      fs::temp_directory_path() / ("swapscope-plan-hostile-" + std::to_string(getpid()) + ".json");
  std::ofstream(p, std::ios::binary) << text;
  std::string msg;
  try {
    readPlanFile(p.string());
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    msg = e.what();
  }
  fs::remove(p);
  return msg;
}

void expectContains(const std::string& msg, const std::string& part) {
  EXPECT_NE(msg.find(part), std::string::npos)
      << "message: " << msg.substr(0, 600) << "\nexpected: " << part;
}

json deepValue() {
  json v = 1;
  for (int i = 0; i < 100000; ++i) {
    json a = json::array();
    a.push_back(std::move(v));
    v = std::move(a);
  }
  return v;
}

TEST(PlanHostile, DeepNestingInAFileIsRefusedBeforeParsing) {
  std::string text = samplePlanJson().dump();
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  text.replace(text.find("\"swap_set\":") + 11, 0, deep + ", \"x\": ");
  const std::string msg = fileRefusal(text);
  expectContains(msg, "': JSON nested deeper than 64 levels at line 1, column ");
  EXPECT_LT(msg.size(), kMaxMessage);
}

TEST(PlanHostile, DeepNestingInADocumentIsRefused) {
  for (const char* field : {"budget", "policy", "swap_set", "network"}) {
    json doc = samplePlanJson();
    doc[field] = deepValue();
    const std::string msg = refusal(doc);
    expectContains(msg, "plan 'p.json': JSON nested deeper than 64 levels");
    EXPECT_LT(msg.size(), kMaxMessage);
  }
}

TEST(PlanHostile, TwentyMegabyteStringsGiveShortMessages) {
  const std::string big(20 << 20, 'z');
  json doc = samplePlanJson();
  doc["policy"] = big;
  std::string msg = refusal(doc);
  expectContains(msg, "field 'policy' is 20971520 bytes long, more than 256");
  EXPECT_LT(msg.size(), kMaxMessage);

  doc["policy"] = big.substr(0, 200);  // within the length limit: echoed, cut
  msg = refusal(doc);
  expectContains(msg, "field 'policy' is 'zzz");
  expectContains(msg, "... (200 bytes)', not one of keep-all");
  EXPECT_LT(msg.size(), 256u);  // the cut value and the policy table's names

  doc = samplePlanJson();
  doc["swap_set"][0]["fm"] = big;
  msg = refusal(doc);
  expectContains(msg, "field 'swap_set[0].fm' is 20971520 bytes long, more than 256");
  EXPECT_LT(msg.size(), kMaxMessage);

  // The parser's own message quotes a whole unterminated string.
  msg = fileRefusal(R"({"format": ")" + big);
  expectContains(msg, "is not valid JSON");
  EXPECT_LT(msg.size(), kMaxMessage);
}

TEST(PlanHostile, TheSameNameTwiceIsEchoedBounded) {
  json doc = samplePlanJson();
  const std::string name(300, 'n');
  // Within 256 bytes for the name check, so the duplicate check speaks; the echo is cut.
  doc["swap_set"][0]["fm"] = name.substr(0, 256);
  doc["swap_set"][1]["fm"] = name.substr(0, 256);
  const std::string msg = refusal(doc);
  expectContains(msg, "'swap_set[1].fm' names 'nnn");
  expectContains(msg, "... (256 bytes)' twice");
  EXPECT_LT(msg.size(), 200u);
}

// nlohmann keeps the last of two equal keys: "k": 16, "k": 8 ran k = 8 without a word.
TEST(PlanHostile, AKeyGivenTwiceIsRefusedWithItsLine) {
  std::string text = samplePlanJson().dump(2);
  const std::string field = "\"k\": 64";
  ASSERT_NE(text.find(field), std::string::npos);
  const auto line = 1 + std::count(text.begin(), text.begin() + text.find(field), '\n');
  text.replace(text.find(field), field.size(), "\"k\": 64, \"k\": 8");
  const std::string msg = fileRefusal(text);
  expectContains(msg,
                 "': key \"k\" is given twice in one object (line " + std::to_string(line) + ")");
  expectContains(msg, "plan '");
  // Inside a nested object too.
  text = samplePlanJson().dump();
  text.replace(text.find("\"t_iter_s\""), 10, "\"stall_s\": 1, \"t_iter_s\"");
  expectContains(fileRefusal(text), "key \"stall_s\" is given twice");
}

/// Visits every string property of the schema that has a maxLength, with its path in the plan.
void eachMaxLength(
    const json& schema, const json::json_pointer& at, const std::string& path,
    const std::function<void(const json::json_pointer&, const std::string&, std::size_t)>& visit) {
  if (schema.contains("items")) {
    eachMaxLength(schema["items"], at / 0, path + "[0]", visit);
    return;
  }
  if (schema.contains("maxLength")) visit(at, path, schema["maxLength"].get<std::size_t>());
  if (!schema.contains("properties")) return;
  for (const auto& [name, sub] : schema["properties"].items())
    eachMaxLength(sub, at / name, path.empty() ? name : path + "." + name, visit);
}

TEST(PlanHostile, EveryStringBeyondItsSchemaMaxLengthIsNamed) {
  std::ifstream in(std::string(SWAPSCOPE_DOCS_DIR) + "/plan.schema.json");
  const json schema = json::parse(in);
  // A plan that recomputes, so that every array the schema describes has an item.
  json good = samplePlanJson();
  good["policy"] = "ito";
  good["recompute"] = json::array({{{"fm", "relu2"}, {"release_step", 5}, {"recompute_step", 24}}});
  int checked = 0;
  eachMaxLength(schema, json::json_pointer(), "",
                [&](const json::json_pointer& at, const std::string& path, std::size_t max) {
                  json doc = good;
                  doc[at] = std::string(max, 'a');
                  EXPECT_NO_THROW(planFromJson(doc, "p.json")) << path;
                  doc[at] = std::string(max + 1, 'a');
                  const std::string msg = refusal(doc);
                  expectContains(msg, "field '" + path + "' is " + std::to_string(max + 1) +
                                          " bytes long, more than " + std::to_string(max));
                  ++checked;
                });
  EXPECT_EQ(checked, 7);
}

}  // namespace
}  // namespace swapscope::store
