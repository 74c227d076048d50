// SPDX-License-Identifier: MIT
/// @brief `swapscope models`: the zoo, with each model's size at its default input.
#include <nlohmann/json.hpp>

#include "analysis/layer_cost.h"
#include "cli/commands.h"
#include "common/format.h"
#include "graph/zoo.h"
#include "options/args.h"
#include "options/table.h"

namespace swapscope::cli {

int cmdModels(const std::vector<std::string>& argv, std::ostream& out, std::ostream& /*err*/) {
  ArgParser args("swapscope models [--json]",
                 "Lists the model zoo with each model's default input, classes, layer count,\n"
                 "parameters and forward MACs per sample (at the default input).");
  args.flag("--json", "print a JSON array instead of a table");
  if (!args.parse(argv)) {
    out << args.help();
    return kExitOk;
  }
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  TextTable table;
  table.column("model");
  table.column("family");
  table.column("input");
  table.column("classes", TextTable::Align::Right);
  table.column("layers", TextTable::Align::Right);
  table.column("params", TextTable::Align::Right);
  table.column("MACs/sample", TextTable::Align::Right);
  table.column("description");
  for (const ZooEntry& e : zooEntries()) {
    const Network net = buildZooModel(e.name);
    const CostTotals t = sumCosts(computeLayerCosts(net));
    list.push_back({{"name", e.name},
                    {"family", e.family},
                    {"input", e.default_input.dims},
                    {"classes", e.default_classes},
                    {"layers", net.size()},
                    {"params", t.params},
                    {"forward_macs_per_sample", t.fwd_macs},
                    {"description", e.description}});
    table.row({e.name, e.family, e.default_input.toString(), std::to_string(e.default_classes),
               std::to_string(net.size()), formatGrouped(t.params),
               formatSi(static_cast<double>(t.fwd_macs)), e.description});
  }
  if (args.has("--json")) {
    out << list.dump(2, ' ', false, kReplaceInvalidUtf8) << '\n';
  } else {
    table.print(out);
  }
  return kExitOk;
}

}  // namespace swapscope::cli
