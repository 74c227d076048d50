// SPDX-License-Identifier: MIT
/// @brief Static analysis speed: building ResNet-152 and analysing it at k = 32, and placing its
/// swap-all schedule (with and without the prefetches moved earlier).
/// Run: build/bench/analysis_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>

#include "analysis/network_analysis.h"
#include "analysis/placement.h"
#include "analysis/prefetch_schedule.h"
#include "analysis/reuse_delay.h"
#include "graph/zoo.h"

namespace {

using namespace swapscope;

void BM_BuildResNet152(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(buildZooModel("resnet152"));
}
BENCHMARK(BM_BuildResNet152)->Unit(benchmark::kMillisecond);

/// Everything `swapscope analyze --model resnet152 --batch 32` computes: layer costs, keep-all and
/// swap-all GMAPs with their memory curves, the lower bound, peaks and k_max at k = 32.
void BM_AnalyzeResNet152(benchmark::State& state) {
  const Network net = buildZooModel("resnet152");
  const std::int64_t k = 32;
  for (auto _ : state) {
    const NetworkAnalysis a = analyzeNetwork(net);
    benchmark::DoNotOptimize(a.keep_all.curve.peak(k));
    benchmark::DoNotOptimize(a.swap_all.curve.peak(k));
    benchmark::DoNotOptimize(a.swap_all.curve.kMax(std::int64_t{8} << 30));
  }
  state.counters["layers"] = net.size();
}
BENCHMARK(BM_AnalyzeResNet152)->Unit(benchmark::kMillisecond);

/// The part a planner repeats per budget: peak and k_max from an existing curve.
void BM_KMaxResNet152(benchmark::State& state) {
  const NetworkAnalysis a = analyzeNetwork(buildZooModel("resnet152"));
  std::int64_t budget = std::int64_t{1} << 30;
  for (auto _ : state) {
    benchmark::DoNotOptimize(a.swap_all.curve.kMax(budget));
    budget += 4096;
  }
}
BENCHMARK(BM_KMaxResNet152)->Unit(benchmark::kMicrosecond);

/// Placing ResNet-152's swap-all GMAP at k = 612 (the planner's k at 8 GiB): every order, best and
/// first fit, in full (target 0), as the planner does once per (swap set, k). Arg: the reuse delay.
void BM_PlacementResNet152(benchmark::State& state) {
  const NetworkAnalysis a = analyzeNetwork(buildZooModel("resnet152"));
  const Gmap& g = a.swap_all.gmap;
  const std::vector<GmapOp> ops = executionOrder(g, {});
  const auto delay = static_cast<int>(state.range(0));
  std::int64_t extent = 0;
  for (auto _ : state) {
    extent = planPlacement(g, ops, 612, 64, delay).extent;
    benchmark::DoNotOptimize(extent);
  }
  state.counters["buffers"] = static_cast<double>(g.buffers.size());
  state.counters["extent_over_peak"] =
      static_cast<double>(extent) / static_cast<double>(delayedPeak(g, ops, 612, delay, 64));
}
BENCHMARK(BM_PlacementResNet152)->Arg(0)->Arg(2)->Unit(benchmark::kMillisecond);

/// ResNet-152's swap-all schedule at k with its prefetches moved earlier
/// (analysis/prefetch_schedule.h, capped at the plan's peak), reuse delay 1, the pool's 64-byte
/// alignment: the planner's most frequent placement. `extent_over_peak` is the least extent of
/// all orders over the delayed peak (how far above its peak the schedule packs); the time is that
/// of a refusal at a budget of the delayed peak (each order placed until it passes the budget)
/// where the second argument is 1, of every order in full where it is 0. Args: k, refusal.
void BM_PlacementMovedResNet152(benchmark::State& state) {
  static const NetworkAnalysis a = analyzeNetwork(buildZooModel("resnet152"));
  const Gmap& g = a.swap_all.gmap;
  const std::int64_t k = state.range(0);
  const bool refusal = state.range(1) != 0;
  const std::vector<GmapOp> ops =
      executionOrder(g, movePrefetches(g, a.swap_all.curve, k, a.swap_all.curve.peak(k)).move_to);
  const std::int64_t peak = delayedPeak(g, ops, k, 1, 64);
  std::int64_t extent = 0;
  for (auto _ : state) {
    extent = planPlacement(g, ops, k, 64, 1, 0, refusal ? peak : 0).extent;
    benchmark::DoNotOptimize(extent);
  }
  if (!refusal) {
    state.counters["extent_over_peak"] = static_cast<double>(extent) / static_cast<double>(peak);
  }
  state.counters["packs_at_peak"] = extent <= peak;
}
BENCHMARK(BM_PlacementMovedResNet152)
    ->ArgsProduct({{17, 44, 200}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
