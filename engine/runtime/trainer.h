// SPDX-License-Identifier: MIT
/// @brief The training loop on a SwapExecutor: shuffled minibatches (the last incomplete one of
/// an epoch is dropped), SGD, evaluation on a test split, and weight files.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/files.h"
#include "runtime/dataset.h"
#include "runtime/executor.h"

namespace swapscope::rt {

struct TrainConfig {
  std::int64_t iterations = 0;  ///< if > 0: run this many iterations
  std::int64_t epochs = 0;      ///< otherwise: this many passes over the training set
  SgdConfig sgd;
  std::uint64_t seed = 1;  ///< shuffling
  bool shuffle = true;
};

struct TrainProgress {
  std::int64_t iteration = 0;  ///< completed
  std::int64_t total = 0;
  float loss = 0;           ///< of the latest iteration
  double images_per_s = 0;  ///< so far
};

struct TrainResult {
  std::int64_t iterations = 0;
  std::int64_t images = 0;
  double seconds = 0;  ///< training iterations only (evaluation excluded)
  double images_per_s = 0;
  std::vector<double> iteration_seconds;  ///< every training iteration's duration, in order
  float first_loss = 0, final_loss = 0;
  double mean_recent_loss = 0;  ///< mean over the last min(iterations, 100); NaN: none
  std::int64_t offload_bytes = 0, prefetch_bytes = 0, load_bytes = 0;
  std::int64_t stall_ns = 0;
  bool cancelled = false;
  IterationRecord last_iteration;  ///< the timeline of the last iteration
};

struct EvalResult {
  std::int64_t samples = 0;
  std::int64_t correct = 0;
  double loss = 0;  ///< mean
  double accuracy() const {
    return samples ? static_cast<double>(correct) / static_cast<double>(samples) : 0.0;
  }
};

using ProgressFn = std::function<void(const TrainProgress&)>;

/// Error(BadInput) naming the data set when `data` cannot feed `net` at minibatch k: another
/// sample shape, more classes than the network has outputs, or fewer samples than k (k = 0: any
/// number).
void checkData(const Network& net, const Dataset& data, std::int64_t k);

/// Trains on `data`. `progress` is called after each iteration; `cancel`, when set, stops after
/// the current iteration (result.cancelled).
TrainResult train(SwapExecutor& ex, const Dataset& data, const TrainConfig& config,
                  const ProgressFn& progress = {}, const std::atomic<bool>* cancel = nullptr);
/// Top-1 accuracy and mean loss over all of `data`, in minibatches of the executor's k.
EvalResult evaluate(SwapExecutor& ex, const Dataset& data);

/// Why `weights` and `running_stats` (as SwapExecutor::readWeights and readRunningStats give
/// them) are no weights a weight file may hold, as loadWeights would refuse them: the first
/// tensor holding NaN or an infinity, or a negative running variance, named as in a weight file
/// ("'bn2.running_stats' holds infinity at value 3 of 64 (...)"). Empty where they may be saved.
std::string unsavableWeights(const Network& net, const std::vector<std::vector<float>>& weights,
                             const std::vector<std::vector<float>>& running_stats);

/// Weight files: "SWSWGT01", the network's structure hash, then each layer's learnable values
/// and running statistics by name. Loading checks the hash, every name, every size and every
/// value. Saving goes through a temporary file (files::AtomicFile): an existing file is replaced
/// only with rules.force, an input never; weights that loading would refuse (unsavableWeights)
/// are not written, Error(Runtime) naming the file and the tensor, any existing file left as it
/// was.
void saveWeights(const std::string& path, const Network& net,
                 const std::vector<std::vector<float>>& weights,
                 const std::vector<std::vector<float>>& running_stats,
                 const files::OutputRules& rules = {});
struct WeightFile {
  std::vector<std::vector<float>> weights, running_stats;
};
WeightFile loadWeights(const std::string& path, const Network& net);

}  // namespace swapscope::rt
