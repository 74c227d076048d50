// SPDX-License-Identifier: MIT
// A cancel inside an iteration: between the passes of a sub-batched minibatch and between the
// steps of one pass, the iteration stops and leaves the weights as they were; once its update
// has begun it runs to its end.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>

#include "analysis/network_analysis.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/dataset.h"
#include "runtime/executor.h"
#include "runtime/test_networks.h"

namespace swapscope::rt {
namespace {

/// Sets the flag when `when` holds for a task beginning (or ending) on the compute stream.
class CancelWhen : public TaskObserver {
 public:
  CancelWhen(std::atomic<bool>& flag, std::function<bool(const TaskTag&)> when, bool atEnd = false)
      : m_flag(flag), m_when(std::move(when)), m_atEnd(atEnd) {}
  void taskBegin(StreamKind s, const TaskTag& tag) override {
    if (!m_atEnd) check(s, tag);
  }
  void taskEnd(StreamKind s, const TaskTag& tag) override {
    if (m_atEnd) check(s, tag);
  }

 private:
  void check(StreamKind s, const TaskTag& tag) {
    if (s == StreamKind::Compute && m_when(tag)) m_flag.store(true);
  }
  std::atomic<bool>& m_flag;
  std::function<bool(const TaskTag&)> m_when;
  bool m_atEnd;
};

struct SmallRun {
  std::unique_ptr<Device> device = createCpuDevice();
  Network net = everyKind();
  std::unique_ptr<SwapExecutor> ex;
  Dataset data;
  SmallRun(std::int64_t k, std::int64_t passes) {
    const auto costs = computeLayerCosts(net);
    const SwapSet swapAll = makeSwapSet(Policy::SwapAll, net, costs);
    ExecutorOptions options;
    options.sub_batches = passes;
    options.seed = 7;
    const std::int64_t budget = planMemory(net, costs, swapAll).curve.peak(k / passes) + (1 << 20);
    ex = std::make_unique<SwapExecutor>(*device, net, k, swapAll, budget, options);
    data = syntheticDataset(net.sampleShape(), 10, k, 3);
  }
  IterationRecord iterate(const std::atomic<bool>* cancel) {
    return ex->trainIteration(data.images.data(), data.labels.data(), 0, {}, cancel);
  }
};

int largestPass(const IterationRecord& rec, TaskKind kind) {
  int last = -1;
  for (const TimelineOp& op : rec.ops) {
    if (op.kind == kind) last = std::max(last, op.sub_batch);
  }
  return last;
}

TEST(Cancel, BetweenPassesNoLaterPassStartsAndTheWeightsAreKept) {
  SmallRun r(12, 6);  // six passes of two samples
  const auto before = r.ex->readWeights();
  std::atomic<bool> cancel{false};
  CancelWhen observer(cancel, [](const TaskTag& t) { return t.sub_batch == 1; });
  r.device->setTaskObserver(&observer);
  const IterationRecord rec = r.iterate(&cancel);
  r.device->setTaskObserver(nullptr);
  EXPECT_TRUE(rec.cancelled);
  // Pass 1 had begun; the next pass at most was queued behind it, none after.
  EXPECT_LE(largestPass(rec, TaskKind::Compute), 2);
  EXPECT_EQ(largestPass(rec, TaskKind::Update), -1);
  EXPECT_EQ(r.ex->readWeights(), before);
}

TEST(Cancel, WithinAPassTheQueuedStepsSkipTheirWorkAndTheExecutorRunsOn) {
  SmallRun r(4, 1);
  const auto before = r.ex->readWeights();
  std::atomic<bool> cancel{false};
  CancelWhen observer(cancel,
                      [](const TaskTag& t) { return t.kind == TaskKind::Compute && t.step == 3; });
  r.device->setTaskObserver(&observer);
  EXPECT_TRUE(r.iterate(&cancel).cancelled);
  r.device->setTaskObserver(nullptr);
  EXPECT_EQ(r.ex->readWeights(), before);
  // The schedule's bookkeeping is whole: the next iteration runs as any.
  const IterationRecord next = r.iterate(nullptr);
  EXPECT_FALSE(next.cancelled);
  EXPECT_NE(r.ex->readWeights(), before);
  EXPECT_EQ(r.ex->poolStats().high_water, r.ex->predictedPeak());
}

TEST(Cancel, OnceTheUpdateHasBegunTheIterationRunsToItsEnd) {
  SmallRun cancelled(4, 2), whole(4, 2);
  std::atomic<bool> cancel{false};
  CancelWhen observer(
      cancel, [](const TaskTag& t) { return t.kind == TaskKind::Update; },
      /*atEnd=*/true);
  cancelled.device->setTaskObserver(&observer);
  const IterationRecord rec = cancelled.iterate(&cancel);
  cancelled.device->setTaskObserver(nullptr);
  EXPECT_TRUE(cancel.load());
  EXPECT_FALSE(rec.cancelled);
  whole.iterate(nullptr);
  EXPECT_EQ(cancelled.ex->readWeights(), whole.ex->readWeights());
}

TEST(Cancel, ACancelBeforeTheIterationRunsNothing) {
  SmallRun r(6, 3);
  const auto before = r.ex->readWeights();
  std::atomic<bool> cancel{true};
  const IterationRecord rec = r.iterate(&cancel);
  EXPECT_TRUE(rec.cancelled);
  EXPECT_EQ(largestPass(rec, TaskKind::Compute), -1);
  EXPECT_EQ(r.ex->readWeights(), before);
}

}  // namespace
}  // namespace swapscope::rt
