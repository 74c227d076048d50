// SPDX-License-Identifier: MIT
#include "runtime/trainer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>

#include "analysis/layer_cost.h"
#include "common/error.h"
#include "common/files.h"
#include "common/format.h"
#include "common/tensor_values.h"
#include "runtime/rng.h"

namespace swapscope::rt {
void checkData(const Network& net, const Dataset& data, std::int64_t k) {
  if (data.sample != net.sampleShape()) {
    throwBadInput("the data set " + data.name + " has samples of shape " + data.sample.toString() +
                  " but the network '" + net.name() + "' expects " + net.sampleShape().toString() +
                  " (a zoo model takes --input CxHxW; a network file or an imported ONNX model "
                  "sets it in its input layer's 'shape')");
  }
  if (data.classes > net.classes()) {
    throwBadInput("the data set " + data.name + " has " + std::to_string(data.classes) +
                  " classes but the network '" + net.name() + "' has " +
                  std::to_string(net.classes()) +
                  " outputs (a zoo model takes --classes N; a network file sets them in the "
                  "'out_features' of the layer before its loss)");
  }
  if (data.size() < k) {
    throwBadInput("the data set " + data.name + " has " + std::to_string(data.size()) +
                  " samples, fewer than one minibatch of " + std::to_string(k));
  }
}

TrainResult train(SwapExecutor& ex, const Dataset& data, const TrainConfig& config,
                  const ProgressFn& progress, const std::atomic<bool>* cancel) {
  const Network& net = ex.network();
  const std::int64_t k = ex.batch();
  checkData(net, data, k);
  const std::int64_t perEpoch = data.size() / k;
  if (config.iterations <= 0 && perEpoch > 0 &&
      config.epochs > std::numeric_limits<std::int64_t>::max() / perEpoch) {
    throwBadInput("epochs " + std::to_string(config.epochs) + " of " + std::to_string(perEpoch) +
                  " minibatches each: more iterations than a 64-bit count holds");
  }
  const std::int64_t total = config.iterations > 0 ? config.iterations : config.epochs * perEpoch;
  if (total < 1) throwBadInput("nothing to train: give iterations or epochs above 0");

  const std::int64_t sampleElems = data.sample.numel();
  std::vector<float> images(static_cast<std::size_t>(k * sampleElems));
  std::vector<std::int32_t> labels(static_cast<std::size_t>(k));
  std::vector<std::int64_t> order(static_cast<std::size_t>(data.size()));

  TrainResult r;
  std::vector<float> recent;
  for (std::int64_t it = 0; it < total; ++it) {
    const std::int64_t epoch = it / perEpoch, pos = it % perEpoch;
    if (pos == 0) {
      std::iota(order.begin(), order.end(), 0);
      if (config.shuffle) {  // Fisher-Yates on the counter-based generator
        const std::uint64_t s =
            deriveSeed(config.seed, 0x5A0FF1E, static_cast<std::uint64_t>(epoch));
        for (std::size_t i = order.size() - 1; i > 0; --i) {
          const auto j = static_cast<std::size_t>(uniform01(s, i) * static_cast<double>(i + 1));
          std::swap(order[i], order[j]);
        }
      }
    }
    for (std::int64_t i = 0; i < k; ++i) {
      const std::int64_t src = order[static_cast<std::size_t>(pos * k + i)];
      std::memcpy(images.data() + i * sampleElems, data.images.data() + src * sampleElems,
                  static_cast<std::size_t>(sampleElems) * sizeof(float));
      labels[static_cast<std::size_t>(i)] = data.labels[static_cast<std::size_t>(src)];
    }
    IterationRecord rec = ex.trainIteration(images.data(), labels.data(),
                                            static_cast<std::uint64_t>(it), config.sgd, cancel);
    if (rec.cancelled) {  // stopped within the iteration: the weights are the last whole one's
      r.cancelled = true;
      break;
    }
    if (!std::isfinite(rec.loss)) {
      throw Error(ErrorKind::Runtime, "the loss became " + numberText(rec.loss) + " at iteration " +
                                          std::to_string(it + 1) + " (try a smaller --lr)");
    }
    ++r.iterations;
    r.images += k;
    r.seconds += static_cast<double>(rec.duration_ns) * 1e-9;
    r.iteration_seconds.push_back(static_cast<double>(rec.duration_ns) * 1e-9);
    if (it == 0) r.first_loss = rec.loss;
    r.final_loss = rec.loss;
    recent.push_back(rec.loss);
    if (recent.size() > 100) recent.erase(recent.begin());
    r.offload_bytes += rec.offload_bytes;
    r.prefetch_bytes += rec.prefetch_bytes;
    r.load_bytes += rec.load_bytes;
    r.stall_ns += rec.stall_total_ns;
    r.images_per_s = r.seconds > 0 ? static_cast<double>(r.images) / r.seconds : 0;
    r.last_iteration = std::move(rec);
    if (progress) progress({r.iterations, total, r.final_loss, r.images_per_s});
    if (cancel && cancel->load()) {
      r.cancelled = true;
      break;
    }
  }
  r.mean_recent_loss = recent.empty() ? std::nan("")
                                      : std::accumulate(recent.begin(), recent.end(), 0.0) /
                                            static_cast<double>(recent.size());
  return r;
}

EvalResult evaluate(SwapExecutor& ex, const Dataset& data) {
  const Network& net = ex.network();
  checkData(net, data, 0);  // evaluation takes a last partial minibatch
  const std::int64_t k = ex.batch(), sampleElems = data.sample.numel();
  std::vector<float> images(static_cast<std::size_t>(k * sampleElems), 0.0f);
  std::vector<std::int32_t> labels(static_cast<std::size_t>(k), 0);
  EvalResult r;
  for (std::int64_t start = 0; start < data.size(); start += k) {
    const std::int64_t count = std::min(k, data.size() - start);
    std::memcpy(images.data(), data.images.data() + start * sampleElems,
                static_cast<std::size_t>(count * sampleElems) * sizeof(float));
    std::memcpy(labels.data(), data.labels.data() + start,
                static_cast<std::size_t>(count) * sizeof(std::int32_t));
    const EvalBatch b = ex.evaluate(images.data(), labels.data(), count);
    r.samples += count;
    r.correct += b.correct;
    r.loss += b.loss_sum;
  }
  r.loss /= static_cast<double>(r.samples);
  return r;
}

namespace {
constexpr char kWeightMagic[8] = {'S', 'W', 'S', 'W', 'G', 'T', '0', '1'};

struct Writer {
  files::AtomicFile& out;
  void u64(std::uint64_t v) { out.write(&v, sizeof v); }
  void str(const std::string& s) {
    u64(s.size());
    out.write(s);
  }
  void floats(const std::vector<float>& v) {
    u64(v.size());
    out.write(v.data(), v.size() * sizeof(float));
  }
};

struct Reader {
  std::ifstream& in;
  const std::string& path;
  void raw(void* p, std::size_t n, const char* what) {
    in.read(static_cast<char*>(p), static_cast<std::streamsize>(n));
    if (!in) throwBadInput(path + ": the file ends inside " + what);
  }
  std::uint64_t u64(const char* what) {
    std::uint64_t v = 0;
    raw(&v, sizeof v, what);
    return v;
  }
  std::string str(const char* what) {
    const std::uint64_t n = u64(what);
    if (n > 4096) throwBadInput(path + ": implausible length " + std::to_string(n) + " of " + what);
    std::string s(n, '\0');
    raw(s.data(), n, what);
    return s;
  }
};
}  // namespace

std::string unsavableWeights(const Network& net, const std::vector<std::vector<float>>& weights,
                             const std::vector<std::vector<float>>& running_stats) {
  const auto costs = computeLayerCosts(net);
  std::size_t wi = 0, ri = 0;
  for (int i = 0; i < net.size(); ++i) {
    if (costs[i].params > 0 && wi < weights.size()) {
      if (std::string why = badTensorValues(weights[wi++]); !why.empty())
        return "'" + net.layer(i).name + ".weights' " + why;
    }
    if (costs[i].running_stats > 0 && ri < running_stats.size()) {
      // Batch norm's running statistics are C means, then C variances, as loadWeights reads them.
      const std::vector<float>& v = running_stats[ri++];
      if (std::string why = badTensorValues(v, v.size() / 2); !why.empty())
        return "'" + net.layer(i).name + ".running_stats' " + why;
    }
  }
  return "";
}

void saveWeights(const std::string& path, const Network& net,
                 const std::vector<std::vector<float>>& weights,
                 const std::vector<std::vector<float>>& running_stats,
                 const files::OutputRules& rules) {
  files::checkOutputPath(path, "the weight file", rules);
  // A file that --load-weights would refuse is not written, and an earlier one is kept.
  if (const std::string why = unsavableWeights(net, weights, running_stats); !why.empty()) {
    throw Error(ErrorKind::Runtime, "the weight file '" + path + "' is not written: " + why +
                                        "; '" + path + "' is left as it was");
  }
  files::AtomicFile out(path, "the weight file", rules.force);
  out.write(kWeightMagic, sizeof kWeightMagic);
  Writer w{out};
  w.str(net.structureHash());
  std::size_t wi = 0, ri = 0;
  const auto costs = computeLayerCosts(net);
  std::uint64_t count = 0;
  for (int i = 0; i < net.size(); ++i)
    count += (costs[i].params > 0 ? 1u : 0u) + (costs[i].running_stats > 0 ? 1u : 0u);
  w.u64(count);
  for (int i = 0; i < net.size(); ++i) {
    if (costs[i].params > 0) {
      w.str(net.layer(i).name + ".weights");
      w.floats(weights.at(wi++));
    }
    if (costs[i].running_stats > 0) {
      w.str(net.layer(i).name + ".running_stats");
      w.floats(running_stats.at(ri++));
    }
  }
  out.commit();
}

WeightFile loadWeights(const std::string& path, const Network& net) {
  files::checkInputFile(path, "the weight file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throwBadInput("cannot open the weight file '" + path + "'");
  Reader r{in, path};
  char magic[8] = {};
  in.read(magic, sizeof magic);
  if (!in || std::memcmp(magic, kWeightMagic, sizeof magic) != 0) {
    throwBadInput(path + ": not a Swapscope weight file (bad magic)");
  }
  const std::string hash = r.str("the structure hash");
  if (hash != net.structureHash()) {
    throwBadInput(path + ": the weights are for a network of structure " + hash + ", not '" +
                  net.name() + "' (" + net.structureHash() + ")");
  }
  const auto costs = computeLayerCosts(net);
  const std::uint64_t count = r.u64("the tensor count");
  WeightFile f;
  std::uint64_t seen = 0;
  for (int i = 0; i < net.size(); ++i) {
    for (int part = 0; part < 2; ++part) {
      const std::int64_t n = part == 0 ? costs[i].params : costs[i].running_stats;
      if (n == 0) continue;
      const std::string want = net.layer(i).name + (part == 0 ? ".weights" : ".running_stats");
      if (seen++ >= count) throwBadInput(path + ": no tensor for '" + want + "'");
      const std::string name = r.str("a tensor name");
      if (name != want) {
        throwBadInput(path + ": found " + quoteBounded(name) + " where '" + want + "' belongs");
      }
      const std::uint64_t size = r.u64("a tensor size");
      if (size != static_cast<std::uint64_t>(n)) {
        throwBadInput(path + ": '" + name + "' has " + std::to_string(size) + " values, not " +
                      std::to_string(n));
      }
      std::vector<float> v(size);
      r.raw(v.data(), size * sizeof(float), want.c_str());
      // Batch norm's running statistics are C means, then C variances.
      if (const std::string why = badTensorValues(v, part == 0 ? v.size() : v.size() / 2);
          !why.empty()) {
        throwBadInput(path + ": '" + name + "' " + why);
      }
      (part == 0 ? f.weights : f.running_stats).push_back(std::move(v));
    }
  }
  if (seen != count) throwBadInput(path + ": " + std::to_string(count - seen) + " extra tensors");
  // Bytes after the last tensor: a file cut from a longer one or appended to, not this network's.
  if (in.peek() != std::char_traits<char>::eof()) {
    const std::streamoff at = in.tellg();
    in.seekg(0, std::ios::end);
    throwBadInput(path + ": " + std::to_string(static_cast<std::streamoff>(in.tellg()) - at) +
                  " bytes after the last tensor (at byte " + std::to_string(at) + ")");
  }
  return f;
}

}  // namespace swapscope::rt
