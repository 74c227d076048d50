// SPDX-License-Identifier: MIT
// The ito policy (Ito et al. §4.4): stage 1 keeps or swaps as accudnn does, stage 2 recomputes
// swapped FMs whose re-make costs less than their copies. Its plans fit the budget with the
// analyzer's peak for their (swap, recompute) sets, are never predicted slower than swap-all or
// accudnn at the same k, recompute where the link is slow, and run on the CPU backend with the
// predicted pool high-water mark and keep-all's weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "analysis/network_analysis.h"
#include "graph/builder.h"
#include "graph/zoo.h"
#include "perfmodel/hand_made_run.h"
#include "perfmodel/planner.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/dataset.h"
#include "runtime/executor.h"
#include "runtime/test_networks.h"
#include "runtime/trainer.h"
#include "sample_runs.h"
#include "store/run_db.h"

namespace swapscope::perf {
namespace {

store::RunData loadSample(const std::string& name) {
  return store::RunReader(swapscope::testing::sampleRun(name)).load();
}

/// The run with every transfer `factor` times slower: the fitted link is that much slower.
store::RunData slowLink(store::RunData run, std::int64_t factor) {
  for (store::TransferRow& t : run.transfers) {
    t.end_ns = t.start_ns + (t.end_ns - t.start_ns) * factor;
    t.overlap_ns *= factor;
  }
  return run;
}

/// The resnet56 sample with a link 300 times slower than profiled: copies of ReLU and batch-norm
/// outputs cost far more than running those layers again.
PerfModel slowLinkModel() {
  return PerfModel::fit(slowLink(loadSample("resnet56-32x32-cpu-profile.swapdb"), 300));
}

/// ito on resnet56 at k = 16 in 64 MiB, little beyond swap-all's peak: on the slow link stage 2
/// recomputes there.
PlanRequest slowLinkItoRequest() {
  PlanRequest req;
  req.policy = Policy::Ito;
  req.budget = 64 << 20;
  req.batch = 16;
  return req;
}

int count(const std::vector<bool>& v) {
  int n = 0;
  for (const bool b : v)
    n += b;
  return n;
}

/// The analyzer's peak at k for a plan's sets.
std::int64_t analyzerPeak(const Network& net, const Evaluation& e) {
  const auto costs = computeLayerCosts(net);
  const RecomputeSet none(static_cast<std::size_t>(net.size()), false);
  return computeMemoryCurve(
             buildGmap(net, costs, e.swapped, e.recomputed.empty() ? none : e.recomputed))
      .peak(e.k);
}

/// (i) fits, with the analyzer's peak to the byte, and the plan's GMAP is that of its sets;
/// (ii) never slower than swap-all, nor than accudnn (its stage 1), at its k.
void checkItoPlan(const Planner& planner, const Network& net, const PlanRequest& req,
                  const PlanResult& r) {
  ASSERT_TRUE(r.trainable) << r.reason;
  const Evaluation& e = r.best;
  EXPECT_LE(e.peak, req.budget);
  EXPECT_EQ(e.peak, analyzerPeak(net, e));
  EXPECT_EQ(r.curve.peak(e.k), e.peak);
  EXPECT_EQ(r.gmap.swapped, e.swapped);
  for (int i = 0; i < net.size(); ++i) {
    const bool remade = !e.recomputed.empty() && e.recomputed[static_cast<std::size_t>(i)];
    EXPECT_EQ(static_cast<bool>(r.gmap.recomputed[static_cast<std::size_t>(i)]), remade);
    EXPECT_FALSE(remade && e.swapped[static_cast<std::size_t>(i)]) << net.layer(i).name;
    if (remade) {
      EXPECT_TRUE(isLightLayer(net.layer(i).kind)) << net.layer(i).name;
    }
  }
  const auto swapAll = planner.evaluate(e.k, makeSwapSet(Policy::SwapAll, net, planner.costs()),
                                        req.budget, req.reuse_delay);
  ASSERT_TRUE(swapAll);
  EXPECT_LE(e.sim.t_iter, swapAll->sim.t_iter * (1 + 1e-9)) << "k = " << e.k;
  PlanRequest acc = req;
  acc.policy = Policy::AccUdnn;
  acc.batch = e.k;
  const PlanResult a = planner.plan(acc);
  ASSERT_TRUE(a.trainable) << a.reason;
  EXPECT_LE(e.sim.t_iter, a.best.sim.t_iter * (1 + 1e-9)) << "k = " << e.k;
}

TEST(Ito, FitsWithTheAnalyzersPeakAndIsNeverSlowerOnResNet56) {
  const store::RunData run = loadSample("resnet56-32x32-cpu-profile.swapdb");
  const Network net = buildZooModel("resnet56", {});
  for (const std::int64_t factor : {1, 300}) {
    const PerfModel model = PerfModel::fit(factor == 1 ? run : slowLink(run, factor));
    const Planner planner(model, net);
    for (const std::int64_t mib : {40, 64, 256}) {
      PlanRequest req;
      req.policy = Policy::Ito;
      req.budget = mib << 20;
      req.max_batch = 64;
      const PlanResult r = planner.plan(req);
      SCOPED_TRACE("link x" + std::to_string(factor) + ", " + std::to_string(mib) + " MiB");
      checkItoPlan(planner, net, req, r);
      req.max_batch = 0;
      req.batch = 16;
      checkItoPlan(planner, net, req, planner.plan(req));
    }
  }
}

TEST(Ito, FitsWithTheAnalyzersPeakAndIsNeverSlowerOnTheLayerKindNetwork) {
  const Network net = rt::everyKind();
  const store::RunData run = loadSample("fmnist-cnn-cpu-profile.swapdb");
  for (const std::int64_t factor : {1, 300}) {
    const PerfModel model = PerfModel::fit(factor == 1 ? run : slowLink(run, factor));
    const Planner planner(model, net);
    const auto& costs = planner.costs();
    const std::int64_t k = 5;
    const std::int64_t swapPeak =
        computeMemoryCurve(buildGmap(net, costs, makeSwapSet(Policy::SwapAll, net, costs))).peak(k);
    const std::int64_t keepPeak =
        computeMemoryCurve(buildGmap(net, costs, makeSwapSet(Policy::KeepAll, net, costs))).peak(k);
    for (const std::int64_t budget : {swapPeak, (swapPeak + keepPeak) / 2, keepPeak}) {
      PlanRequest req;
      req.policy = Policy::Ito;
      req.budget = budget;
      req.batch = k;
      SCOPED_TRACE("link x" + std::to_string(factor) + ", budget " + std::to_string(budget));
      checkItoPlan(planner, net, req, planner.plan(req));
    }
  }
}

TEST(Ito, RecomputesWhereTheLinkIsSlowAndIsThenFasterThanAccudnn) {
  // A link 300 times slower than the profiled one: copies of ReLU and batch-norm outputs cost far
  // more than running those layers again, and at a budget that holds little beyond swap-all's
  // peak accudnn cannot keep them all. ito re-makes some, and is predicted faster.
  const Network net = buildZooModel("resnet56", {});
  const PerfModel model = slowLinkModel();  // the planner keeps a reference to it
  const Planner planner(model, net);
  PlanRequest req = slowLinkItoRequest();
  const PlanResult ito = planner.plan(req);
  checkItoPlan(planner, net, req, ito);
  ASSERT_FALSE(ito.best.recomputed.empty());
  EXPECT_GT(count(ito.best.recomputed), 0);
  req.policy = Policy::AccUdnn;
  const PlanResult acc = planner.plan(req);
  ASSERT_TRUE(acc.trainable);
  EXPECT_LT(ito.best.sim.t_iter, acc.best.sim.t_iter);
  EXPECT_LT(ito.best.bytesMoved(), acc.best.bytesMoved());
  // On the profiled link the same search recomputes nothing it would have to pay for: the plan
  // is never slower than accudnn's (checked above), whatever it re-makes.
}

TEST(Ito, PlanningAgainFindsEveryGmapPreparedAndGivesTheSamePlan) {
  // On the slow link stage 2 tries recompute sets; planning the same request again on the same
  // planner (as the app does on every drag of the budget) finds each one prepared, and the plan
  // is the same to the bit.
  const Network net = buildZooModel("resnet56", {});
  const PerfModel model = slowLinkModel();
  const Planner planner(model, net);
  const PlanRequest req = slowLinkItoRequest();
  const PlanResult first = planner.plan(req);
  ASSERT_TRUE(first.trainable) << first.reason;
  ASSERT_GT(count(first.best.recomputed), 0) << "stage 2 must recompute for the test to mean much";
  const std::uint64_t built = planner.gmapsBuilt();
  ASSERT_GT(built, 0u);
  const PlanResult again = planner.plan(req);
  EXPECT_EQ(planner.gmapsBuilt(), built);
  ASSERT_TRUE(again.trainable);
  EXPECT_EQ(again.best.k, first.best.k);
  EXPECT_EQ(again.best.swapped, first.best.swapped);
  EXPECT_EQ(again.best.recomputed, first.best.recomputed);
  EXPECT_EQ(again.best.peak, first.best.peak);
  EXPECT_EQ(again.best.sim.t_iter, first.best.sim.t_iter);
  EXPECT_EQ(again.evaluated, first.evaluated);
  EXPECT_EQ(again.gmap.ops.size(), first.gmap.ops.size());
  EXPECT_EQ(again.curve.peak(again.best.k), first.curve.peak(first.best.k));
}

/// A run database made by hand: per layer, forward and backward nanoseconds per sample, 1 us per
/// SGD update of a layer with weights whatever k, and a link that moves 1 byte per nanosecond
/// each way without latency; no hand-off or contention recorded (both 0). The fitted per-layer
/// curves and the link are exact lines.
store::RunData plantedRun(const Network& net,
                          const std::map<std::string, std::pair<double, double>>& ns) {
  const std::vector<LayerCost> costs = computeLayerCosts(net);
  store::RunData run = testing::handMadeRun(net, "planted.swapdb");
  for (const std::int64_t k : {1, 2, 4, 8}) {
    run.iterations.push_back({k, 0, 0, 1, 0, 0, 0, 0, 0});
    for (int i = 0; i < net.size(); ++i) {
      if (i == net.inputLayer()) continue;
      const auto [fwd, bwd] = ns.at(net.layer(i).name);
      auto at = [&](double perSample) {
        return static_cast<std::int64_t>(std::llround(perSample * static_cast<double>(k)));
      };
      run.samples.push_back({k, 0, 0, i, store::Direction::Forward, 0, 0, at(fwd), 0});
      run.samples.push_back({k, 0, 0, i, store::Direction::Backward, 0, 0, at(bwd), 0});
      if (costs[static_cast<std::size_t>(i)].params > 0)
        run.samples.push_back({k, 0, 0, i, store::Direction::Update, 0, 0, 1000, 0});
    }
    testing::addCopies(run, k, 1000.0 * static_cast<double>(k), 1e9);
  }
  return run;
}

std::vector<std::string> namesOf(const Network& net, const std::vector<bool>& set) {
  std::vector<std::string> out;
  for (int i = 0; i < net.size(); ++i) {
    if (!set.empty() && set[static_cast<std::size_t>(i)]) out.push_back(net.layer(i).name);
  }
  return out;
}

TEST(Ito, KeepsSwapsAndRecomputesAsWorkedByHand) {
  // Ito et al. §4.4 on a network small enough to follow by hand (Figs. 10-13):
  //   data 1x8x8 -> conv1 (4 channels, 3x3) -> pool1 (max 3x3, stride 1) -> relu1 -> conv2
  //   (4 channels, 3x3) -> relu2 -> flat -> fc (2) -> loss,
  // steps 1-8 forward, 9-16 backward (loss, fc, flat, relu2, conv2, relu1, pool1, conv1). At
  // k = 4 every FM from conv1 to flat is 4096 bytes, the minibatch 1024 and the labels 16. The
  // link moves 1 byte/ns, so a 4 KiB copy takes 4096 ns. Planted times at k = 4 (ns): conv1
  // 12000 forward, 8000 backward; conv2 8000 each way; relu1 40 forward, 4000 backward; every
  // other step 40; the update 1000 per layer with weights (conv1, conv2, fc).
  //
  // Memory: the budget, 27000 bytes, holds keep-all's plan less two of the three 4 KiB FMs that
  // live across the backward pass's busiest steps (conv1 from step 3 to 14, pool1 from 4 to 14,
  // relu1 from 5 to 12): one of them can stay, the other two must leave the device.
  //
  // Stage 1 (keep or swap) is accudnn's plan at k: it keeps pool1 (with relu2, flat, fc and the
  // minibatch) and swaps conv1 and relu1. Its timeline: the minibatch loads in 1040 ns; conv1
  // runs 1040..13040 and its offload 13040..17136; with both copies in flight only a reuse
  // delay of 1 fits, so conv2's forward (step 4) waits for conv1's memory until 17136 (4016 ns);
  // relu1's prefetch opens only when step 12 ends and stalls step 13 by 4096 ns, conv1's stalls
  // step 15 by 4096 ns. Stall 1040 + 4016 + 4096 + 4096 = 13248 ns, t_iter 56688 ns.
  //
  // Stage 2 (swap or recompute), r = recompute overhead / swap overhead (their eq. 1):
  // - relu1 (light): its re-make runs relu1 forward, 40 ns, against 4096 + 4096 ns of copies:
  //   r = 40 / 8192 < 1. Its input pool1 is kept, so no source moves and the peak is the swap's
  //   (25864 bytes): it becomes recomputed, at conv2's backward step (13), its first reader.
  // - conv1 stays swapped: its producer is heavy (a convolution, which only a light layer's
  //   re-make may run; by r, 12000 / 8192 > 1 too). Its offload hides behind conv2's forward;
  //   its prefetch has no memory to open earlier than step 15 at the plan's peak.
  // - pool1 stays kept: stage 2 only turns swaps into recomputes.
  //
  // ito's timeline by hand: load 1040 (step 1's stall); conv1 1040..13040, offload 13040..17136
  // hidden behind conv2 (step 4, 13120..21120), and with relu1 no longer offloaded the delay of
  // 4 fits, so nothing waits for conv1's memory; steps 5-12 take 8 x 40 = 320 (to 21440); step
  // 13 is conv2's backward and relu1 again, 8000 + 40 (to 29480); step 14 relu1 backward 4000
  // (to 33480); conv1's prefetch 33480..37576 stalls step 15 by 4096, then pool1 40 (37616);
  // conv1's backward 8000 (45616); the update 3000. t_iter = 48616 ns, stall = 1040 + 4096 =
  // 5136 ns: stage 1's less relu1's prefetch stall (4096) and conv2's wait for memory (4016),
  // plus relu1's 40 ns again.
  NetworkBuilder b("ito-by-hand");
  const auto x = b.input("data", Shape{{1, 8, 8}});
  const auto c1 = b.conv("conv1", x, 4, 3, 1, 1);
  const auto p1 = b.maxPool("pool1", c1, 3, 1, 1);
  const auto r1 = b.relu("relu1", p1);
  const auto c2 = b.conv("conv2", r1, 4, 3, 1, 1);
  const auto r2 = b.relu("relu2", c2);
  const auto f = b.flatten("flat", r2);
  b.loss("loss", b.linear("fc", f, 2));
  const Network net = std::move(b).build();
  const std::map<std::string, std::pair<double, double>> ns{
      {"conv1", {3000, 2000}}, {"pool1", {10, 10}}, {"relu1", {10, 1000}}, {"conv2", {2000, 2000}},
      {"relu2", {10, 10}},     {"flat", {10, 10}},  {"fc", {10, 10}},      {"loss", {10, 10}}};
  const PerfModel model = PerfModel::fit(plantedRun(net, ns));
  const Planner planner(model, net);
  const auto& costs = planner.costs();
  const std::int64_t k = 4;
  ASSERT_EQ(
      computeMemoryCurve(buildGmap(net, costs, makeSwapSet(Policy::KeepAll, net, costs))).peak(k),
      34056);
  constexpr double kNs = 1e-9;
  PlanRequest req;
  req.policy = Policy::AccUdnn;
  req.budget = 27000;
  req.batch = k;
  const PlanResult stage1 = planner.plan(req);
  ASSERT_TRUE(stage1.trainable) << stage1.reason;
  EXPECT_EQ(namesOf(net, stage1.best.swapped), (std::vector<std::string>{"conv1", "relu1"}));
  EXPECT_NEAR(stage1.best.sim.stall, 13248 * kNs, 1e-12);
  EXPECT_NEAR(stage1.best.sim.t_iter, 56688 * kNs, 1e-12);
  // relu1 cannot stay beside pool1: its 4096 bytes do not fit between its release and its reader.
  SwapSet relu1Kept = stage1.best.swapped;
  relu1Kept[static_cast<std::size_t>(net.indexOf("relu1"))] = false;
  EXPECT_FALSE(planner.evaluate(k, relu1Kept, req.budget));

  req.policy = Policy::Ito;
  const PlanResult ito = planner.plan(req);
  ASSERT_TRUE(ito.trainable) << ito.reason;
  EXPECT_EQ(namesOf(net, ito.best.swapped), (std::vector<std::string>{"conv1"}));
  EXPECT_EQ(namesOf(net, ito.best.recomputed), (std::vector<std::string>{"relu1"}));
  EXPECT_EQ(ito.best.peak, 25864);
  EXPECT_EQ(ito.best.peak, stage1.best.peak);
  EXPECT_NEAR(ito.best.sim.stall, 5136 * kNs, 1e-12);
  EXPECT_NEAR(ito.best.sim.t_iter, 48616 * kNs, 1e-12);
  EXPECT_NEAR(ito.best.sim.steps[1].stall, 1040 * kNs, 1e-12);
  EXPECT_NEAR(ito.best.sim.steps[13].finish, 29480 * kNs, 1e-12);
  EXPECT_NEAR(ito.best.sim.steps[15].stall, 4096 * kNs, 1e-12);
  EXPECT_EQ(ito.best.sim.stalled_steps(), (std::vector<int>{1, 15}));
  // Bytes moved: conv1's offload and prefetch only.
  EXPECT_EQ(ito.best.bytesMoved(), 2 * 4096);
}

TEST(Ito, HasNoPaperMode) {
  const Network net = buildZooModel("resnet56", {});
  const PerfModel model = PerfModel::fit(loadSample("resnet56-32x32-cpu-profile.swapdb"));
  PlanRequest req;
  req.policy = Policy::Ito;
  req.mode = PlanMode::Paper;
  req.budget = 64 << 20;
  try {
    (void)plan(model, net, req);
    FAIL() << "paper mode planned ito";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("--policy ito has no paper mode"), std::string::npos)
        << e.what();
  }
}

TEST(Ito, EverySearchedPolicyOfTheTablePlansAndOnlyThoseThatRecomputeLackPaperMode) {
  // Each searched row of the policy table has its search: it plans in argmin mode, re-makes FMs
  // only where the row allows recompute, and paper mode (Algorithm 1 has no recompute step)
  // plans it exactly where it does not recompute.
  const Network net = buildZooModel("fmnist-cnn", {});
  const PerfModel model = PerfModel::fit(loadSample("fmnist-cnn-cpu-profile.swapdb"));
  const Planner planner(model, net);
  int searched = 0;
  for (const PolicyInfo& info : policyTable()) {
    if (info.fixed()) continue;
    ++searched;
    PlanRequest req;
    req.policy = info.id;
    req.budget = 32 << 20;
    const PlanResult r = planner.plan(req);
    ASSERT_TRUE(r.trainable) << info.name << ": " << r.reason;
    const bool remakes = std::find(r.best.recomputed.begin(), r.best.recomputed.end(), true) !=
                         r.best.recomputed.end();
    EXPECT_TRUE(!remakes || info.uses(kFmRecompute)) << info.name;
    req.mode = PlanMode::Paper;
    if (info.uses(kFmRecompute)) {
      EXPECT_THROW((void)planner.plan(req), Error) << info.name;
      req.batch = r.best.k;  // a fixed k has no Algorithm 2 to refuse
      EXPECT_TRUE(planner.plan(req).trainable) << info.name;
    } else {
      EXPECT_NO_THROW((void)planner.plan(req)) << info.name;
    }
  }
  EXPECT_EQ(searched, 2);
}

/// Trains `net` `iterations` times at k with a swap and recompute set.
std::vector<std::vector<float>> trainWeights(const Network& net, std::int64_t k,
                                             const SwapSet& swapped, const RecomputeSet& remade,
                                             std::int64_t budget, int iterations,
                                             std::int64_t* highWater = nullptr) {
  auto device = rt::createCpuDevice();
  rt::ExecutorOptions options;
  options.seed = 11;
  options.recompute = remade;
  rt::SwapExecutor ex(*device, net, k, swapped, budget, options);
  const rt::Dataset data = rt::syntheticDataset(net.sampleShape(), net.classes(), 4 * k, 5);
  rt::TrainConfig cfg;
  cfg.iterations = iterations;
  cfg.sgd.lr = 0.05f;
  rt::train(ex, data, cfg);
  if (highWater) *highWater = ex.poolStats().high_water;
  return ex.readWeights();
}

TEST(Ito, ItsPlanRunsWithThePredictedHighWaterAndKeepAllsWeights) {
  // ResNet-20 with the ResNet-56 run's per-type curves and a link 300 times slower: ito re-makes
  // some ReLU outputs. The executor runs its sets at its budget.
  const Network net = buildZooModel("resnet20", {});
  const PerfModel model = slowLinkModel();  // the planner keeps a reference to it
  const Planner planner(model, net);
  const auto& costs = planner.costs();
  const std::int64_t k = 4;
  const std::int64_t keepPeak =
      computeMemoryCurve(buildGmap(net, costs, makeSwapSet(Policy::KeepAll, net, costs))).peak(k);
  const std::int64_t swapPeak =
      computeMemoryCurve(buildGmap(net, costs, makeSwapSet(Policy::SwapAll, net, costs))).peak(k);
  PlanRequest req;
  req.policy = Policy::Ito;
  req.budget = swapPeak + (keepPeak - swapPeak) / 4;
  req.batch = k;
  const PlanResult r = planner.plan(req);
  ASSERT_TRUE(r.trainable) << r.reason;
  ASSERT_GT(count(r.best.recomputed), 0) << "the plan must recompute for the run to test it";
  std::int64_t highWater = 0;
  const auto ito =
      trainWeights(net, k, r.best.swapped, r.best.recomputed, req.budget, 4, &highWater);
  EXPECT_EQ(highWater, r.best.peak);
  const auto keep =
      trainWeights(net, k, makeSwapSet(Policy::KeepAll, net, costs), {}, keepPeak + (1 << 20), 4);
  const auto before =
      trainWeights(net, k, makeSwapSet(Policy::KeepAll, net, costs), {}, keepPeak + (1 << 20), 1);
  ASSERT_EQ(keep.size(), ito.size());
  bool changed = false;
  for (std::size_t i = 0; i < keep.size(); ++i) {
    ASSERT_EQ(keep[i].size(), ito[i].size());
    EXPECT_EQ(0, std::memcmp(keep[i].data(), ito[i].data(), keep[i].size() * sizeof(float)))
        << "tensor " << i << " differs between keep-all and ito";
    changed = changed || keep[i] != before[i];
  }
  EXPECT_TRUE(changed) << "training must move the weights for the comparison to mean anything";
}

}  // namespace
}  // namespace swapscope::perf
