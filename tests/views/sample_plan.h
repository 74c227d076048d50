// SPDX-License-Identifier: MIT
/// @brief A real plan for the view tests: a sample run database loaded, its model fitted, its
/// network built and planned with the engine, as `swapscope plan --db` does.
#pragma once

#include <memory>
#include <string>

#include "graph/network_json.h"
#include "perfmodel/model.h"
#include "perfmodel/planner.h"
#include "sample_runs.h"
#include "store/run_db.h"

namespace swapscope::testing {

/// Kept behind a pointer: the planner refers to the model.
struct SamplePlan {
  explicit SamplePlan(const std::string& file)
      : run(store::RunReader(sampleRun(file)).load()),
        net(networkFromText(run.network.json, file)),
        model(perf::PerfModel::fit(run)),
        planner(model, net) {}
  SamplePlan(const SamplePlan&) = delete;
  SamplePlan& operator=(const SamplePlan&) = delete;

  perf::PlanResult plan(const perf::PlanRequest& r) {
    request = r;
    result = planner.plan(r);
    return result;
  }

  store::RunData run;
  Network net;
  perf::PerfModel model;
  perf::Planner planner;
  perf::PlanRequest request;
  perf::PlanResult result;
};

inline std::unique_ptr<SamplePlan> resnet56() {
  return std::make_unique<SamplePlan>("resnet56-32x32-cpu-profile.swapdb");
}
inline std::unique_ptr<SamplePlan> fmnist() {
  return std::make_unique<SamplePlan>("fmnist-cnn-cpu-profile.swapdb");
}

inline perf::PlanRequest request(Policy policy, std::int64_t budget,
                                 std::optional<std::int64_t> batch = std::nullopt) {
  perf::PlanRequest r;
  r.policy = policy;
  r.budget = budget;
  r.batch = batch;
  return r;
}

/// Where to write the PNGs of the views for a look (SWAPSCOPE_VIEWS_PNG_DIR); empty: none.
inline std::string pngDir() {
  const char* d = std::getenv("SWAPSCOPE_VIEWS_PNG_DIR");
  return d ? std::string(d) : std::string();
}

}  // namespace swapscope::testing
