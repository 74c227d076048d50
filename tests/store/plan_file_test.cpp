// SPDX-License-Identifier: MIT
/// @brief Plan files: a round trip, and every kind of bad plan refused with the field named. The
/// missing-field, wrong-type and out-of-range cases are generated from docs/plan.schema.json, so
/// the schema and the reader cannot drift apart.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "analysis/policy.h"
#include "common/error.h"
#include "store/plan_file.h"

namespace swapscope::store {
namespace {

using json = nlohmann::json;

PlanFile samplePlan() {
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
  p.predictions = {0.0421,
                   64 / 0.0421,
                   30 << 20,
                   0.0032,
                   0,
                   0,
                   true,
                   false,
                   {{26, "relu1", "bwd", 0.0011}, {1, "conv1", "fwd", 0.0021}},
                   {0.0021, 0.003, 0.0042}};
  return p;
}

/// An ito plan that swaps conv1 and relu1 and re-makes relu2 and pool1 in backward.
PlanFile recomputingPlan() {
  PlanFile p = samplePlan();
  p.policy = "ito";
  p.recompute = {{"relu2", 5, 24}, {"pool1", 4, 25}};
  return p;
}

std::string refusal(const json& doc) {
  try {
    planFromJson(doc, "p.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    return e.what();
  }
  return "";
}

/// The plan file at `path`, its relative source_db (written relative to the plan's folder) as
/// the path from the current folder that it names.
PlanFile readBack(const std::string& path) {
  PlanFile p = readPlanFile(path);
  const std::filesystem::path db = sourceDbPath(p, path);
  p.source_db = db.lexically_relative(std::filesystem::current_path()).string();
  return p;
}

TEST(PlanFile, ARelativeSourceDbIsWrittenFromThePlanFilesFolderAndAnAbsoluteOneAsItIs) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("swapscope-plan-folders-" + std::to_string(getpid()));
  fs::create_directories(dir / "plans");
  PlanFile p = samplePlan();
  p.source_db = "runs/a.swapdb";  // from the current folder
  const std::string plan = (dir / "plans" / "p.json").string();
  writePlanFile(p, plan, {.force = true});
  const PlanFile back = readPlanFile(plan);
  EXPECT_EQ(fs::path(sourceDbPath(back, plan)),
            (fs::current_path() / "runs/a.swapdb").lexically_normal());
  EXPECT_EQ(back.source_db,
            (fs::current_path() / "runs/a.swapdb").lexically_relative(dir / "plans").string());
  p.source_db = "/data/runs/a.swapdb";
  writePlanFile(p, plan, {.force = true});
  EXPECT_EQ(readPlanFile(plan).source_db, "/data/runs/a.swapdb");
  EXPECT_EQ(sourceDbPath(readPlanFile(plan), plan), "/data/runs/a.swapdb");
  // A plan file named without a folder: its source_db is from the current folder.
  PlanFile here;
  here.source_db = "runs/a.swapdb";
  EXPECT_EQ(sourceDbPath(here, "p.json"), "runs/a.swapdb");
  fs::remove_all(dir);
}

// A plan written through a symbolic link to its folder: its source_db leads to the database
// read through the link and through the real folder alike (it was written from the link's
// name, and "../f.swapdb" from the real folder named another file).
TEST(PlanFile, ASourceDbWrittenThroughALinkedFolderLeadsToTheDatabaseEitherWay) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("swapscope-plan-link-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "d1" / "d2");
  fs::create_directory_symlink(fs::path("d1") / "d2", dir / "L");
  std::ofstream(dir / "f.swapdb") << "the database";
  PlanFile p = samplePlan();
  p.source_db = (dir / "f.swapdb").lexically_relative(fs::current_path()).string();
  ASSERT_FALSE(fs::path(p.source_db).is_absolute());
  const std::string throughLink = (dir / "L" / "p.json").string();
  writePlanFile(p, throughLink, {.force = true});
  const std::string real = (dir / "d1" / "d2" / "p.json").string();
  for (const std::string& plan : {throughLink, real}) {
    SCOPED_TRACE(plan);
    const std::string db = sourceDbPath(readPlanFile(plan), plan);
    ASSERT_TRUE(fs::exists(db)) << db;
    EXPECT_TRUE(fs::equivalent(db, dir / "f.swapdb")) << db;
  }
  EXPECT_EQ(readPlanFile(real).source_db, "../../f.swapdb");
  fs::remove_all(dir);
}

TEST(PlanFile, RoundTripsThroughJsonAndDisk) {
  const PlanFile p = samplePlan();
  const json doc = planToJson(p);
  EXPECT_EQ(doc["format"], "swapscope-plan");
  EXPECT_EQ(doc["version"], kPlanVersion);
  EXPECT_EQ(planFromJson(doc, "mem"), p);
  const auto path = std::filesystem::temp_directory_path() / "swapscope-plan-roundtrip.json";
  writePlanFile(p, path.string(), {.force = true});
  EXPECT_EQ(readBack(path.string()), p);
  std::filesystem::remove(path);

  // A plan that recomputes FMs records them (version 2), after the swap set; one that does not
  // has no recompute field at all, as before the field.
  EXPECT_FALSE(doc.contains("recompute"));
  const PlanFile r = recomputingPlan();
  const nlohmann::ordered_json rdoc = planToJson(r);  // in the writer's order
  ASSERT_TRUE(rdoc.contains("recompute"));
  EXPECT_EQ(rdoc["recompute"][0]["fm"], "relu2");
  EXPECT_EQ(rdoc["recompute"][0]["recompute_step"], 24);
  std::vector<std::string> keys;
  for (const auto& [key, value] : rdoc.items())
    keys.push_back(key);
  EXPECT_EQ(std::find(keys.begin(), keys.end(), "recompute") - keys.begin(),
            std::find(keys.begin(), keys.end(), "swap_set") - keys.begin() + 1);
  writePlanFile(r, path.string(), {.force = true});
  EXPECT_EQ(readBack(path.string()), r);
  std::filesystem::remove(path);

  // The moved prefetches, where recorded, follow reuse_delay; a plan without the field (of an
  // older Swapscope) reads as not recorded.
  EXPECT_FALSE(doc.contains("prefetches_moved"));
  EXPECT_EQ(p.prefetches_moved, -1);
  PlanFile m = samplePlan();
  m.prefetches_moved = 7;
  const nlohmann::ordered_json mdoc = planToJson(m);
  EXPECT_EQ(mdoc["prefetches_moved"], 7);
  keys.clear();
  for (const auto& [key, value] : mdoc.items())
    keys.push_back(key);
  EXPECT_EQ(std::find(keys.begin(), keys.end(), "prefetches_moved") - keys.begin(),
            std::find(keys.begin(), keys.end(), "reuse_delay") - keys.begin() + 1);
  EXPECT_EQ(planFromJson(mdoc, "mem"), m);
  json negative = mdoc;
  negative["prefetches_moved"] = -2;
  EXPECT_NE(refusal(negative).find("prefetches_moved"), std::string::npos);
}

TEST(PlanFile, RecomputeEntriesAreChecked) {
  const json good = planToJson(recomputingPlan());
  json doc = good;
  doc["recompute"][0]["fm"] = "relu1";  // swap_set swaps it
  EXPECT_NE(refusal(doc).find("field 'recompute[0].fm' names 'relu1', which swap_set swaps: a "
                              "feature map is swapped or recomputed, not both"),
            std::string::npos)
      << refusal(doc);
  doc = good;
  doc["recompute"][1]["fm"] = "relu2";
  EXPECT_NE(refusal(doc).find("field 'recompute[1].fm' names 'relu2' twice"), std::string::npos)
      << refusal(doc);
  doc = good;
  doc["recompute"][0]["recompute_step"] = 5;
  EXPECT_NE(refusal(doc).find("field 'recompute[0]' has release_step 5 and recompute_step 5: the "
                              "recompute_step must come after the release_step"),
            std::string::npos)
      << refusal(doc);
  doc = good;
  doc["recompute"][0].erase("release_step");
  EXPECT_NE(refusal(doc).find("missing field 'recompute[0].release_step'"), std::string::npos)
      << refusal(doc);
  doc = good;
  doc["recompute"][1] = 7;
  EXPECT_NE(refusal(doc).find("field 'recompute[1]' must be an object, got number"),
            std::string::npos)
      << refusal(doc);
  doc = good;
  doc["recompute"] = "relu2";
  EXPECT_NE(refusal(doc).find("field 'recompute' must be an array"), std::string::npos)
      << refusal(doc);
  // Only a policy that recomputes lists recomputed FMs.
  doc = good;
  doc["policy"] = "accudnn";
  EXPECT_NE(refusal(doc).find("field 'recompute' lists 2 feature maps, but policy 'accudnn' "
                              "does not recompute"),
            std::string::npos)
      << refusal(doc);
  doc["recompute"] = json::array();
  EXPECT_EQ(planFromJson(doc, "p.json").recompute.size(), 0u);
  // A version-1 file has neither the field nor the policies that need it.
  doc = good;
  doc["version"] = 1;
  doc.erase("sub_batches");
  EXPECT_NE(refusal(doc).find("field 'policy' is 'ito', not one of"), std::string::npos)
      << refusal(doc);
  doc["policy"] = "accudnn";
  EXPECT_NE(refusal(doc).find("field 'recompute' is a version-2 field, but the plan is version 1"),
            std::string::npos)
      << refusal(doc);
}

/// Visits every property the schema requires, depth first, with its path in `doc` and its
/// schema. Arrays are entered at index 0 (the sample has at least one item in each).
void eachRequired(
    const json& schema, const json::json_pointer& at, const std::string& path,
    const std::function<void(const json::json_pointer&, const std::string&, const json&)>& visit) {
  if (schema.contains("items")) {
    eachRequired(schema["items"], at / 0, path + "[0]", visit);
    return;
  }
  if (!schema.contains("required")) return;
  for (const auto& name : schema["required"]) {
    const std::string n = name.get<std::string>();
    const json& sub = schema["properties"][n];
    const std::string p = path.empty() ? n : path + "." + n;
    visit(at / n, p, sub);
    eachRequired(sub, at / n, p, visit);
  }
}

json schema() {
  std::ifstream in(std::string(SWAPSCOPE_DOCS_DIR) + "/plan.schema.json");
  return json::parse(in);
}

TEST(PlanFile, EveryRequiredFieldMissingIsNamed) {
  const json good = planToJson(samplePlan());
  int checked = 0;
  eachRequired(schema(), json::json_pointer(), "",
               [&](const json::json_pointer& at, const std::string& path, const json&) {
                 json doc = good;
                 doc[at.parent_pointer()].erase(at.back());
                 EXPECT_NE(refusal(doc).find("missing field '" + path + "'"), std::string::npos)
                     << path << ": " << refusal(doc);
                 ++checked;
               });
  EXPECT_GE(checked, 30);
}

/// A value of another JSON type than the schema allows.
json wrongTypeFor(const json& sub) {
  if (sub.contains("const") || sub.contains("enum")) return 7;
  const std::string t = sub.at("type");
  if (t == "string") return 7;
  if (t == "boolean") return "yes";
  if (t == "array") return json::object();
  if (t == "object") return json::array();
  return "12";  // integer, number
}

TEST(PlanFile, EveryFieldOfTheWrongTypeIsNamed) {
  const json good = planToJson(samplePlan());
  int checked = 0;
  eachRequired(schema(), json::json_pointer(), "",
               [&](const json::json_pointer& at, const std::string& path, const json& sub) {
                 json doc = good;
                 doc[at] = wrongTypeFor(sub);
                 EXPECT_NE(refusal(doc).find("'" + path + "'"), std::string::npos)
                     << path << ": " << refusal(doc);
                 ++checked;
               });
  EXPECT_GE(checked, 30);
}

TEST(PlanFile, EveryValueOutOfItsRangeIsNamed) {
  const json good = planToJson(samplePlan());
  int checked = 0;
  eachRequired(schema(), json::json_pointer(), "",
               [&](const json::json_pointer& at, const std::string& path, const json& sub) {
                 json doc = good;
                 if (sub.contains("maximum")) {
                   json over = good;
                   over[at] = sub["maximum"].get<std::int64_t>() + 1;
                   EXPECT_NE(refusal(over).find("'" + path + "'"), std::string::npos)
                       << path << ": " << refusal(over);
                 }
                 if (sub.contains("minimum")) {
                   doc[at] = sub["minimum"].get<double>() - 1;
                   if (sub["type"] == "integer") doc[at] = sub["minimum"].get<std::int64_t>() - 1;
                 } else if (sub.contains("enum") || sub.contains("const")) {
                   doc[at] = "no-such-value";
                 } else if (sub.value("minLength", 0) > 0) {
                   doc[at] = "";
                 } else {
                   return;
                 }
                 const std::string why = refusal(doc);
                 EXPECT_NE(why.find("'" + path + "'"), std::string::npos) << path << ": " << why;
                 ++checked;
               });
  EXPECT_GE(checked, 25);
}

TEST(PlanFile, SchemaPolicyEnumIsThePolicyTable) {
  // The schema lists exactly the table's names of policies, in its order (version 2 records
  // recomputed FMs), and the reader takes each of them and refuses a name outside them, listing
  // them.
  std::vector<std::string> table;
  std::string listed;
  for (const PolicyInfo& info : policyTable()) {
    table.emplace_back(info.name);
    listed += (listed.empty() ? "" : ", ") + std::string(info.name);
  }
  EXPECT_EQ(schema()["properties"]["policy"]["enum"].get<std::vector<std::string>>(), table);
  for (const std::string& name : table) {
    json doc = planToJson(samplePlan());
    doc["policy"] = name;
    if (name == "keep-all") doc["swap_set"] = json::array();  // it swaps none (checked below)
    EXPECT_EQ(planFromJson(doc, "p.json").policy, name);
  }
  json doc = planToJson(samplePlan());
  doc["policy"] = "swap-some";
  EXPECT_NE(refusal(doc).find("'policy' is 'swap-some', not one of " + listed), std::string::npos)
      << refusal(doc);
  // Version 1 holds the policies that keep or swap only.
  doc["policy"] = "recompute-light";
  doc["version"] = 1;
  doc.erase("sub_batches");
  EXPECT_NE(refusal(doc).find("'policy' is 'recompute-light', not one of"), std::string::npos)
      << refusal(doc);
}

TEST(PlanFile, PredictedStartsAreOptionalAndChecked) {
  json doc = planToJson(samplePlan());
  ASSERT_TRUE(doc["predictions"].contains("start_s"));
  doc["predictions"].erase("start_s");  // plans written before they were recorded
  EXPECT_TRUE(planFromJson(doc, "p.json").predictions.start_s.empty());
  doc["predictions"]["start_s"] = "soon";
  EXPECT_NE(refusal(doc).find("'predictions.start_s' must be an array"), std::string::npos)
      << refusal(doc);
  doc["predictions"]["start_s"] = json::array({0.0, -1.0});
  EXPECT_NE(refusal(doc).find("'predictions.start_s[1]' must be a number of seconds from 0 to 1e9"),
            std::string::npos)
      << refusal(doc);
  // Steps start in order, within the iteration (t_iter_s 0.0421).
  doc["predictions"]["start_s"] = json::array({0.0, 0.002, 0.001});
  EXPECT_NE(refusal(doc).find("'predictions.start_s[2]' is 0.001 s, before the step before it "
                              "(0.002 s): steps start in order"),
            std::string::npos)
      << refusal(doc);
  doc["predictions"]["start_s"] = json::array({0.0, 0.05});
  EXPECT_NE(refusal(doc).find("'predictions.start_s[1]' is 0.05 s, past the iteration's end "
                              "(t_iter_s 0.0421 s"),
            std::string::npos)
      << refusal(doc);
  doc["predictions"]["start_s"] = json::array({0.0, 0.0, 0.0421});  // ties and the end: fine
  EXPECT_EQ(planFromJson(doc, "p.json").predictions.start_s.size(), 3u);
  doc["predictions"]["start_s"] = json::array({0.0, 1e308});
  EXPECT_NE(refusal(doc).find("'predictions.start_s[1]' must be a number of seconds from 0 to "
                              "1e9, got 1e+308"),
            std::string::npos)
      << refusal(doc);
}

/// The reader refuses `doc` with a message holding `part`.
void expectRefusal(const json& doc, const std::string& part) {
  const std::string msg = refusal(doc);
  EXPECT_NE(msg.find(part), std::string::npos) << msg;
}

TEST(PlanFile, AnEditThatMakesThePlanSayTwoThingsIsRefused) {
  const json good = planToJson(samplePlan());
  // A swap set under a policy that swaps nothing.
  json doc = good;
  doc["policy"] = "keep-all";
  expectRefusal(doc,
                "field 'swap_set' lists 2 feature maps, but policy 'keep-all' swaps "
                "none");
  // k edited without the predictions (they were made for k = 64: throughput = 64 / t_iter).
  doc = good;
  doc["k"] = 8000;
  expectRefusal(doc,
                "field 'predictions.throughput' (1520.1900237529692 samples/s) is not "
                "k / t_iter_s (8000 / 0.0421): the predictions are not this k's");
  // An iteration of no time, and a stall longer than the iteration it is part of.
  doc = good;
  doc["predictions"]["t_iter_s"] = 0;
  expectRefusal(doc, "field 'predictions.t_iter_s' is 0, but an iteration takes time");
  doc = good;
  doc["predictions"]["stall_s"] = 100;
  expectRefusal(doc,
                "field 'predictions.stall_s' (100.0 s) exceeds t_iter_s (0.0421 s), of which "
                "it is a part");
  // Times that print as infinity.
  for (const char* field : {"t_iter_s", "stall_s", "t_whole_s", "delta_s"}) {
    doc = good;
    doc["predictions"][field] = 1e308;
    if (std::string(field) == "t_iter_s") doc["predictions"]["throughput"] = 64 / 1e308;
    expectRefusal(doc, "field 'predictions." + std::string(field) +
                           "' is 1e+308 s, more than the 1e9 s a prediction may be");
  }
  // A NUL in a string: the path would be cut there ("a.swapdb\u0000x" opens a.swapdb).
  doc = good;
  doc["source_db"] = std::string("a.swapdb\0junk", 13);
  expectRefusal(doc,
                "field 'source_db' holds a NUL character (\\u0000), which no name "
                "or path may hold: 'a.swapdb\\x00junk'");
  // An integer written as 11.0 is an integer, as JSON Schema counts it; 11.5 is not.
  doc = good;
  doc["k"] = 64.0;
  doc["budget"] = 33554432e0;
  EXPECT_EQ(planFromJson(doc, "p.json").k, 64);
  EXPECT_EQ(planFromJson(doc, "p.json").budget, 32 << 20);
  doc["k"] = 64.5;
  expectRefusal(doc, "'k' must be an integer");
}

TEST(PlanFile, InconsistentPlansAreRefused) {
  const json good = planToJson(samplePlan());
  json doc = good;
  doc["version"] = kPlanVersion + 1;
  EXPECT_NE(refusal(doc).find("newer than this Swapscope reads"), std::string::npos);
  doc = good;
  doc["predictions"]["peak_bytes"] = doc["budget"].get<std::int64_t>() + 1;
  EXPECT_NE(refusal(doc).find("'predictions.peak_bytes' (" +
                              std::to_string(doc["budget"].get<std::int64_t>() + 1) +
                              ") exceeds the budget"),
            std::string::npos)
      << refusal(doc);
  doc = good;
  doc["swap_set"][1]["fm"] = "conv1";
  EXPECT_NE(refusal(doc).find("'swap_set[1].fm' names 'conv1' twice"), std::string::npos)
      << refusal(doc);
  doc = good;
  doc["swap_set"][0]["prefetch_step"] = 1;
  EXPECT_NE(refusal(doc).find("'swap_set[0]' has release_step " +
                              std::to_string(doc["swap_set"][0]["release_step"].get<int>()) +
                              " and prefetch_step 1: the prefetch_step must come after"),
            std::string::npos)
      << refusal(doc);
  // A release step past the prefetch is named as the release step it is, not as a prefetch step.
  doc = good;
  doc["swap_set"][0]["release_step"] = 99999;
  EXPECT_NE(refusal(doc).find("'swap_set[0]' has release_step 99999 and prefetch_step "),
            std::string::npos)
      << refusal(doc);
  doc = good;
  doc["swap_set"][0] = "conv1";
  EXPECT_NE(refusal(doc).find("'swap_set[0]' must be an object"), std::string::npos)
      << refusal(doc);
  doc = good;
  doc["k"] = 1.5;
  EXPECT_NE(refusal(doc).find("'k' must be an integer"), std::string::npos) << refusal(doc);
  EXPECT_NE(refusal(json::array()).find("plan 'p.json': the document is array, not an object"),
            std::string::npos)
      << refusal(json::array());
}

TEST(PlanFile, SubBatchesRoundTripAndMustSplitK) {
  PlanFile p = samplePlan();
  p.sub_batches = 4;
  EXPECT_EQ(planToJson(p)["sub_batches"], 4);
  EXPECT_EQ(planFromJson(planToJson(p), "p.json"), p);
  json doc = planToJson(p);
  doc["sub_batches"] = 5;
  EXPECT_NE(refusal(doc).find("field 'sub_batches' is 5, which does not divide k (64)"),
            std::string::npos)
      << refusal(doc);
  doc["sub_batches"] = 65;
  EXPECT_NE(refusal(doc).find("field 'sub_batches' must be at most 64, got 65"), std::string::npos)
      << refusal(doc);
  doc["sub_batches"] = 0;
  EXPECT_NE(refusal(doc).find("field 'sub_batches' must be at least 1, got 0"), std::string::npos)
      << refusal(doc);
}

TEST(PlanFile, AVersion1PlanReadsAsOneSubBatch) {
  // A version-1 file, as written before sub-batches: no sub_batches field.
  json doc = planToJson(samplePlan());
  doc["version"] = 1;
  doc.erase("sub_batches");
  const PlanFile p = planFromJson(doc, "v1.json");
  EXPECT_EQ(p.sub_batches, 1);
  EXPECT_EQ(p, samplePlan());
  // The field belongs to version 2: a version-1 file that has it is refused, not half-read.
  doc["sub_batches"] = 2;
  EXPECT_NE(refusal(doc).find("field 'sub_batches' is a version-2 field"), std::string::npos)
      << refusal(doc);
}

/// Every key of `written` is a property of `schema`, and every property the schema requires is
/// written; objects nested in both are compared the same way (arrays by their first item).
void expectAgree(const json& written, const json& schema, const std::string& path) {
  const json& props = schema.at("properties");
  for (const auto& [key, value] : written.items()) {
    const std::string at = path.empty() ? key : path + "." + key;
    ASSERT_TRUE(props.contains(key)) << "the writer writes '" << at << "', the schema lacks it";
    const json& sub = props.at(key);
    if (value.is_object() && sub.contains("properties")) expectAgree(value, sub, at);
    if (value.is_array() && !value.empty() && value[0].is_object() && sub.contains("items"))
      expectAgree(value[0], sub.at("items"), at + "[0]");
  }
  for (const auto& name : schema.value("required", json::array()))
    EXPECT_TRUE(written.contains(name.get<std::string>()))
        << "the schema requires '" << (path.empty() ? "" : path + ".") << name.get<std::string>()
        << "', the writer does not write it";
}

TEST(PlanFile, TheWriterAndTheSchemaAgreeOnEveryField) {
  const json doc = planToJson(samplePlan());
  EXPECT_EQ(schema()["properties"]["version"]["maximum"], kPlanVersion);
  expectAgree(doc, schema(), "");
  // With the fields a recomputing plan adds.
  const json remakes = planToJson(recomputingPlan());
  ASSERT_TRUE(remakes.contains("recompute"));
  expectAgree(remakes, schema(), "");
}

TEST(PlanFile, UnreadableFilesAreNamed) {
  const auto dir = std::filesystem::temp_directory_path() / "swapscope-plan-bad";
  std::filesystem::create_directories(dir);
  auto refused = [](const std::string& path) -> std::string {
    try {
      readPlanFile(path);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      return e.what();
    }
    return "";
  };
  EXPECT_NE(refused((dir / "none.json").string())
                .find("cannot open the plan '" + (dir / "none.json").string() + "': no such file"),
            std::string::npos);
  EXPECT_NE(refused(dir.string()).find("is a directory"), std::string::npos);
  std::ofstream((dir / "text.json").string()) << "{ not json";
  EXPECT_NE(refused((dir / "text.json").string()).find("is not valid JSON"), std::string::npos);
  // Where the syntax breaks, and why: a trailing comma on line 3, a file cut short, NaN.
  std::ofstream((dir / "comma.json").string())
      << "{\n  \"format\": \"swapscope-plan\",\n  \"k\": 8,\n}";
  std::ofstream((dir / "cut.json").string()) << "{\"format\": \"swapscope-plan\", \"k\": ";
  std::ofstream((dir / "nan.json").string()) << "{\"k\": NaN}";
  for (const auto& [name, where] :
       std::vector<std::pair<std::string, std::string>>{{"comma.json", "line 4, column 1"},
                                                        {"cut.json", "unexpected end of input"},
                                                        {"nan.json", "line 1, column 7"}}) {
    const std::string msg = refused((dir / name).string());
    EXPECT_NE(msg.find("is not valid JSON: "), std::string::npos) << msg;
    EXPECT_NE(msg.find(where), std::string::npos) << name << ": " << msg;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace swapscope::store
