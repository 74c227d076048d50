// SPDX-License-Identifier: MIT
/// @brief `swapscope train`: trains a network on the engine inside a memory budget, under a swap
/// policy, and reports loss, accuracy, throughput, the pool high-water mark, the bytes swapped
/// and the stall time.
#include <unistd.h>

#include <atomic>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "analysis/swap_policy.h"
#include "cli/commands.h"
#include "cli/device_options.h"
#include "cli/interrupt.h"
#include "cli/sub_batch_options.h"
#include "collectors/profiler.h"
#include "common/bytes.h"
#include "common/error.h"
#include "common/format.h"
#include "common/stats.h"
#include "options/args.h"
#include "options/file_options.h"
#include "options/network_options.h"
#include "runtime/dataset.h"
#include "runtime/executor.h"
#include "runtime/host_memory.h"
#include "runtime/trainer.h"

namespace swapscope::cli {
namespace {

using json = nlohmann::ordered_json;

std::string seconds(double s) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(s < 10 ? 3 : 1) << s << " s";
  return o.str();
}

/// The most epochs `train --epochs` takes, as `plan --epochs`.
constexpr std::int64_t kMaxEpochs = 1000000;

ArgParser trainParser() {
  ArgParser args(
      "swapscope train --model NAME | --net FILE | --onnx FILE [--input CxHxW] [--classes N]\n"
      "                --data fashion-mnist|synthetic --batch K (--iters N | --epochs E)\n"
      "                --budget SIZE [--policy " +
          joinPolicyNames(PolicyRows::Fixed, "|", "|") +
          "]\n"
          "                [--seed S] [--warmup N] [--sub-batches S | --sub-batch-size B]\n"
          "                [--lr X] [--momentum M] [--weight-decay W] [--update "
          "per-layer|multi-tensor]\n"
          "                [--data-dir DIR] [--synthetic-size N] [--load-weights FILE]\n"
          "                [--init file|random] [--save-weights FILE [--force]] [--json]\n" +
          deviceUsage("                "),
      "Trains the network on the engine: one pool of exactly the budget, feature maps swapped\n"
      "to host memory as the policy says, SGD with momentum and weight decay. Prints progress on\n"
      "a terminal, then the loss, the test accuracy (Fashion-MNIST), images/s, the pool\n"
      "high-water mark against the analyzer's prediction, the bytes swapped each way and the\n"
      "compute stream's stall time. Ctrl-C stops after the current iteration. Weights that\n"
      "diverge to NaN or infinity are named, and not saved (exit 1 with --save-weights).");
  addNetworkOptions(args);
  args.option("--data", "D", "fashion-mnist (Debian dataset-fashion-mnist) or synthetic");
  args.option("--batch", "K", "minibatch size (required)");
  args.option("--iters", "N", "train N iterations");
  args.option("--epochs", "E",
              "train E passes over the training set (the last partial "
              "minibatch of each is dropped; at most 1000000)");
  args.option("--budget", "SIZE", "the memory pool: 512MiB, 2GiB, 123456 (required)");
  args.option("--policy", "P", policyChoices(PolicyRows::Fixed, Policy::KeepAll));
  addSubBatchOptions(args);
  addDeviceOptions(args);
  args.option("--seed", "S", "seed of initialisation, shuffling, dropout, data (default 1)");
  args.option("--warmup", "N",
              "iterations left out of the per-iteration median (default 1); they still train. "
              "At or above the iterations trained it leaves no median, and says so");
  args.option("--lr", "X", "learning rate (default 0.01)");
  args.option("--momentum", "M", "SGD momentum (default 0.9)");
  args.option("--weight-decay", "W", "L2 weight decay (default 5e-4)");
  args.option("--update", "U",
              "per-layer: one SGD task per layer with weights (default); multi-tensor: one task "
              "for all (cuda: one kernel launch, as PyTorch's foreach path)");
  args.option("--data-dir", "DIR",
              std::string("Fashion-MNIST directory (default ") + rt::kFashionMnistDir +
                  "; - is refused, ./- names a folder called '-')");
  args.option("--synthetic-size", "N", "samples of synthetic data (default 4 minibatches)");
  args.option("--load-weights", "FILE",
              "start from weights saved by --save-weights (binary, so not standard input: - "
              "is refused, ./- names a file called '-')");
  args.option("--init", "I",
              "file: start an ONNX model from the weights it holds, where it holds them "
              "(default); random: the seeded initialisation");
  args.option("--save-weights", "FILE",
              "write the trained weights to FILE (binary, so not standard output: - is "
              "refused, ./- names a file called '-')");
  addForceFlag(args, "the --save-weights file");
  args.flag("--json", "print a JSON document instead of text");
  return args;
}

/// What the options ask for, checked before anything large is allocated.
struct TrainRequest {
  files::OutputRules rules;
  LoadedNetwork loaded;
  bool fileWeights = false;
  std::string dataName;
  std::string dataDir;
  bool hasTest = false;
  std::int64_t k = 0;
  std::int64_t subBatches = 1;
  std::int64_t budget = 0;
  Policy policy = Policy::KeepAll;
  rt::TrainConfig cfg;
  std::uint64_t seed = 0;
  int warmup = 1;
};

TrainRequest parseTrainRequest(const ArgParser& args, std::ostream& err) {
  TrainRequest q;
  // The inputs that cannot be standard input are refused before anything is read.
  refuseStandardInput(args.value("--load-weights").value_or(""), "--load-weights", "a weight file",
                      "it is binary, as --save-weights writes it");
  refuseStandardInput(args.value("--data-dir").value_or(""), "--data-dir",
                      "the Fashion-MNIST folder", kDataDirIsAFolder, "folder");
  // The output is checked before the training, so that hours of work never end in a refusal.
  q.rules = outputRules(args, {"--net", "--onnx", "--load-weights"});
  if (args.value("--data") == "fashion-mnist")  // the data set's files are inputs too
    addFashionMnistInputs(q.rules, args.value("--data-dir").value_or(rt::kFashionMnistDir));
  refuseStandardOutput(args, "--save-weights",
                       "a weight file is binary, a file that --load-weights reads back");
  checkOutputOption(args, "--save-weights", "the weight file --save-weights", q.rules);
  const std::string init = args.value("--init").value_or("file");
  if (init != "file" && init != "random") {
    throwBadInput("--init: unknown value '" + init + "' (choose file or random)");
  }
  q.loaded = loadNetworkAndWeights(args);
  q.fileWeights = init == "file" && !q.loaded.weights.empty();
  if (q.fileWeights && args.has("--load-weights")) {
    throwBadInput(
        "--load-weights: the ONNX file holds weights too; add --init random to "
        "start from the --load-weights file");
  }
  q.dataName = args.required("--data");
  if (q.dataName != "fashion-mnist" && q.dataName != "synthetic") {
    throwBadInput("--data: unknown data set '" + q.dataName +
                  "' (choose fashion-mnist or synthetic)");
  }
  if (args.has("--data-dir") && q.dataName != "fashion-mnist")
    warnNoEffect(err, "--data-dir", "it locates Fashion-MNIST, and --data is " + q.dataName);
  if (args.has("--synthetic-size") && q.dataName != "synthetic")
    warnNoEffect(err, "--synthetic-size", "it sizes synthetic data, and --data is " + q.dataName);
  warnForceWithoutOutput(args, "--save-weights", err);
  q.k = batchOption(args);
  q.subBatches = subBatchOption(args, q.k);
  const auto iters = args.positiveInt("--iters");
  // As plan's --epochs: at most a million (more overflowed the count of iterations, which then
  // trained a few, or none, without a word).
  const auto epochs = args.integer("--epochs", 1, kMaxEpochs);
  if (iters.has_value() == epochs.has_value()) {
    throwBadInput("give exactly one of --iters N and --epochs E");
  }
  q.budget = parseByteSize(args.required("--budget"), "--budget");
  q.policy = policyOption(args);
  q.cfg.iterations = iters.value_or(0);
  q.cfg.epochs = epochs.value_or(0);
  q.seed = seedOption(args);
  q.cfg.seed = q.seed;
  if (auto w = args.value("--warmup"))
    q.warmup = static_cast<int>(parseInteger(*w, "option --warmup", 0, 1000000));
  if (auto v = args.value("--lr"))
    q.cfg.sgd.lr = static_cast<float>(parseNumber(*v, "--lr", 0, 100));
  if (auto v = args.value("--momentum")) {
    q.cfg.sgd.momentum = static_cast<float>(parseNumber(*v, "--momentum", 0, 1));
  }
  if (auto v = args.value("--weight-decay")) {
    q.cfg.sgd.weight_decay = static_cast<float>(parseNumber(*v, "--weight-decay", 0, 1));
  }
  q.dataDir = args.value("--data-dir").value_or(rt::kFashionMnistDir);
  q.hasTest = q.dataName == "fashion-mnist";
  return q;
}

/// The executor's seed, sub-batches and update kind.
void setExecutorOptions(const ArgParser& args, const TrainRequest& q,
                        rt::ExecutorOptions& options) {
  options.seed = q.seed;
  options.sub_batches = q.subBatches;
  if (auto u = args.value("--update")) {
    if (*u != "per-layer" && *u != "multi-tensor") {
      throwBadInput("--update: unknown update '" + *u + "' (choose per-layer or multi-tensor)");
    }
    options.multi_tensor_update = *u == "multi-tensor";
  }
}

/// Adds the host memory the data set and the trainer will hold to the executor's options (sizes
/// only; the data is loaded after the engine). Returns the training set's sample count.
std::int64_t addDataHostBytes(const ArgParser& args, const TrainRequest& q,
                              rt::ExecutorOptions& options) {
  const Network& net = q.loaded.net;
  std::int64_t trainSamples = 0;
  if (q.hasTest) {
    const rt::FashionMnistSize size = rt::fashionMnistSize(q.dataDir);
    trainSamples = size.train.samples;
    options.host_extra.push_back(
        {"Fashion-MNIST's training set (" + std::to_string(size.train.samples) + " samples)",
         rt::idxLoadHostBytes(size.train.sample, size.train.samples)});
    options.host_extra.push_back(
        {"its test set (" + std::to_string(size.test.samples) + " samples)",
         rt::idxLoadHostBytes(size.test.sample, size.test.samples)});
  } else {
    trainSamples = args.positiveInt("--synthetic-size").value_or(4 * q.k);
    options.host_extra.push_back(
        {"the synthetic data set (" + std::to_string(trainSamples) + " samples)",
         rt::datasetHostBytes(net.sampleShape(), trainSamples)});
  }
  options.host_extra.push_back({"the trainer's minibatch and shuffled order",
                                rt::trainerHostBytes(net.sampleShape(), q.k, trainSamples)});
  return trainSamples;
}

rt::TrainTest loadTrainData(const TrainRequest& q, std::int64_t trainSamples) {
  const Network& net = q.loaded.net;
  rt::TrainTest data;
  if (q.hasTest) {
    data = rt::loadFashionMnist(q.dataDir);
  } else {
    if (trainSamples >
        (std::int64_t{1} << 31) / std::max<std::int64_t>(1, net.sampleShape().numel())) {
      throwBadInput("--synthetic-size: " + std::to_string(trainSamples) + " samples is too many");
    }
    data.train = rt::syntheticDataset(net.sampleShape(), net.classes(), trainSamples, q.seed);
  }
  return data;
}

/// What the training produced, as both printers read it.
struct TrainReport {
  const TrainRequest& q;
  const rt::Device& device;
  const rt::SwapExecutor& ex;
  const rt::ExecutorOptions& options;
  const rt::TrainTest& data;
  const rt::TrainResult& r;
  const std::optional<rt::EvalResult>& test;
  std::optional<double> medianIter;
  std::optional<std::string> weightsFile;  ///< --save-weights
  bool weightsSaved = false;  ///< not where no iteration completed: the file is left as it was
  /// Where the weights reached hold NaN, an infinity or a negative running variance (the
  /// training diverged), the first such tensor and why (rt::unsavableWeights); empty otherwise.
  std::string diverged;
};

/// Why the weight file was not written, where it was not.
std::string notSavedReason(const TrainReport& t) {
  const std::string kept = " ('" + *t.weightsFile + "' is left as it was)";
  if (!t.diverged.empty()) {
    return "not saved: after iteration " + std::to_string(t.r.iterations) + ", " + t.diverged +
           kept;
  }
  return "not saved: interrupted before an iteration completed" + kept;
}

void printTrainJson(const TrainReport& t, std::ostream& out) {
  const TrainRequest& q = t.q;
  const rt::TrainResult& r = t.r;
  const rt::PoolStats& pool = t.ex.poolStats();
  const std::optional<double>& medianIter = t.medianIter;
  nlohmann::ordered_json j{
      {"network", q.loaded.net.name()},
      {"device", t.device.deviceName()},
      {"data", t.data.train.name},
      {"batch", q.k},
      {"sub_batches", q.subBatches},
      {"policy", std::string(policyName(q.policy))},
      {"budget", q.budget},
      {"iterations", r.iterations},
      {"cancelled", r.cancelled},
      {"seconds", r.seconds},
      {"images_per_s", r.images_per_s},
      {"warmup", q.warmup},
      {"t_iter_median_s", medianIter ? nlohmann::ordered_json(*medianIter) : nullptr},
      {"images_per_s_median",
       medianIter ? nlohmann::ordered_json(static_cast<double>(q.k) / *medianIter) : nullptr},
      {"first_loss", r.first_loss},
      {"final_loss", r.final_loss},
      {"mean_loss_recent", r.mean_recent_loss},
      {"pool",
       {{"high_water", pool.high_water},
        {"predicted_peak", t.ex.predictedPeak()},
        {"high_water_end", pool.high_water_end},
        {"other_bytes", t.device.otherBytes()}}},
      {"offload_bytes", r.offload_bytes},
      {"prefetch_bytes", r.prefetch_bytes},
      {"load_bytes", r.load_bytes},
      {"stall_seconds", static_cast<double>(r.stall_ns) * 1e-9},
      {"update", t.options.multi_tensor_update ? "multi-tensor" : "per-layer"},
      {"kernel_choices", collect::kernelChoicesJson(q.loaded.net, t.ex)},
      {"last_iteration",
       {{"seconds", static_cast<double>(r.last_iteration.duration_ns) * 1e-9},
        {"tasks", r.last_iteration.ops.size()},
        {"stall_seconds", static_cast<double>(r.last_iteration.stall_total_ns) * 1e-9},
        {"offload_overlap", rt::overlapWithCompute(r.last_iteration, rt::TaskKind::Offload)},
        {"prefetch_overlap", rt::overlapWithCompute(r.last_iteration, rt::TaskKind::Prefetch)}}}};
  j["diverged"] = t.diverged.empty() ? json(nullptr) : json(t.diverged);
  if (t.weightsFile) {
    j["save_weights"] = {{"file", *t.weightsFile}, {"saved", t.weightsSaved}};
    if (!t.weightsSaved) j["save_weights"]["reason"] = notSavedReason(t);
  }
  if (t.test) {
    j["test"] = {
        {"samples", t.test->samples}, {"accuracy", t.test->accuracy()}, {"loss", t.test->loss}};
  }
  out << j.dump(2, ' ', false, kReplaceInvalidUtf8) << '\n';
}

void printTrainText(const TrainReport& t, std::ostream& out) {
  const rt::TrainResult& r = t.r;
  const rt::PoolStats& pool = t.ex.poolStats();
  out << std::fixed << std::setprecision(4);
  out << (r.cancelled ? "interrupted after " : "trained ") << r.iterations << " iterations ("
      << r.images << " images) in " << seconds(r.seconds) << '\n'
      << "  loss                " << r.final_loss << " (first " << r.first_loss << ", mean of last "
      << std::min<std::int64_t>(r.iterations, 100) << " " << r.mean_recent_loss << ")\n";
  if (t.test) {
    out << "  test accuracy       " << std::setprecision(2) << 100.0 * t.test->accuracy()
        << " % of " << t.test->samples << " (loss " << std::setprecision(4) << t.test->loss
        << ")\n";
  } else if (t.q.hasTest && r.cancelled) {
    out << "  test accuracy       not measured (interrupted)\n";
  }
  out << std::setprecision(1) << "  throughput          " << r.images_per_s << " images/s";
  if (t.medianIter) {
    out << " (median iteration " << std::setprecision(2) << *t.medianIter * 1e3 << " ms after "
        << t.q.warmup << " warm-up: " << std::setprecision(1)
        << static_cast<double>(t.q.k) / *t.medianIter << " images/s)";
  } else if (r.iterations > 0) {
    out << " (no median iteration: "
        << (r.iterations == 1 ? std::string("the 1 iteration was")
                              : "the " + std::to_string(r.iterations) + " iterations were all")
        << " warm-up, --warmup " << t.q.warmup << ")";
  }
  out << "\n"
      << "  pool high-water     " << formatBytes(pool.high_water) << " (" << pool.high_water
      << " bytes; analyzer predicted " << t.ex.predictedPeak() << ")\n"
      << "  swapped out         " << formatBytes(r.offload_bytes) << '\n'
      << "  swapped in          " << formatBytes(r.prefetch_bytes) << " (+ "
      << formatBytes(r.load_bytes) << " of minibatches)\n"
      << "  stall time          " << seconds(static_cast<double>(r.stall_ns) * 1e-9) << " ("
      << std::setprecision(1)
      << (r.seconds > 0 ? 100.0 * static_cast<double>(r.stall_ns) * 1e-9 / r.seconds : 0.0)
      << " % of training time)\n";
  if (t.weightsFile) {
    out << "  weights             "
        << (t.weightsSaved ? "saved to '" + *t.weightsFile + "'" : notSavedReason(t)) << '\n';
  }
  if (r.offload_bytes > 0) {
    out << "  overlap (last iter) offloads "
        << 100.0 * rt::overlapWithCompute(r.last_iteration, rt::TaskKind::Offload)
        << " %, prefetches "
        << 100.0 * rt::overlapWithCompute(r.last_iteration, rt::TaskKind::Prefetch)
        << " % of their time ran beside compute\n";
  }
}

/// --warmup N that covers every iteration: the report has no median iteration. Said before the
/// training, naming both options.
void warnWarmupLeavesNoMedian(const ArgParser& args, const TrainRequest& q,
                              std::int64_t trainSamples, std::ostream& err) {
  if (!args.has("--warmup")) return;
  const bool byIters = q.cfg.iterations > 0;
  const std::int64_t total =
      byIters ? q.cfg.iterations : q.cfg.epochs * (trainSamples / std::max<std::int64_t>(1, q.k));
  if (total <= 0 || total > q.warmup) return;
  const std::string n = std::to_string(total);
  err << "warning: --warmup " << q.warmup << " leaves none of the " << n
      << (total == 1 ? " iteration" : " iterations") << " of "
      << (byIters ? "--iters " + n
                  : "--epochs " + *args.value("--epochs") + " (" + n + " minibatches of " +
                        std::to_string(q.k) + ")")
      << " for the median iteration, so none is reported (give --warmup below " << n << ")\n";
}

}  // namespace

int cmdTrain(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  ArgParser args = trainParser();
  if (!args.parse(argv)) {
    out << args.help();
    return kExitOk;
  }
  const TrainRequest q = parseTrainRequest(args, err);
  const Network& net = q.loaded.net;

  // Nothing large is allocated before the checks: the plan against the budget, then the whole
  // run's host memory with the data's size (sizes only; the data comes after the engine).
  const std::unique_ptr<rt::Device> device = openDevice(args, err);
  const auto costs = computeLayerCosts(net);
  rt::ExecutorOptions options;
  setExecutorOptions(args, q, options);
  FixedSets sets = fixedSets(q.policy, net, costs);
  const SwapSet swapped = std::move(sets.swapped);
  options.recompute = std::move(sets.recomputed);
  const std::int64_t trainSamples = addDataHostBytes(args, q, options);
  rt::SwapExecutor ex(*device, net, q.k, swapped, q.budget, options);
  const rt::TrainTest data = loadTrainData(q, trainSamples);
  warnWarmupLeavesNoMedian(args, q, data.train.size(), err);

  if (auto f = args.value("--load-weights")) {
    const rt::WeightFile w = rt::loadWeights(*f, net);
    ex.writeWeights(w.weights, w.running_stats);
  } else if (q.fileWeights) {
    ex.writeWeights(q.loaded.weights, q.loaded.running_stats);
  }

  const bool json = args.has("--json");
  const bool tty = isatty(STDERR_FILENO) != 0;
  if (!json) {
    out << "training " << net.name() << " on " << data.train.name << " (" << data.train.size()
        << " samples) with " << device->deviceName() << '\n'
        << "k = " << q.k
        << (q.subBatches > 1 ? " in " + std::to_string(q.subBatches) + " sub-batches of " +
                                   std::to_string(q.k / q.subBatches)
                             : std::string())
        << ", policy " << policyName(q.policy) << ", budget " << formatBytes(q.budget)
        << ", predicted peak " << formatBytes(ex.predictedPeak()) << '\n';
    out.flush();
  }
  InterruptScope interrupt;
  const rt::ProgressFn progress = [&](const rt::TrainProgress& p) {
    if (!tty) return;
    std::cerr << "\r  iteration " << p.iteration << "/" << p.total << "  loss " << std::fixed
              << std::setprecision(4) << p.loss << "  " << std::setprecision(1) << p.images_per_s
              << " images/s   " << std::flush;
    if (p.iteration == p.total) std::cerr << '\n';
  };
  const rt::TrainResult r = rt::train(ex, data.train, q.cfg, progress, &interrupt.flag());
  if (tty && r.cancelled) std::cerr << "\n  interrupted: stopping after this iteration\n";
  // Interrupted: no test pass (the user asked to stop); the weights reached are still saved,
  // unless no iteration completed: they are then the starting weights, and writing them would
  // replace the file (with --force, an earlier training's) with nothing learnt.
  std::optional<rt::EvalResult> test;
  if (q.hasTest && !r.cancelled) test = rt::evaluate(ex, data.test);
  const std::optional<std::string> weightsFile = args.value("--save-weights");
  // Weights that became NaN or infinite (a loss still finite, as batch norm's running statistics
  // overflow first) are said, and not written to a file --load-weights would refuse.
  std::string diverged;
  bool saveWeights = false;
  if (r.iterations > 0) {
    const std::vector<std::vector<float>> weights = ex.readWeights();
    const std::vector<std::vector<float>> stats = ex.readRunningStats();
    diverged = rt::unsavableWeights(net, weights, stats);
    saveWeights = weightsFile && diverged.empty();
    if (saveWeights) rt::saveWeights(*weightsFile, net, weights, stats, q.rules);
  }

  // The per-iteration median after the warm-up: the first iterations include one-off costs
  // (lazily loaded kernels, first touches of host memory).
  TrainReport report{.q = q,
                     .device = *device,
                     .ex = ex,
                     .options = options,
                     .data = data,
                     .r = r,
                     .test = test,
                     .medianIter = std::nullopt,
                     .weightsFile = weightsFile,
                     .weightsSaved = saveWeights,
                     .diverged = diverged};
  if (r.iteration_seconds.size() > static_cast<std::size_t>(q.warmup)) {
    report.medianIter = median(
        std::vector<double>(r.iteration_seconds.begin() + q.warmup, r.iteration_seconds.end()));
  }
  if (json) {
    printTrainJson(report, out);
  } else {
    printTrainText(report, out);
  }
  if (!diverged.empty()) {
    const std::string why = "the training diverged: after iteration " +
                            std::to_string(r.iterations) + " (loss " + numberText(r.final_loss) +
                            "), " + diverged + "; try a smaller --lr";
    // The file it asked for is not written: a runtime failure, whatever else was reported.
    if (weightsFile) {
      throw Error(ErrorKind::Runtime, "the weight file --save-weights '" + *weightsFile +
                                          "' is not written: " + why + " ('" + *weightsFile +
                                          "' is left as it was)");
    }
    err << "warning: " << why << '\n';
  }
  // As profile and run: a training that did not finish is not a success, whatever it saved.
  return r.cancelled ? kExitFailure : kExitOk;
}

}  // namespace swapscope::cli
