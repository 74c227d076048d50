// SPDX-License-Identifier: MIT
/// @brief Plan JSON reader: the text is parsed as readPlanFile parses it, then planFromJson
/// validates it. Invariant: an accepted plan writes (as writePlanFile does) and reads back equal.
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "fuzz_common.h"
#include "store/plan_file.h"

using namespace swapscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  store::PlanFile plan;
  try {
    const nlohmann::json doc = nlohmann::json::parse(fuzz::asText(data, size), nullptr, false);
    if (doc.is_discarded()) return 0;
    plan = store::planFromJson(doc, "fuzz.plan.json");
  } catch (const Error&) {
    return 0;
  }
  try {
    const std::string text = store::planToJson(plan).dump(2) + '\n';
    const store::PlanFile back = store::planFromJson(nlohmann::json::parse(text), "written.json");
    if (!(back == plan)) fuzz::finding("an accepted plan reads back different after writing");
  } catch (const Error& e) {
    fuzz::finding(std::string("an accepted plan does not read back: ") + e.what());
  }
  return 0;
}
