// SPDX-License-Identifier: MIT
/// @brief Where a CPU training iteration's time goes: a zoo model trained keep-all on synthetic
/// data, its compute tasks' times summed per layer kind and direction, the median over the timed
/// iterations of each sum. The times are the compute stream's own per-step task timings, the
/// ones `profile` records.
/// Run: cpu_step_profile MODEL CxHxW K [ITERS] [WARMUP]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "analysis/network_analysis.h"
#include "graph/zoo.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/dataset.h"
#include "runtime/executor.h"

namespace {

using namespace swapscope;

Shape parseShape(const std::string& s) {
  std::vector<std::int64_t> dims;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    const std::size_t x = s.find('x', pos);
    dims.push_back(std::stoll(s.substr(pos, x == std::string::npos ? x : x - pos)));
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  return Shape{dims};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: cpu_step_profile MODEL CxHxW K [ITERS] [WARMUP]\n");
    return 2;
  }
  const std::string model = argv[1];
  const std::int64_t k = std::atoll(argv[3]);
  const int iters = argc > 4 ? std::atoi(argv[4]) : 5;
  const int warmup = argc > 5 ? std::atoi(argv[5]) : 2;
  ZooOptions zoo;
  zoo.input = parseShape(argv[2]);
  const Network net = buildZooModel(model, zoo);
  const auto costs = computeLayerCosts(net);
  const SwapSet keep = makeSwapSet(Policy::KeepAll, net, costs);
  const std::int64_t peak = planMemory(net, costs, keep).curve.peak(k);
  auto device = rt::createCpuDevice();
  rt::SwapExecutor ex(*device, net, k, keep, peak + peak / 8);  // room to pack the buffers
  const std::int64_t classes = net.inputShape(net.size() - 1).numel();
  const rt::Dataset data = rt::syntheticDataset(net.sampleShape(), classes, k, 1);

  std::vector<int> stepLayer{-1};  // steps 1..N: the non-input layers in topological order
  for (int l = 0; l < net.size(); ++l) {
    if (net.layer(l).kind != LayerKind::Input) stepLayer.push_back(l);
  }
  const int n = static_cast<int>(stepLayer.size()) - 1;
  std::map<std::string, std::vector<double>> perKind;  // "kind fwd|bwd" -> ms per iteration
  std::vector<double> total;
  for (int it = 0; it < warmup + iters; ++it) {
    const auto r = ex.trainIteration(data.images.data(), data.labels.data(),
                                     static_cast<std::uint64_t>(it), {});
    if (it < warmup) continue;
    std::map<std::string, double> sums;
    for (const auto& op : r.ops) {
      if (op.stream != rt::StreamKind::Compute) continue;
      std::string key;
      if (op.kind == rt::TaskKind::Update) {
        key = "sgd update";
      } else if (op.step >= 1 && op.step <= 2 * n) {
        const bool fwd = op.step <= n;
        const int layer = stepLayer[static_cast<std::size_t>(fwd ? op.step : 2 * n + 1 - op.step)];
        key = std::string(layerKindName(net.layer(layer).kind)) + (fwd ? " fwd" : " bwd");
      } else {
        key = "other";
      }
      sums[key] += static_cast<double>(op.end_ns - op.start_ns) * 1e-6;
    }
    for (const auto& [key, ms] : sums)
      perKind[key].push_back(ms);
    total.push_back(static_cast<double>(r.duration_ns) * 1e-6);
  }
  std::printf("%s %s k=%lld: median iteration %.1f ms (%.1f images/s)\n", model.c_str(), argv[2],
              static_cast<long long>(k), median(total), static_cast<double>(k) * 1e3 / median(total));
  for (const auto& [key, v] : perKind)
    std::printf("  %-24s %8.1f ms\n", key.c_str(), median(v));
  return 0;
}
