// SPDX-License-Identifier: MIT
#include "gui/view_registry.h"

#include "gui/measured_views.h"
#include "gui/workbench_types.h"
#include "views/compare_view.h"
#include "views/layers_view.h"
#include "views/memory_chart_view.h"
#include "views/model_view.h"
#include "views/streams_view.h"
#include "views/summary_view.h"
#include "views/timeline_view.h"
#include "views/tradeoff_view.h"

namespace swapscope::gui {
namespace {

template <class View>
PlanView* make() {
  return new View;
}

std::any memoryData(const PlanContext& c, const perf::PlanRequest& request,
                    const perf::PlanResult& result) {
  return makePlanMemoryChartData(*c.network, c.analysis, result,
                                 std::string(policyName(request.policy)), request.budget);
}

std::any streamsData(const PlanContext& c, const perf::PlanRequest&,
                     const perf::PlanResult& result) {
  return makeStreamsData(*c.network, result, c.run->model.get(), &c.planner->costs());
}

std::any layersData(const PlanContext& c, const perf::PlanRequest& request,
                    const perf::PlanResult& result) {
  return makeLayersData(*c.network, c.planner->costs(), *c.run->model, request, result);
}

std::any summaryData(const PlanContext& c, const perf::PlanRequest& request,
                     const perf::PlanResult& result) {
  SummaryContext sc;
  sc.network = c.network->name();
  sc.policy = std::string(policyName(request.policy));
  sc.mode = request.batch ? "fixed k" : std::string(perf::planModeName(request.mode));
  sc.profile_device = c.run->model->device();
  sc.backend = c.run->rows->meta.backend;
  sc.source_db = c.run->path;
  sc.network_transferred = c.transferred;
  sc.profile_warning = c.run->profile_warning;
  sc.unfinished_warning = c.run->unfinished_warning;
  sc.not_profile_warning = c.run->not_profile_warning;
  sc.device_memory = c.run->rows->meta.device_memory;
  return makeSummaryData(result, request, sc);
}

QWidget* timeline(MeasuredViews& m) {
  return m.timeline();
}

QWidget* compare(MeasuredViews& m) {
  return m.compare();
}

}  // namespace

const std::vector<ViewRow>& viewTable() {
  // One row a view. tests/CMakeLists.txt reads the names from the `.name = "..."` fields.
  static const std::vector<ViewRow> table = {
      {.name = "memory",
       .title = "Memory",
       .make = make<MemoryChartView>,
       .build = memoryData,
       .eager = true},
      {.name = "streams", .title = "Streams", .make = make<StreamsView>, .build = streamsData},
      {.name = "tradeoff", .title = "Trade-off", .make = make<TradeoffView>, .eager = true},
      {.name = "layers", .title = "Layers", .make = make<LayersView>, .build = layersData},
      {.name = "model", .title = "Model", .make = make<ModelView>},
      {.name = "summary",
       .title = "Summary",
       .make = make<SummaryView>,
       .build = summaryData,
       .eager = true},
      {.name = "timeline", .title = "Timeline", .recorded = timeline},
      {.name = "compare", .title = "Compare", .recorded = compare},
  };
  return table;
}

QStringList viewNames() {
  QStringList names;
  for (const ViewRow& row : viewTable())
    names << row.name;
  return names;
}

QString viewChoices() {
  QStringList names = viewNames();
  const QString last = names.takeLast();
  return names.join(", ") + " or " + last;
}

}  // namespace swapscope::gui
