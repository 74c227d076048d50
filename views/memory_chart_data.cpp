// SPDX-License-Identifier: MIT
#include "views/memory_chart_data.h"

namespace swapscope {

MemoryChartData makeMemoryChartData(const Network& net, const NetworkAnalysis& analysis,
                                    const MemoryPlan& vdnn, std::int64_t k, std::int64_t budget) {
  MemoryChartData d;
  d.title = net.name() + " at k = " + std::to_string(k);
  d.k = k;
  d.budget = budget;
  d.forward_steps = analysis.keep_all.gmap.forward_steps;
  const std::pair<const char*, const MemoryPlan*> plans[] = {
      {"keep-all", &analysis.keep_all}, {"vdnn-conv", &vdnn}, {"swap-all", &analysis.swap_all}};
  for (const auto& [name, plan] : plans) {
    MemorySeries s;
    s.policy = name;
    for (int step = 1; step <= plan->gmap.steps(); ++step) {
      s.bytes.push_back(static_cast<double>(plan->curve.resident[step].at(k)));
    }
    s.peak = plan->curve.peak(k);
    d.series.push_back(std::move(s));
  }
  return d;
}

}  // namespace swapscope
