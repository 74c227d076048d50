// SPDX-License-Identifier: MIT
/// @brief Planner speed: a full plan (k search plus swap set) for ResNet-152 at 224x224 and a
/// sweep of 64 budgets, with the model fitted to the resnet56 sample run (per-type curves,
/// transferred to ResNet-152). One thread, except where the argument gives the planner more (0:
/// one per hardware thread); those report wall time.
/// Run: build/release/bench/planner_bench --benchmark_repetitions=5
///      --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "analysis/network_analysis.h"
#include "graph/zoo.h"
#include "perfmodel/planner.h"
#include "store/run_db.h"

namespace {

using namespace swapscope;
using namespace swapscope::perf;

const PerfModel& sampleModel() {
  static const PerfModel model =
      PerfModel::fit(store::RunReader(std::string(SWAPSCOPE_SAMPLE_RUNS_DIR) +
                                      "/resnet56-32x32-cpu-profile.swapdb")
                         .load());
  return model;
}

const Network& resnet152() {
  static const Network net = buildZooModel("resnet152");
  return net;
}

PlanRequest request(Policy policy, PlanMode mode, std::int64_t budget, int threads = 1) {
  PlanRequest r;
  r.policy = policy;
  r.mode = mode;
  r.budget = budget;
  r.threads = threads;
  return r;
}

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

void report(benchmark::State& state, const PlanResult& r) {
  state.counters["k"] = static_cast<double>(r.trainable ? r.best.k : 0);
  state.counters["simulations"] = r.evaluated;
}

/// What `swapscope plan` does after loading the model: build the planner (costs, GMAPs, curves
/// resolved per step) and plan at 8 GiB. Arg: the policy.
void BM_FullPlanResNet152(benchmark::State& state) {
  const auto policy = static_cast<Policy>(state.range(0));
  PlanResult r;
  for (auto _ : state) {
    r = plan(sampleModel(), resnet152(), request(policy, PlanMode::Argmin, 8 * kGiB));
    benchmark::DoNotOptimize(r.best.sim.t_iter);
  }
  report(state, r);
  state.SetLabel(std::string(policyName(policy)));
}
BENCHMARK(BM_FullPlanResNet152)->DenseRange(0, 3)->Unit(benchmark::kMillisecond);

/// The full accudnn plan at 8 GiB on one planner thread per hardware thread (wall time).
void BM_FullPlanResNet152AllThreads(benchmark::State& state) {
  PlanResult r;
  for (auto _ : state) {
    r = plan(sampleModel(), resnet152(), request(Policy::AccUdnn, PlanMode::Argmin, 8 * kGiB, 0));
    benchmark::DoNotOptimize(r.best.sim.t_iter);
  }
  report(state, r);
}
BENCHMARK(BM_FullPlanResNet152AllThreads)->Unit(benchmark::kMillisecond)->UseRealTime();

/// Algorithm 2 (paper mode) under accudnn at 8 GiB. Arg: the planner's threads (0: one per
/// hardware thread; wall time).
void BM_PaperPlanResNet152(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  PlanResult r;
  for (auto _ : state) {
    r = plan(sampleModel(), resnet152(),
             request(Policy::AccUdnn, PlanMode::Paper, 8 * kGiB, threads));
    benchmark::DoNotOptimize(r.best.sim.t_iter);
  }
  report(state, r);
}
BENCHMARK(BM_PaperPlanResNet152)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

/// One re-plan at 8 GiB on a planner that has planned 6 and 10 GiB before (outside the timing):
/// its caches hold what other budgets left (swap sets' GMAPs, step times, k plans whose budget
/// windows reach 8 GiB), but not this budget's plan. Arg: the planner's threads.
void BM_ReplanResNet152(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  PlanResult r;
  for (auto _ : state) {
    state.PauseTiming();
    auto planner = std::make_unique<Planner>(sampleModel(), resnet152());
    for (const std::int64_t warm : {6 * kGiB, 10 * kGiB})
      benchmark::DoNotOptimize(
          planner->plan(request(Policy::AccUdnn, PlanMode::Argmin, warm, threads)).best.k);
    state.ResumeTiming();
    r = planner->plan(request(Policy::AccUdnn, PlanMode::Argmin, 8 * kGiB, threads));
    benchmark::DoNotOptimize(r.best.sim.t_iter);
    state.PauseTiming();
    planner.reset();
    state.ResumeTiming();
  }
  report(state, r);
  state.counters["reused"] = r.reused;
}
BENCHMARK(BM_ReplanResNet152)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

/// A drag of the app's budget slider: 200 re-plans at budgets from 6 to 10 GiB (log-spaced,
/// one after another) on a planner that is new for each drag (built outside the timing), so
/// that its caches start empty. `per_plan` is the time of one re-plan. Arg: the planner's
/// threads.
void BM_DragResNet152(benchmark::State& state) {
  constexpr int kPositions = 200;
  const int threads = static_cast<int>(state.range(0));
  int trainable = 0, reused = 0, simulations = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto planner = std::make_unique<Planner>(sampleModel(), resnet152());
    state.ResumeTiming();
    trainable = reused = simulations = 0;
    for (int i = 0; i < kPositions; ++i) {
      const double budget = 6.0 * kGiB * std::pow(10.0 / 6.0, i / double(kPositions - 1));
      const PlanResult r = planner->plan(
          request(Policy::AccUdnn, PlanMode::Argmin, static_cast<std::int64_t>(budget), threads));
      trainable += r.trainable;
      reused += r.reused;
      simulations += r.evaluated;
      benchmark::DoNotOptimize(r.best.k);
    }
    state.PauseTiming();
    planner.reset();
    state.ResumeTiming();
  }
  state.counters["trainable"] = trainable;
  state.counters["reused"] = reused;  // k plans taken from earlier budgets' plans
  state.counters["simulations"] = simulations;
  state.counters["per_plan"] = benchmark::Counter(
      kPositions, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_DragResNet152)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

/// 64 budgets, geometric from the minimum (swap-all at k = 1) to 16 GiB, accudnn argmin, with
/// one planner (built inside the timed loop). Arg: the planner's threads.
void BM_Sweep64BudgetsResNet152(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  int trainable = 0;
  for (auto _ : state) {
    const Planner planner(sampleModel(), resnet152());
    const double lo = static_cast<double>(planner.minBudget());
    const double ratio = std::pow(16.0 * kGiB / lo, 1.0 / 63.0);
    trainable = 0;
    for (int i = 0; i < 64; ++i) {
      const auto budget = static_cast<std::int64_t>(lo * std::pow(ratio, i));
      const PlanResult r =
          planner.plan(request(Policy::AccUdnn, PlanMode::Argmin, budget, threads));
      trainable += r.trainable;
      benchmark::DoNotOptimize(r.best.k);
    }
  }
  state.counters["trainable"] = trainable;
}
BENCHMARK(BM_Sweep64BudgetsResNet152)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

/// The same 64 budgets as the Trade-off view plans them (perf::sweep): each on one planner
/// thread, several budgets at once. Arg: the lanes (0: one per hardware thread).
void BM_Sweep64BudgetsResNet152Lanes(benchmark::State& state) {
  const int lanes = static_cast<int>(state.range(0));
  std::atomic<int> trainable{0};
  for (auto _ : state) {
    const Planner planner(sampleModel(), resnet152());
    const double lo = static_cast<double>(planner.minBudget());
    const double ratio = std::pow(16.0 * kGiB / lo, 1.0 / 63.0);
    std::vector<std::int64_t> budgets;
    for (int i = 0; i < 64; ++i)
      budgets.push_back(static_cast<std::int64_t>(lo * std::pow(ratio, i)));
    trainable = 0;
    sweep(planner, request(Policy::AccUdnn, PlanMode::Argmin, 0), budgets, lanes,
          [&](SweepOutcome&& o) { trainable += o.plan && o.plan->trainable; });
  }
  state.counters["trainable"] = trainable.load();
}
BENCHMARK(BM_Sweep64BudgetsResNet152Lanes)
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

/// The planner's cost against depth: a full accudnn argmin plan (construction included) of the
/// CIFAR ResNets at 32x32 and the ImageNet ones at 224x224, each at the budget of its swap-all
/// peak at k = 256, so that every network searches k over the same range. `steps` is 2N.
/// Arg: the index into the list.
void BM_FullPlanByDepth(benchmark::State& state) {
  static const char* const kModels[] = {"resnet20", "resnet56",  "resnet110", "resnet1202",
                                        "resnet50", "resnet101", "resnet152"};
  const char* name = kModels[state.range(0)];
  const Network net = buildZooModel(name);
  const std::int64_t budget =
      planMemory(net, computeLayerCosts(net), Policy::SwapAll).curve.peak(256);
  PlanResult r;
  for (auto _ : state) {
    r = plan(sampleModel(), net, request(Policy::AccUdnn, PlanMode::Argmin, budget));
    benchmark::DoNotOptimize(r.best.sim.t_iter);
  }
  report(state, r);
  state.counters["steps"] = static_cast<double>(r.gmap.steps());
  state.SetLabel(name);
}
BENCHMARK(BM_FullPlanByDepth)->DenseRange(0, 6)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
