// SPDX-License-Identifier: MIT
/// @brief The run database's speed: rows per second written in batched transactions with
/// prepared statements, as a profile writes them (one transaction per iteration) and in bulk;
/// and the time to open a sample run read-only and load everything the app shows.
/// Run: build/release/bench/store_bench --benchmark_repetitions=5
/// --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>

#include "store/run_db.h"
#include "store/run_summary.h"
#include "store/sqlite.h"

namespace {

using namespace swapscope;
namespace fs = std::filesystem;

fs::path scratchFile(const char* name) {
  const fs::path p = fs::temp_directory_path() /
                     ("swapscope-bench-" + std::to_string(getpid()) + "-" + name + ".swapdb");
  fs::remove(p);
  return p;
}

store::RunMeta benchMeta() {
  store::RunMeta m;
  m.kind = "bench";
  m.backend = "none";
  m.device = "none";
  m.policy = "swap-all";
  return m;
}

/// One iteration of a resnet56-sized network under swap-all: 2N = 340 step samples, 170
/// offloads, 170 prefetches and 170 pool samples, committed in one transaction.
void BM_InsertIterationRows(benchmark::State& state) {
  const fs::path path = scratchFile("iteration");
  std::int64_t rows = 0;
  {
    store::RunWriter w(path.string(), benchMeta());
    int iteration = 0;
    for (auto _ : state) {
      store::IterationRows r;
      r.iteration = {128,     iteration, iteration * 1'000'000LL, 900'000, 2.3, 1000, 1 << 26,
                     1 << 26, 1 << 20};
      for (int s = 1; s <= 340; ++s) {
        r.samples.push_back({128, iteration, s, s % 170,
                             s <= 170 ? store::Direction::Forward : store::Direction::Backward,
                             1'000'000LL * s, 1000LL * s, 900, 10});
      }
      for (int t = 0; t < 340; ++t) {
        r.transfers.push_back(
            {128, iteration, t < 170 ? store::TransferKind::Offload : store::TransferKind::Prefetch,
             t < 170, t, t + 1, 1 << 19, 1000LL * t, 1000LL * t + 500, false, 250});
      }
      for (int m = 0; m < 170; ++m)
        r.memory.push_back({128, iteration, 1000LL * m, 1LL << 26});
      w.addIteration(r);
      rows += 1 + 340 + 340 + 170;
      ++iteration;
    }
    w.finish(store::RunStatus::Complete);
  }
  state.counters["rows/s"] =
      benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsRate);
  state.counters["MiB"] = static_cast<double>(fs::file_size(path)) / (1 << 20);
  fs::remove(path);
}
BENCHMARK(BM_InsertIterationRows)->Unit(benchmark::kMillisecond);

/// 100,000 transfer rows per transaction.
void BM_InsertTransfersBulk(benchmark::State& state) {
  const fs::path path = scratchFile("bulk");
  std::int64_t rows = 0;
  {
    store::RunWriter w(path.string(), benchMeta());
    std::vector<store::TransferRow> batch;
    for (int t = 0; t < 100'000; ++t) {
      batch.push_back({64, t / 1000, store::TransferKind::Offload, true, t % 1000, t % 300, 4096,
                       1000LL * t, 1000LL * t + 400, true, 100});
    }
    for (auto _ : state) {
      w.addTransfers(batch);
      rows += static_cast<std::int64_t>(batch.size());
    }
    w.finish(store::RunStatus::Complete);
  }
  state.counters["rows/s"] =
      benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsRate);
  fs::remove(path);
}
BENCHMARK(BM_InsertTransfersBulk)->Unit(benchmark::kMillisecond);

/// Opens a sample run read-only (with its checks) and loads every table and the per-k summary.
void BM_OpenAndLoadSampleRun(benchmark::State& state, const char* file) {
  const std::string path = std::string(SWAPSCOPE_SAMPLE_RUNS_DIR) + "/" + file;
  if (!fs::exists(path)) {
    state.SkipWithError(("no " + path).c_str());
    return;
  }
  std::size_t rows = 0;
  for (auto _ : state) {
    store::RunReader reader(path);
    const store::RunData d = reader.load();
    const auto summary = store::summarizeBatches(d);
    benchmark::DoNotOptimize(summary.data());
    rows = d.samples.size() + d.transfers.size() + d.memory.size() + d.iterations.size();
  }
  state.counters["rows"] = static_cast<double>(rows);
  state.counters["MiB"] = static_cast<double>(fs::file_size(path)) / (1 << 20);
}
/// Opens a sample run read-only with the checks made on every open (header and file size, every
/// table and column, SQLite's quick_check), without loading it.
void BM_OpenSampleRun(benchmark::State& state, const char* file) {
  const std::string path = std::string(SWAPSCOPE_SAMPLE_RUNS_DIR) + "/" + file;
  if (!fs::exists(path)) {
    state.SkipWithError(("no " + path).c_str());
    return;
  }
  for (auto _ : state) {
    store::RunReader reader(path);
    benchmark::DoNotOptimize(reader.schemaVersion());
  }
}
BENCHMARK_CAPTURE(BM_OpenSampleRun, resnet56, "resnet56-32x32-cpu-profile.swapdb")
    ->Unit(benchmark::kMillisecond);

/// One SQLite check alone on the resnet56 sample run, on a connection opened once: what
/// quick_check costs on every open, and what integrity_check would cost instead.
void BM_SqliteCheck(benchmark::State& state, const char* pragma) {
  const std::string path =
      std::string(SWAPSCOPE_SAMPLE_RUNS_DIR) + "/resnet56-32x32-cpu-profile.swapdb";
  if (!fs::exists(path)) {
    state.SkipWithError(("no " + path).c_str());
    return;
  }
  store::Database db(path, store::Database::Mode::ReadOnly);
  for (auto _ : state) {
    store::Statement check(db, pragma);
    const bool row = check.step();
    if (!row || check.text(0) != "ok") state.SkipWithError("the check did not say ok");
  }
}
BENCHMARK_CAPTURE(BM_SqliteCheck, quick_check, "PRAGMA quick_check(1)")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SqliteCheck, integrity_check, "PRAGMA integrity_check(1)")
    ->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_OpenAndLoadSampleRun, resnet56, "resnet56-32x32-cpu-profile.swapdb")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_OpenAndLoadSampleRun, fmnist_cnn, "fmnist-cnn-cpu-profile.swapdb")
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
