// SPDX-License-Identifier: MIT
#include "store/plan_file.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <string_view>

#include "analysis/policy.h"
#include "common/batch_limit.h"
#include "common/error.h"
#include "common/files.h"
#include "graph/json_guard.h"

namespace swapscope::store {

namespace fs = std::filesystem;

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

ojson planToJson(const PlanFile& p) {
  ojson swaps = ojson::array();
  for (const PlanSwap& s : p.swap_set) {
    swaps.push_back(
        {{"fm", s.fm}, {"release_step", s.release_step}, {"prefetch_step", s.prefetch_step}});
  }
  ojson remakes = ojson::array();
  for (const PlanRecompute& r : p.recompute) {
    remakes.push_back(
        {{"fm", r.fm}, {"release_step", r.release_step}, {"recompute_step", r.recompute_step}});
  }
  ojson stalls = ojson::array();
  for (const PlanStall& s : p.predictions.stalls) {
    stalls.push_back(
        {{"step", s.step}, {"layer", s.layer}, {"direction", s.direction}, {"seconds", s.seconds}});
  }
  const PlanPredictions& r = p.predictions;
  ojson doc{{"format", "swapscope-plan"},
            {"version", kPlanVersion},
            {"network", {{"name", p.network_name}, {"structure_hash", p.structure_hash}}},
            {"device", {{"name", p.device_name}, {"backend", p.backend}}},
            {"source_db", p.source_db},
            {"policy", p.policy},
            {"mode", p.mode},
            {"budget", p.budget},
            {"k", p.k},
            {"sub_batches", p.sub_batches},
            {"learning_rate", p.learning_rate},
            {"reuse_delay", p.reuse_delay},
            {"swap_set", swaps},
            {"predictions",
             {{"t_iter_s", r.t_iter_s},
              {"throughput", r.throughput},
              {"peak_bytes", r.peak_bytes},
              {"stall_s", r.stall_s},
              {"t_whole_s", r.t_whole_s},
              {"delta_s", r.delta_s},
              {"extrapolated", r.extrapolated},
              {"transferred", r.transferred},
              {"stalls", stalls}}}};
  if (!r.start_s.empty()) doc["predictions"]["start_s"] = r.start_s;
  if (p.prefetches_moved >= 0) {
    // After reuse_delay: a plan that does not record it reads as it did before the field.
    ojson ordered;
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      ordered[it.key()] = it.value();
      if (it.key() == "reuse_delay") ordered["prefetches_moved"] = p.prefetches_moved;
    }
    doc = std::move(ordered);
  }
  if (!remakes.empty()) {
    // After swap_set: a plan without recomputed FMs reads as it did before the field.
    ojson ordered;
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      ordered[it.key()] = it.value();
      if (it.key() == "swap_set") ordered["recompute"] = remakes;
    }
    return ordered;
  }
  return doc;
}

namespace {

constexpr std::int64_t kMaxStep = std::int64_t{1} << 30;  // the schema's maximum for steps
constexpr std::size_t kMaxPathBytes = 4096;               // the schema's maxLength of source_db

/// The policies a plan file of `version` can hold: every row of the table from version 2 (which
/// records recomputed FMs), the rows that keep or swap only in version 1.
std::vector<std::string_view> planFilePolicies(std::int64_t version = kPlanVersion) {
  std::vector<std::string_view> names;
  for (const PolicyInfo& info : policyTable()) {
    if (version >= 2 || !info.uses(kFmRecompute)) names.push_back(info.name);
  }
  return names;
}

/// Reads fields of one JSON object, naming each by its path in errors.
class Reader {
 public:
  Reader(const json& obj, std::string source, std::string path)
      : m_obj(obj), m_source(std::move(source)), m_path(std::move(path)) {
    if (!m_obj.is_object()) {
      if (m_path.empty()) {
        throwBadInput("plan '" + m_source + "': the document is " + std::string(m_obj.type_name()) +
                      ", not an object (a plan is a JSON object)");
      }
      fail(m_path, "is not an object");
    }
  }

  /// A string of at most `maxBytes` bytes (the schema's maxLength).
  std::string str(const char* name, bool nonEmpty = true,
                  std::size_t maxBytes = kMaxNameBytes) const {
    const json& v = get(name);
    if (!v.is_string()) wrongType(name, "a string", v);
    const auto& s = v.get_ref<const std::string&>();
    if (nonEmpty && s.empty()) fail(at(name), "is empty");
    // A path or a name is cut at a NUL by every C interface: "a.swapdb\u0000x" would open
    // a.swapdb.
    if (s.find('\0') != std::string::npos) {
      fail(at(name), "holds a NUL character (\\u0000), which no name or path may hold: '" +
                         echoText(s) + "'");
    }
    if (s.size() > maxBytes) {
      fail(at(name),
           "is " + std::to_string(s.size()) + " bytes long, more than " + std::to_string(maxBytes));
    }
    return s;
  }
  std::int64_t integer(const char* name, std::int64_t min,
                       std::int64_t max = std::numeric_limits<std::int64_t>::max()) const {
    const json& v = get(name);
    // JSON Schema counts 11.0 and 8388608e0 as integers, and so does the reader.
    const bool integral = v.is_number_float() && std::isfinite(v.get<double>()) &&
                          std::trunc(v.get<double>()) == v.get<double>();
    if (!v.is_number_integer() && !integral) wrongType(name, "an integer", v);
    if (integral && std::fabs(v.get<double>()) >= 0x1p63) fail(at(name), "is too large");
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t{INT64_MAX})
      fail(at(name), "is too large");
    const auto x = integral ? static_cast<std::int64_t>(v.get<double>()) : v.get<std::int64_t>();
    if (x < min) fail(at(name), "must be at least " + std::to_string(min) + ", got " + echoJson(v));
    if (x > max) fail(at(name), "must be at most " + std::to_string(max) + ", got " + echoJson(v));
    return x;
  }
  /// An integer that fits an int: steps and delays.
  int smallInteger(const char* name, int min) const {
    return static_cast<int>(integer(name, min, kMaxStep));
  }
  double number(const char* name) const {
    const json& v = get(name);
    if (!v.is_number()) wrongType(name, "a number", v);
    const double x = v.get<double>();
    if (!(x >= 0)) fail(at(name), "must be a number >= 0, got " + echoJson(v));
    return x;
  }
  /// A time in seconds: at most 1e9 s (about 32 years), so that no edit gives a figure that
  /// prints as infinity or compares as null.
  double seconds(const char* name) const {
    const double x = number(name);
    if (x > kMaxSeconds) {
      fail(at(name), "is " + echoJson(get(name)) + " s, more than the 1e9 s a prediction may be");
    }
    return x;
  }
  static constexpr double kMaxSeconds = 1e9;
  bool boolean(const char* name) const {
    const json& v = get(name);
    if (!v.is_boolean()) wrongType(name, "true or false", v);
    return v.get<bool>();
  }
  std::string oneOf(const char* name, std::initializer_list<std::string_view> allowed) const {
    return oneOf(name, std::span<const std::string_view>(allowed.begin(), allowed.size()));
  }
  std::string oneOf(const char* name, std::span<const std::string_view> allowed) const {
    const std::string s = str(name);
    std::string list;
    for (std::string_view a : allowed) {
      if (s == a) return s;
      list += std::string(list.empty() ? "" : ", ") + std::string(a);
    }
    fail(at(name), "is '" + echoText(s) + "', not one of " + list);
  }
  Reader object(const char* name) const {
    const json& v = get(name);
    if (!v.is_object()) wrongType(name, "an object", v);
    return Reader(v, m_source, at(name));
  }
  const json& array(const char* name) const {
    const json& v = get(name);
    if (!v.is_array()) wrongType(name, "an array", v);
    return v;
  }
  bool has(const char* name) const { return m_obj.contains(name); }
  std::string at(const char* name) const { return m_path.empty() ? name : m_path + "." + name; }
  [[noreturn]] void fail(const std::string& field, const std::string& why) const {
    throwBadInput("plan '" + m_source + "': field '" + field + "' " + why);
  }

 private:
  const json& get(const char* name) const {
    if (!m_obj.contains(name))
      throwBadInput("plan '" + m_source + "': missing field '" + at(name) + "'");
    return m_obj.at(name);
  }
  [[noreturn]] void wrongType(const char* name, const char* want, const json& v) const {
    fail(at(name), std::string("must be ") + want + ", got " + v.type_name());
  }
  const json& m_obj;
  std::string m_source, m_path;
};

/// An entry of `swap_set` or `recompute`: an FM that leaves the device at `release` and comes
/// back at `back` (its prefetch or recompute step).
struct FmSteps {
  std::string fm;
  int release = 0, back = 0;
};

/// The entries of `top`'s array `name`: objects that each name an FM once in the array, with a
/// `release_step` and a `back_field` step that must come after it.
std::vector<FmSteps> readFmSteps(const Reader& top, const char* name, const char* back_field,
                                 const std::string& source) {
  const json& list = top.array(name);
  std::vector<FmSteps> out;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = std::string(name) + "[" + std::to_string(i) + "]";
    if (!list[i].is_object())
      top.fail(path, "must be an object, got " + std::string(list[i].type_name()));
    const Reader e(list[i], source, path);
    FmSteps f{e.str("fm"), e.smallInteger("release_step", 1), e.smallInteger(back_field, 1)};
    if (f.back <= f.release) {
      // Either step can be the wrong one: the entry is named, with both.
      top.fail(path, "has release_step " + std::to_string(f.release) + " and " + back_field + " " +
                         std::to_string(f.back) + ": the " + back_field +
                         " must come after the release_step");
    }
    if (!seen.insert(f.fm).second) top.fail(path + ".fm", "names '" + echoText(f.fm) + "' twice");
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

PlanFile planFromJson(const json& doc, const std::string& source) {
  // Nothing here recurses over the document, but callers may (a copy, a dump): refuse first.
  if (jsonTooDeep(doc)) {
    throwBadInput("plan '" + source + "': JSON nested deeper than " +
                  std::to_string(kMaxJsonDepth) + " levels");
  }
  const Reader top(doc, source, "");
  if (top.str("format") != "swapscope-plan") {
    top.fail("format", "is not \"swapscope-plan\"");
  }
  const std::int64_t version = top.integer("version", 1);
  if (version > kPlanVersion) {
    top.fail("version", "is " + std::to_string(version) + ", newer than this Swapscope reads (" +
                            std::to_string(kPlanVersion) + ")");
  }
  PlanFile p;
  const Reader net = top.object("network");
  p.network_name = net.str("name");
  p.structure_hash = net.str("structure_hash");
  const Reader dev = top.object("device");
  p.device_name = dev.str("name");
  p.backend = dev.oneOf("backend", {"cpu", "cuda"});
  p.source_db = top.str("source_db", false, kMaxPathBytes);
  p.policy = top.oneOf("policy", planFilePolicies(version));
  p.mode = top.oneOf("mode", {"argmin", "paper", "fixed"});
  p.budget = top.integer("budget", 1);
  p.k = top.integer("k", 1, kMaxBatch);  // the limit of every verb (common/batch_limit.h)
  if (version >= 2) {
    p.sub_batches = top.integer("sub_batches", 1, p.k);
    if (p.k % p.sub_batches != 0) {
      top.fail("sub_batches", "is " + std::to_string(p.sub_batches) +
                                  ", which does not divide k (" + std::to_string(p.k) +
                                  "): sub-batches are equal");
    }
  } else if (top.has("sub_batches")) {
    top.fail("sub_batches", "is a version-2 field, but the plan is version 1");
  }
  p.learning_rate = top.number("learning_rate");
  p.reuse_delay = top.smallInteger("reuse_delay", 0);
  p.prefetches_moved = top.has("prefetches_moved") ? top.smallInteger("prefetches_moved", 0) : -1;

  std::set<std::string> swapped;
  for (FmSteps& f : readFmSteps(top, "swap_set", "prefetch_step", source)) {
    swapped.insert(f.fm);
    p.swap_set.push_back({std::move(f.fm), f.release, f.back});
  }
  if (const std::optional<Policy> policy = policyFromName(p.policy);
      policy && !p.swap_set.empty() && !policyInfo(*policy).uses(kFmSwap)) {
    top.fail("swap_set", "lists " + std::to_string(p.swap_set.size()) +
                             " feature maps, but policy '" + p.policy + "' swaps none");
  }
  if (top.has("recompute")) {
    if (version < 2) top.fail("recompute", "is a version-2 field, but the plan is version 1");
    const std::vector<FmSteps> remakes = readFmSteps(top, "recompute", "recompute_step", source);
    const std::optional<Policy> policy = policyFromName(p.policy);
    if (!remakes.empty() && !(policy && policyInfo(*policy).uses(kFmRecompute))) {
      top.fail("recompute", "lists " + std::to_string(remakes.size()) +
                                " feature maps, but policy '" + p.policy + "' does not recompute");
    }
    for (std::size_t i = 0; i < remakes.size(); ++i) {
      if (swapped.count(remakes[i].fm) != 0) {
        top.fail("recompute[" + std::to_string(i) + "].fm",
                 "names '" + echoText(remakes[i].fm) +
                     "', which swap_set swaps: a feature map is swapped or recomputed, not both");
      }
      p.recompute.push_back({remakes[i].fm, remakes[i].release, remakes[i].back});
    }
  }

  const Reader pred = top.object("predictions");
  PlanPredictions& r = p.predictions;
  r.t_iter_s = pred.seconds("t_iter_s");
  r.throughput = pred.number("throughput");
  r.peak_bytes = pred.integer("peak_bytes", 1);
  r.stall_s = pred.seconds("stall_s");
  r.t_whole_s = pred.seconds("t_whole_s");
  r.delta_s = pred.seconds("delta_s");
  // An iteration takes time, and its stall is part of it.
  if (!(r.t_iter_s > 0)) {
    pred.fail("predictions.t_iter_s", "is 0, but an iteration takes time (the plan was edited)");
  }
  if (r.stall_s > r.t_iter_s) {
    pred.fail("predictions.stall_s", "(" + echoJson(json(r.stall_s)) + " s) exceeds t_iter_s (" +
                                         echoJson(json(r.t_iter_s)) +
                                         " s), of which it is a part (the plan was edited)");
  }
  // The throughput is k / t_iter: where it is not, k, sub_batches or the times were edited and
  // the predictions are another iteration's.
  if (r.t_iter_s > 0 && std::fabs(r.throughput * r.t_iter_s - static_cast<double>(p.k)) >
                            1e-9 * static_cast<double>(p.k)) {
    pred.fail("predictions.throughput",
              "(" + echoJson(json(r.throughput)) + " samples/s) is not k / t_iter_s (" +
                  std::to_string(p.k) + " / " + echoJson(json(r.t_iter_s)) +
                  "): the predictions are not this k's (the plan was edited); plan it again");
  }
  r.extrapolated = pred.boolean("extrapolated");
  r.transferred = pred.boolean("transferred");
  if (r.peak_bytes > p.budget) {
    pred.fail("predictions.peak_bytes", "(" + std::to_string(r.peak_bytes) +
                                            ") exceeds the budget (" + std::to_string(p.budget) +
                                            ")");
  }
  const json& stalls = pred.array("stalls");
  for (std::size_t i = 0; i < stalls.size(); ++i) {
    const std::string path = "predictions.stalls[" + std::to_string(i) + "]";
    if (!stalls[i].is_object())
      top.fail(path, "must be an object, got " + std::string(stalls[i].type_name()));
    const Reader s(stalls[i], source, path);
    PlanStall st;
    st.step = s.smallInteger("step", 1);
    st.layer = s.str("layer");
    st.direction = s.oneOf("direction", {"fwd", "bwd"});
    st.seconds = s.seconds("seconds");
    r.stalls.push_back(std::move(st));
  }
  if (pred.has("start_s")) {
    const json& starts = pred.array("start_s");
    if (starts.size() > static_cast<std::size_t>(kMaxStep))
      top.fail("predictions.start_s", "has more entries than steps can be numbered");
    for (std::size_t i = 0; i < starts.size(); ++i) {
      const std::string path = "predictions.start_s[" + std::to_string(i) + "]";
      if (!starts[i].is_number() || !(starts[i].get<double>() >= 0) ||
          starts[i].get<double>() > Reader::kMaxSeconds)
        top.fail(path, "must be a number of seconds from 0 to 1e9, got " + echoJson(starts[i]));
      // The compute stream runs the steps one after the other, within the iteration.
      const double start = starts[i].get<double>();
      if (!r.start_s.empty() && start < r.start_s.back()) {
        top.fail(path, "is " + echoJson(starts[i]) + " s, before the step before it (" +
                           echoJson(json(r.start_s.back())) +
                           " s): steps start in order (the plan was edited)");
      }
      if (start > r.t_iter_s) {
        top.fail(path, "is " + echoJson(starts[i]) + " s, past the iteration's end (t_iter_s " +
                           echoJson(json(r.t_iter_s)) + " s; the plan was edited)");
      }
      r.start_s.push_back(start);
    }
  }
  return p;
}

namespace {

/// `folder` (absolute) with the symbolic links on its way resolved: a relative path from it goes
/// where the file system goes ("L/.." is the parent of the folder L links to, not L's parent).
fs::path realFolder(const fs::path& folder) {
  std::error_code ec;
  fs::path real = fs::weakly_canonical(folder, ec);
  if (ec) return folder.lexically_normal();
  return real;
}

/// `sourceDb`, relative to the current folder, as a path relative to the folder of the plan
/// file `planPath` (absolute where no relative path leads there).
std::string sourceDbFromFolder(const std::string& sourceDb, const std::string& planPath) {
  const fs::path db(sourceDb);
  if (db.empty() || db.is_absolute()) return sourceDb;
  std::error_code ec;
  const fs::path absolute = fs::absolute(db, ec).lexically_normal();
  const fs::path folder = fs::absolute(planPath, ec).parent_path();
  if (ec) return sourceDb;
  // From the real folders of both (links on the way to the database's folder resolved, its file
  // name kept, a link or not), so that the path leads to it whichever name of the plan's folder
  // it is read through.
  const fs::path from = realFolder(folder);
  const fs::path to = realFolder(absolute.parent_path()) / absolute.filename();
  const fs::path relative = to.lexically_relative(from);
  return relative.empty() ? to.string() : relative.string();
}

}  // namespace

std::string planFileText(const PlanFile& plan, const std::string& path) {
  const std::vector<std::string_view> held = planFilePolicies();
  if (std::find(held.begin(), held.end(), plan.policy) == held.end()) {
    throwBadInput("the plan file '" + path + "': policy '" + echoText(plan.policy) +
                  "' is not a row of the policy table");
  }
  PlanFile written = plan;
  written.source_db = sourceDbFromFolder(plan.source_db, path);
  return planToJson(written).dump(2, ' ', false, ojson::error_handler_t::replace) + '\n';
}

void writePlanFile(const PlanFile& plan, const std::string& path, const files::OutputRules& rules) {
  files::writeOutputFile(path, "the plan file", planFileText(plan, path), rules);
}

std::string sourceDbPath(const PlanFile& plan, const std::string& planPath) {
  const fs::path db(plan.source_db);
  if (db.empty() || db.is_absolute()) return plan.source_db;
  const fs::path folder = fs::path(planPath).parent_path();
  // Through a symbolic link to the plan's folder, ".." is the real folder's parent: the path is
  // then taken from the real folder (else as named, to keep messages short).
  std::error_code ec;
  const fs::path absolute = fs::absolute(folder.empty() ? fs::path(".") : folder, ec);
  if (!ec) {
    const fs::path real = realFolder(absolute);
    fs::path named = absolute.lexically_normal();
    if (!named.has_filename() && named != named.root_path()) named = named.parent_path();
    if (real != named) return (real / db).lexically_normal().string();
  }
  return (folder / db).lexically_normal().string();
}

PlanFile readPlanFile(const std::string& path) {
  return planFromText(files::readInputFile(path, "the plan", files::kMaxJsonFileBytes), path);
}

PlanFile planFromText(const std::string& text, const std::string& source) {
  refuseNulByte(text, "plan '" + source + "'");
  // Checked on the text, before the parser allocates a level per bracket.
  if (const auto at = jsonTooDeepAt(text)) {
    throwBadInput("plan '" + source + "': JSON nested deeper than " +
                  std::to_string(kMaxJsonDepth) + " levels at " + describeTextOffset(text, *at));
  }
  json doc;
  try {
    doc = parseJsonUniqueKeys(text, "plan '" + source + "'");
  } catch (const json::exception& e) {
    // A syntax error (with its line and column), or a number no double holds (1e400).
    throwBadInput("plan '" + source + "' is not valid JSON: " + boundedParseError(e.what()));
  }
  return planFromJson(doc, source);
}

}  // namespace swapscope::store
