// SPDX-License-Identifier: MIT
// The multi-tensor SGD update's host side, on the CPU: the chunk table the CUDA kernel reads
// covers every element of every tensor once, in order, and applied as the kernel applies it
// gives the CPU backend's per-tensor update to the bit; the executor's one update task trains
// to the same weights as its per-layer tasks.
#include "runtime/multi_tensor_sgd.h"

#include <gtest/gtest.h>

#include <map>
#include <numeric>

#include "analysis/network_analysis.h"
#include "common/error.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/dataset.h"
#include "runtime/executor.h"
#include "runtime/test_networks.h"

namespace swapscope::rt {
namespace {

/// Tensors of the given sizes with distinct values, in one vector each for w, g and v.
struct Tensors {
  std::vector<std::vector<float>> w, g, v;
  std::vector<SgdArgs> args(float lr, float mu, float wd) {
    std::vector<SgdArgs> out;
    for (std::size_t t = 0; t < w.size(); ++t) {
      out.push_back({w[t].data(), g[t].data(), v[t].data(), static_cast<std::int64_t>(w[t].size()),
                     lr, mu, wd});
    }
    return out;
  }
};
Tensors makeTensors(const std::vector<std::size_t>& sizes) {
  Tensors t;
  float x = 0.125f;
  for (const std::size_t n : sizes) {
    t.w.emplace_back(n);
    t.g.emplace_back(n);
    t.v.emplace_back(n);
    for (std::size_t i = 0; i < n; ++i) {
      t.w.back()[i] = x;
      t.g.back()[i] = 0.5f - x;
      t.v.back()[i] = x * 0.25f;
      x = x * 1.37f - static_cast<float>(static_cast<int>(x * 1.37f));  // stays in [0, 1)
    }
  }
  return t;
}

TEST(MultiTensorSgd, ChunksCoverEveryElementOnceInOrderWithinTheChunkSize) {
  Tensors t = makeTensors({5, 0, 1, 8, 11});
  const std::vector<SgdArgs> args = t.args(0.1f, 0.9f, 5e-4f);
  const std::vector<SgdChunk> chunks = packSgdChunks(args, 4);
  // 5 -> 4 + 1; 0 -> none; 1 -> 1; 8 -> 4 + 4; 11 -> 4 + 4 + 3.
  std::vector<std::int64_t> counts;
  for (const SgdChunk& c : chunks)
    counts.push_back(c.count);
  EXPECT_EQ(counts, (std::vector<std::int64_t>{4, 1, 1, 4, 4, 4, 4, 3}));
  // Every element of every tensor exactly once, the three pointers at the same element.
  std::map<const float*, int> seen;
  for (const SgdChunk& c : chunks) {
    for (std::int64_t i = 0; i < c.count; ++i) {
      ++seen[c.weights + i];
      const float* w = c.weights + i;
      for (std::size_t k = 0; k < t.w.size(); ++k) {
        if (w >= t.w[k].data() && w < t.w[k].data() + t.w[k].size()) {
          const auto at = w - t.w[k].data();
          EXPECT_EQ(c.grad + i, t.g[k].data() + at);
          EXPECT_EQ(c.momentum + i, t.v[k].data() + at);
        }
      }
    }
  }
  EXPECT_EQ(seen.size(), 25u);
  for (const auto& [p, n] : seen)
    EXPECT_EQ(n, 1);
  for (std::size_t k = 0; k < t.w.size(); ++k) {
    for (const float& w : t.w[k])
      EXPECT_EQ(seen.count(&w), 1u) << "tensor " << k;
  }
  EXPECT_TRUE(packSgdChunks({}, 4).empty());
}

TEST(MultiTensorSgd, TheKernelsTableGivesTheCpuBackendsUpdateToTheBit) {
  const std::vector<std::size_t> sizes{3, 70000, 1, 65536, 200};  // across 64 Ki chunks
  Tensors viaChunks = makeTensors(sizes), perTensor = makeTensors(sizes);
  const float lr = 0.05f, mu = 0.9f, wd = 5e-4f;
  auto cpu = createCpuDevice();
  for (int step = 0; step < 3; ++step) {  // the momentum carries over between steps
    sgdChunksOnHost(packSgdChunks(viaChunks.args(lr, mu, wd)), lr, mu, wd);
    for (const SgdArgs& a : perTensor.args(lr, mu, wd))
      cpu->sgdStep(a);
  }
  EXPECT_EQ(viaChunks.w, perTensor.w);
  EXPECT_EQ(viaChunks.v, perTensor.v);
  EXPECT_NE(viaChunks.w, makeTensors(sizes).w);  // it did update
}

TEST(MultiTensorSgd, TensorsWithDifferentHyperparametersAreRefused) {
  Tensors t = makeTensors({4, 4});
  std::vector<SgdArgs> args = t.args(0.1f, 0.9f, 0.0f);
  args[1].lr = 0.2f;
  try {
    packSgdChunks(args);
    FAIL() << "packed tensors of two learning rates";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    EXPECT_NE(std::string(e.what()).find("tensor 1 has lr 0.2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(packSgdChunks(t.args(0.1f, 0.9f, 0.0f), 0), Error);
}

/// Trains 3 iterations of `net` at k on the CPU backend; the weights and the last timeline.
struct Trained {
  std::vector<std::vector<float>> weights;
  IterationRecord last;
  int layersWithWeights = 0;
};
Trained train3(const Network& net, bool multiTensor) {
  const std::int64_t k = 4;
  auto device = createCpuDevice();
  ExecutorOptions o;
  o.multi_tensor_update = multiTensor;
  const auto costs = computeLayerCosts(net);
  SwapExecutor ex(*device, net, k, makeSwapSet(Policy::SwapAll, net, costs), 256 << 20, o);
  const Dataset data = syntheticDataset(net.sampleShape(), net.classes(), 3 * k, 5);
  Trained t;
  for (int it = 0; it < 3; ++it) {
    t.last = ex.trainIteration(data.images.data() + it * k * net.sampleShape().numel(),
                               data.labels.data() + it * k, static_cast<std::uint64_t>(it),
                               {0.05f, 0.9f, 5e-4f});
  }
  t.weights = ex.readWeights();
  for (const LayerCost& c : costs)
    t.layersWithWeights += c.params > 0 ? 1 : 0;
  return t;
}

TEST(MultiTensorSgd, TheExecutorsOneUpdateTaskTrainsAsItsPerLayerTasks) {
  const Network net = everyKind();
  const Trained perLayer = train3(net, false), oneTask = train3(net, true);
  EXPECT_EQ(oneTask.weights, perLayer.weights);
  auto updates = [](const IterationRecord& rec) {
    std::vector<int> buffers;  // of the update tasks after the last backward step
    for (const TimelineOp& op : rec.ops) {
      if (op.kind == TaskKind::Update && op.step > 0) buffers.push_back(op.buffer);
    }
    return buffers;
  };
  ASSERT_GT(perLayer.layersWithWeights, 1);
  EXPECT_EQ(updates(perLayer.last).size(), static_cast<std::size_t>(perLayer.layersWithWeights));
  EXPECT_EQ(updates(oneTask.last), std::vector<int>{-1});  // one task, of no buffer
}

}  // namespace
}  // namespace swapscope::rt
