// SPDX-License-Identifier: MIT
/// @brief One training iteration of the CIFAR ResNet-20 at k = 32 on the CPU backend, under
/// keep-all and under swap-all, with the pool at exactly each plan's peak. Counters: images/s,
/// the compute stream's stall per iteration, and the bytes swapped out.
/// Run: build/bench/train_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>

#include "analysis/network_analysis.h"
#include "graph/zoo.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/dataset.h"
#include "runtime/executor.h"

namespace {

using namespace swapscope;

void BM_TrainIterationResNet20(benchmark::State& state, Policy policy) {
  const Network net = buildZooModel("resnet20");
  const std::int64_t k = 32;
  const auto costs = computeLayerCosts(net);
  const SwapSet swapped = makeSwapSet(policy, net, costs);
  const std::int64_t peak = planMemory(net, costs, swapped).curve.peak(k);
  auto device = rt::createCpuDevice();
  rt::SwapExecutor ex(*device, net, k, swapped, peak);
  const rt::Dataset data = rt::syntheticDataset(net.sampleShape(), 10, k, 1);
  std::uint64_t it = 0;
  ex.trainIteration(data.images.data(), data.labels.data(), it++, {});  // warm-up
  std::int64_t stall = 0, offloaded = 0;
  for (auto _ : state) {
    const rt::IterationRecord r = ex.trainIteration(data.images.data(), data.labels.data(), it++, {});
    stall += r.stall_total_ns;
    offloaded += r.offload_bytes;
  }
  const auto n = static_cast<double>(state.iterations());
  state.counters["images/s"] =
      benchmark::Counter(static_cast<double>(k) * n, benchmark::Counter::kIsRate);
  state.counters["stall_ms"] = static_cast<double>(stall) * 1e-6 / n;
  state.counters["offload_MiB"] = static_cast<double>(offloaded) / n / (1 << 20);
  state.counters["pool_MiB"] = static_cast<double>(peak) / (1 << 20);
}
BENCHMARK_CAPTURE(BM_TrainIterationResNet20, keep_all, Policy::KeepAll)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_TrainIterationResNet20, swap_all, Policy::SwapAll)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
