// SPDX-License-Identifier: MIT
#include "perfmodel/model.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>

#include "common/error.h"
#include "common/stats.h"
#include "graph/json_guard.h"

namespace swapscope::perf {

std::string_view stepKindName(StepKind k) {
  switch (k) {
    case StepKind::Forward:
      return "fwd";
    case StepKind::Backward:
      return "bwd";
    case StepKind::Update:
      return "update";
  }
  return "?";
}

double stepWork(const LayerCost& c, StepKind kind, std::int64_t k, bool& bytesAxis) {
  std::int64_t flops = 0;
  switch (kind) {
    case StepKind::Forward:
      flops = c.fwd_flops * k;
      break;
    case StepKind::Backward:
      flops = (c.bwd_data_flops + c.bwd_weight_flops) * k;
      break;
    case StepKind::Update:
      flops = c.params * kSgdFlopsPerParam;
      break;
  }
  bytesAxis = flops <= 0;
  return static_cast<double>(bytesAxis ? c.fm.at(k) : flops);
}

namespace {

StepKind kindOf(store::Direction d) {
  switch (d) {
    case store::Direction::Forward:
      return StepKind::Forward;
    case store::Direction::Backward:
      return StepKind::Backward;
    case store::Direction::Update:
      return StepKind::Update;
  }
  return StepKind::Forward;
}

std::string key(store::FitScope scope, const std::string& target, StepKind kind) {
  return std::string(store::fitScopeName(scope)) + "/" + target + "/" +
         std::string(stepKindName(kind));
}

using Interval = std::pair<std::int64_t, std::int64_t>;

/// The disjoint union of intervals, sorted.
std::vector<Interval> mergeIntervals(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

/// The copy of `copies` (disjoint, sorted) that runs at time t, if any.
const Interval* copyAt(const std::vector<Interval>& copies, std::int64_t t) {
  auto it = std::upper_bound(copies.begin(), copies.end(), t,
                             [](std::int64_t v, const Interval& c) { return v < c.first; });
  if (it == copies.begin()) return nullptr;
  --it;
  return t < it->second ? &*it : nullptr;
}

/// The first copy of `copies` (disjoint, sorted) that starts in [lo, hi), if any.
const Interval* copyStartingWithin(const std::vector<Interval>& copies, std::int64_t lo,
                                   std::int64_t hi) {
  const auto it = std::lower_bound(copies.begin(), copies.end(), lo,
                                   [](const Interval& c, std::int64_t v) { return c.first < v; });
  return it != copies.end() && it->first < hi ? &*it : nullptr;
}

/// One iteration's swaps on one stream (a direction), sorted by start: disjoint, so sorted by
/// end too.
using StreamCopies = std::vector<const store::TransferRow*>;

/// The copy due when the compute stream hands off from `prev` to `next` (at `could`) that
/// started only while `next` ran, if any: an offload `prev` issued or a prefetch `next` reads,
/// whose stream had nothing running at `could`. The simulator starts such a copy in the gap; how
/// long the hand-off waits for it is the copy-start fit's, so the copies that did not start
/// there count as much as those that did. The earlier of the two streams' where both have one.
const store::TransferRow* dueCopy(const std::array<StreamCopies, 2>& streams,
                                  const store::SampleRow& prev, const store::SampleRow& next,
                                  std::int64_t could) {
  const std::int64_t end = next.start_ns + next.time_ns;
  const store::TransferRow* due = nullptr;
  for (const StreamCopies& copies : streams) {
    auto it = std::lower_bound(
        copies.begin(), copies.end(), next.start_ns,
        [](const store::TransferRow* t, std::int64_t v) { return t->start_ns < v; });
    // Only the stream's first copy in the step can be it, and only if the copy before that one
    // had ended by `could`; a copy that started later waited for that first one.
    if (it == copies.end() || (*it)->start_ns >= end) continue;
    if (it != copies.begin() && (*std::prev(it))->end_ns > could) continue;
    const store::TransferRow& t = **it;
    const bool issuedHere =
        t.kind == store::TransferKind::Offload ? t.step == prev.step : t.step == next.step;
    if (issuedHere && (!due || t.start_ns < due->start_ns)) due = &t;
  }
  return due;
}

/// The iterations (k, iteration, direction) whose copies ran in a slow phase of the machine. A
/// copy of 64 KiB or more (where a copy's rate hardly depends on its size) is as slow as the
/// median rate of such copies in its direction and class (beside compute or not) over every
/// iteration, divided by its own rate; an iteration is as slow as the median over its copies.
/// Those above the upper Tukey fence (third quartile + 1.5 x the interquartile range) and at
/// least half again as slow as the typical copy are slow phases: on a shared machine such a
/// phase slows every copy of an iteration two- to fourfold. The measured t_iter and stall are
/// medians over iterations, which leave such an iteration out, so the copy lines do too.
std::set<std::tuple<std::int64_t, int, bool>> slowCopyPhases(const store::RunData& run) {
  constexpr std::int64_t kLarge = 64 << 10;
  auto counted = [](const store::TransferRow& t) {
    return t.kind != store::TransferKind::Readback && t.bytes >= kLarge && t.end_ns > t.start_ns;
  };
  auto classOf = [](const store::TransferRow& t) {
    return std::pair{t.to_host, 2 * t.overlap_ns >= t.end_ns - t.start_ns};
  };
  auto rateOf = [](const store::TransferRow& t) {
    return static_cast<double>(t.bytes) / static_cast<double>(t.end_ns - t.start_ns);
  };
  std::map<std::pair<bool, bool>, std::vector<double>> rates;
  for (const auto& t : run.transfers) {
    if (counted(t)) rates[classOf(t)].push_back(rateOf(t));
  }
  std::map<std::pair<bool, bool>, double> typical;
  for (auto& [id, v] : rates)
    typical[id] = median(v);
  std::map<std::tuple<std::int64_t, int, bool>, std::vector<double>> slowness;
  for (const auto& t : run.transfers) {
    if (counted(t))
      slowness[{t.k, t.iteration, t.to_host}].push_back(typical[classOf(t)] / rateOf(t));
  }
  std::set<std::tuple<std::int64_t, int, bool>> slow;
  for (const bool toHost : {false, true}) {
    std::vector<std::pair<std::tuple<std::int64_t, int, bool>, double>> per;
    std::vector<double> medians;
    for (auto& [id, v] : slowness) {
      if (std::get<2>(id) != toHost) continue;
      per.emplace_back(id, median(v));
      medians.push_back(per.back().second);
    }
    if (medians.size() < 4) continue;
    const double fence = std::max(tukeyFences(medians, 1.5).above, 1.5);
    for (const auto& [id, m] : per) {
      if (m > fence) slow.insert(id);
    }
  }
  return slow;
}

/// The mean over the steps of each step's median gap (DispatchFit).
double meanOfStepMedians(const std::map<int, std::vector<double>>& gapsByStep) {
  double sum = 0;
  for (const auto& [step, v] : gapsByStep)
    sum += median(v);
  return sum / static_cast<double>(gapsByStep.size());
}

/// The compute stream's hand-off and the contention between copies and compute, from the
/// recorded timeline (t_ready and time beside a copy per step sample, schema version 2). Each
/// gap between the moment a compute task could start (the previous task's end or its t_ready,
/// whichever is later) and its start is one of:
/// - a copy was running at that moment (it started before): start_block, the wait beyond the
///   plain hand-off against the copy's remaining time then;
/// - a copy started within the gap: copy_start_block, a line (with an intercept: the thread's
///   wake-up once the copy ends) of the wait beyond the plain hand-off against the time the
///   copy ran beyond it; a copy due in the gap that started only during the step (dueCopy) is
///   one of its pairs too, with the time it would have run beyond it, and the gap is also a
///   plain (or woken) one;
/// - else the dispatch's woken kind where the task had waited for t_ready, its plain kind where
///   not: per step the median over its samples, and the mean of those over the steps.
/// And slowdown: a step's time beyond the median of its (layer, direction, samples per pass)
/// samples without a copy beside them, against its time beside a copy.
/// The running-copy and slowdown fits leave out their outliers the same way (fitProportional);
/// the copy-start fit, a mixture of waits and none, only waits beyond its copy (fitBoundedLine).
void fitTimeline(const store::RunData& run,
                 const std::map<std::pair<std::int64_t, int>, std::int64_t>& perPass,
                 DispatchFit& dispatch, ContentionFit& contention) {
  if (run.schema_version < 2) return;
  for (const auto& s : run.samples) {
    if (s.ready_ns < 0 || s.copy_overlap_ns < 0) return;  // not recorded
  }
  std::map<std::pair<std::int64_t, int>, std::vector<Interval>> copies;
  for (const auto& t : run.transfers) {
    if (t.kind != store::TransferKind::Readback && t.end_ns > t.start_ns)
      copies[{t.k, t.iteration}].emplace_back(t.start_ns, t.end_ns);
  }
  for (auto& [id, v] : copies)
    v = mergeIntervals(std::move(v));
  // Each iteration's swaps per stream, by start: which step issued them.
  std::map<std::pair<std::int64_t, int>, std::array<StreamCopies, 2>> issued;
  for (const auto& t : run.transfers) {
    if ((t.kind == store::TransferKind::Offload || t.kind == store::TransferKind::Prefetch) &&
        t.end_ns > t.start_ns)
      issued[{t.k, t.iteration}][t.to_host ? 1 : 0].push_back(&t);
  }
  for (auto& [id, streams] : issued) {
    for (StreamCopies& v : streams)
      std::sort(v.begin(), v.end(),
                [](const auto* a, const auto* b) { return a->start_ns < b->start_ns; });
  }
  std::map<std::pair<std::int64_t, int>, std::vector<const store::SampleRow*>> byIteration;
  for (const auto& s : run.samples)
    byIteration[{s.k, s.iteration}].push_back(&s);
  struct Candidate {
    std::int64_t could = 0, start = 0, copyEnd = 0;
  };
  std::vector<Candidate> running, starting;  // a copy running at `could`; one starting after
  std::vector<double> gaps;
  std::map<int, std::vector<double>> gapsByStep, wokenByStep;
  int woken = 0;
  static const std::vector<Interval> kNone;
  static const std::array<StreamCopies, 2> kNoCopies;
  auto issuedIn = [&](const std::pair<std::int64_t, int>& id) -> const auto& {
    const auto it = issued.find(id);
    return it == issued.end() ? kNoCopies : it->second;
  };
  for (auto& [id, samples] : byIteration) {
    std::sort(samples.begin(), samples.end(), [](const auto* a, const auto* b) {
      return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->step < b->step;
    });
    const auto c = copies.find(id);
    const std::vector<Interval>& cs = c == copies.end() ? kNone : c->second;
    for (std::size_t i = 1; i < samples.size(); ++i) {
      const auto& prev = *samples[i - 1];
      const auto& s = *samples[i];
      const std::int64_t prevEnd = prev.start_ns + prev.time_ns;
      const std::int64_t ready = s.direction == store::Direction::Update ? 0 : s.ready_ns;
      const std::int64_t could = std::max(prevEnd, ready);
      if (s.start_ns < could) continue;  // overlapping records: not one stream
      const double gap = static_cast<double>(s.start_ns - could) * 1e-9;
      if (const Interval* copy = copyAt(cs, could); copy && copy->first < could) {
        running.push_back({could, s.start_ns, copy->second});
      } else if (const Interval* copy2 =
                     copyStartingWithin(cs, could, std::max(could + 1, s.start_ns))) {
        starting.push_back({could, s.start_ns, copy2->second});
      } else {
        // A copy due in the gap that started only during the step: a hand-off it might have
        // blocked and did not. Its gap is the hand-off's too.
        if (const store::TransferRow* due = dueCopy(issuedIn(id), prev, s, could))
          starting.push_back({could, s.start_ns, could + (due->end_ns - due->start_ns)});
        if (ready > prevEnd) {
          wokenByStep[s.step].push_back(gap);
          ++woken;
        } else {
          gaps.push_back(gap);
          gapsByStep[s.step].push_back(gap);
        }
      }
    }
  }
  if (!gaps.empty()) {
    dispatch.present = true;
    dispatch.seconds = meanOfStepMedians(gapsByStep);
    dispatch.median = median(gaps);
    dispatch.points = static_cast<int>(gaps.size());
    double sse = 0;
    for (const double g : gaps) {
      dispatch.residuals.push_back(g - dispatch.seconds);
      sse += (g - dispatch.seconds) * (g - dispatch.seconds);
    }
    dispatch.rmse = std::sqrt(sse / static_cast<double>(gaps.size()));
    dispatch.woken_seconds = woken > 0 ? meanOfStepMedians(wokenByStep) : dispatch.seconds;
    dispatch.woken_points = woken;
  }
  // Both blocking fits: the wait beyond the moment the task could start plus the plain
  // hand-off, against the time the copy runs beyond that moment.
  const auto d = static_cast<std::int64_t>(std::llround(dispatch.seconds * 1e9));
  auto blockFit = [&](const std::vector<Candidate>& candidates, auto&& fit) {
    std::vector<std::pair<double, double>> xy;
    for (const Candidate& c : candidates) {
      const std::int64_t nominal = c.could + d;
      if (c.copyEnd > nominal)
        xy.emplace_back(static_cast<double>(c.copyEnd - nominal) * 1e-9,
                        static_cast<double>(c.start - nominal) * 1e-9);
    }
    return fit(xy, 0.0, 1.0);
  };
  const ProportionalFit block = blockFit(running, fitProportional);
  const ProportionalFit copyStartBlock = blockFit(starting, fitBoundedLine);  // the mean wait

  std::map<std::tuple<int, store::Direction, std::int64_t>, std::vector<double>> clean;
  // Per the samples a step ran on: an iteration in S sub-batches runs each step on k/S.
  auto samplesOf = [&](const store::SampleRow& s) {
    const auto it = perPass.find({s.k, s.iteration});
    return it == perPass.end() ? s.k : it->second;
  };
  for (const auto& s : run.samples) {
    if (s.copy_overlap_ns == 0)
      clean[{s.layer, s.direction, samplesOf(s)}].push_back(static_cast<double>(s.time_ns) * 1e-9);
  }
  std::map<std::tuple<int, store::Direction, std::int64_t>, double> cleanMedian;
  for (auto& [id, v] : clean)
    cleanMedian[id] = median(v);
  std::vector<std::pair<double, double>> slowed;
  for (const auto& s : run.samples) {
    if (s.copy_overlap_ns <= 0) continue;
    const auto it = cleanMedian.find({s.layer, s.direction, samplesOf(s)});
    if (it == cleanMedian.end()) continue;
    slowed.emplace_back(static_cast<double>(s.copy_overlap_ns) * 1e-9,
                        static_cast<double>(s.time_ns) * 1e-9 - it->second);
  }
  const ProportionalFit slow = fitProportional(slowed, 0.0, kMaxSlowdown);
  contention.present = true;
  contention.start_block = block;
  contention.copy_start_block = copyStartBlock;
  contention.slowdown = slow;
}

}  // namespace

PassSamples samplesPerPass(const store::RunData& run) {
  std::map<std::pair<std::int64_t, int>, std::int64_t> out;
  for (const auto& [id, passes] : subBatchesOf(run))
    out[id] = id.first / passes;
  for (const auto& it : run.iterations)
    out.try_emplace({it.k, it.iteration}, it.k);
  return out;
}

std::map<std::pair<std::int64_t, int>, std::int64_t> subBatchesOf(const store::RunData& run) {
  std::map<std::pair<std::int64_t, int>, std::int64_t> passes;
  std::map<std::tuple<std::int64_t, int, int>, std::int64_t> perStep;
  for (const auto& s : run.samples) {
    if (s.step == 1 && s.direction == store::Direction::Forward) ++passes[{s.k, s.iteration}];
    if (s.direction != store::Direction::Update) ++perStep[{s.k, s.iteration, s.step}];
  }
  for (auto it = passes.begin(); it != passes.end();) {
    const auto& [k, iteration] = it->first;
    if (k % it->second != 0) {
      throwBadInput("'" + run.path + "': k " + std::to_string(k) + " iteration " +
                    std::to_string(iteration) + " has " + std::to_string(it->second) +
                    " samples of step 1, but a minibatch run in sub-batches has one per pass " +
                    "and " + std::to_string(it->second) +
                    " passes do not split k = " + std::to_string(k));
    }
    it = it->second > 1 ? std::next(it) : passes.erase(it);
  }
  // Every step of an iteration in sub-batches runs once per pass: a step recorded another number
  // of times is damage (rows lost or repeated), and S read from step 1 would fit it at the wrong
  // size.
  for (const auto& [id, count] : perStep) {
    const auto& [k, iteration, step] = id;
    const auto it = passes.find({k, iteration});
    if (it == passes.end() || step < 1) continue;
    const std::int64_t want = it->second;
    if (count != want) {
      throwBadInput("'" + run.path + "': k " + std::to_string(k) + " iteration " +
                    std::to_string(iteration) + " has " + std::to_string(count) +
                    " samples of step " + std::to_string(step) + " but " + std::to_string(want) +
                    " of step 1: each step is recorded once per pass");
    }
  }
  return passes;
}

namespace {

/// A power of two of bytes, up to 1 GiB, that the run recorded in meta `key` (as every pool
/// aligns and pads); `fallback` where it recorded none; anything else is damage.
std::int64_t recordedPowerOfTwo(const store::RunData& run, const std::string& key,
                                std::int64_t fallback) {
  const auto it = run.meta.extra.find(key);
  if (it == run.meta.extra.end()) return fallback;
  std::int64_t a = 0;
  const auto [end, ec] =
      std::from_chars(it->second.data(), it->second.data() + it->second.size(), a);
  if (ec != std::errc() || end != it->second.data() + it->second.size() || a < 1 ||
      a > (std::int64_t{1} << 30) || (a & (a - 1)) != 0) {
    throwBadInput("'" + run.path + "': meta '" + key + "' is '" + echoText(it->second) +
                  "', not a power of two of bytes up to 1 GiB");
  }
  return a;
}

/// How the profiled device's pool pads buffers. A CUDA run that did not record it padded as the
/// CUDA backend does (16 bytes, workspaces 256); any other backend pads nothing.
PoolPadding recordedPoolPadding(const store::RunData& run) {
  const bool cuda = run.meta.backend == "cuda";
  return {recordedPowerOfTwo(run, "pool_padding", cuda ? 16 : 1),
          recordedPowerOfTwo(run, "workspace_padding", cuda ? 256 : 1)};
}

/// The largest workspace a profile's meta may record: beyond it the value is damage.
constexpr std::int64_t kMaxWorkspaceBytes = std::int64_t{1} << 50;
constexpr std::int64_t kMaxRecordedK = std::int64_t{1} << 31;

/// The kernel workspaces the run recorded (meta 'kernel_choices_by_k', docs/run-database.md),
/// fitted per layer and direction (workspaceLine); nullptr where it recorded none. A value
/// that is not that meta's JSON, a k or bytes out of range, a k or a layer given twice, or a
/// layer the profiled network does not have is damage, refused naming the key and the value.
std::shared_ptr<const KernelWorkspaces> recordedWorkspaces(const store::RunData& run) {
  static const std::string key = "kernel_choices_by_k";
  const auto it = run.meta.extra.find(key);
  if (it == run.meta.extra.end()) return nullptr;
  const std::string where = "'" + run.path + "': meta '" + key + "'";
  const auto bad = [&](const std::string& why) { throwBadInput(where + ": " + why); };
  const nlohmann::json j = jsonTooDeepAt(it->second)
                               ? nlohmann::json(nlohmann::json::value_t::discarded)
                               : nlohmann::json::parse(it->second, nullptr, false);
  if (j.is_discarded() || !j.is_array()) {
    throwBadInput(where + " is '" + echoText(it->second) +
                  "', not a JSON array of {\"k\", \"layers\"} (docs/run-database.md)");
  }
  std::map<std::string, int> layerIds;
  for (const auto& l : run.layers)
    layerIds.emplace(l.name, l.id);
  // Per (layer, backward): the bytes at each recorded k; a layer absent at a k held none there.
  std::set<std::int64_t> ks;
  std::map<std::pair<int, bool>, std::map<std::int64_t, std::int64_t>> bytes;
  for (const auto& entry : j) {
    if (!entry.is_object() || !entry.contains("k") || !entry.contains("layers") ||
        !entry["layers"].is_array())
      bad("an entry " + echoJson(entry) + " is not {\"k\", \"layers\": [...]}");
    const auto& kj = entry["k"];
    if (!kj.is_number_integer() || kj.get<std::int64_t>() < 1 ||
        kj.get<std::int64_t>() > kMaxRecordedK)
      bad("k " + echoJson(kj) + " is not a minibatch of 1 to 2^31 samples");
    const std::int64_t k = kj.get<std::int64_t>();
    if (!ks.insert(k).second) bad("k = " + std::to_string(k) + " is recorded twice");
    const std::string atK = "at k = " + std::to_string(k) + ", ";
    std::set<std::string> seen;
    for (const auto& layer : entry["layers"]) {
      if (!layer.is_object() || !layer.contains("layer") || !layer["layer"].is_string())
        bad(atK + "a layer " + echoJson(layer) + " has no \"layer\" name");
      const std::string name = layer["layer"].get<std::string>();
      const auto id = layerIds.find(name);
      if (id == layerIds.end())
        bad(atK + "layer '" + echoText(name) + "' is not a layer of the profiled network");
      if (!seen.insert(name).second) bad(atK + "layer '" + name + "' is listed twice");
      for (const bool backward : {false, true}) {
        const char* field = backward ? "backward_workspace" : "forward_workspace";
        const auto w = layer.find(field);
        if (w == layer.end() || !w->is_number_integer() || w->get<std::int64_t>() < 0 ||
            w->get<std::int64_t>() > kMaxWorkspaceBytes) {
          bad(atK + "layer '" + name + "': " + field + " is " +
              (w == layer.end() ? std::string("missing") : echoJson(*w)) +
              ", not a number of bytes from 0 to 1 PiB");
        }
        bytes[{id->second, backward}][k] = w->get<std::int64_t>();
      }
    }
  }
  auto ws = std::make_shared<KernelWorkspaces>();
  ws->network_hash = run.network.structure_hash;
  ws->forward.resize(run.layers.size());
  ws->backward.resize(run.layers.size());
  bool any = false;
  for (const auto& [id, atK] : bytes) {
    const auto& [layer, backward] = id;
    std::vector<std::pair<std::int64_t, std::int64_t>> points;
    for (const std::int64_t k : ks) {
      const auto b = atK.find(k);
      points.emplace_back(k, b == atK.end() ? 0 : b->second);
    }
    const LinearBytes line = workspaceLine(points);
    if (static_cast<std::size_t>(layer) >= run.layers.size()) continue;
    (backward ? ws->backward : ws->forward)[static_cast<std::size_t>(layer)] = line;
    any = any || line != LinearBytes{};
  }
  return any ? ws : nullptr;
}

/// The samples each step of iteration (k, iteration) ran on: k, or k/S in S sub-batches.
std::int64_t samplesOf(const PassSamples& perPass, std::int64_t k, int iteration) {
  const auto it = perPass.find({k, iteration});
  return it == perPass.end() ? k : it->second;
}

/// Layer costs from the stored rows (the stored network may differ from any zoo model).
std::vector<LayerCost> storedCosts(const store::RunData& run) {
  std::vector<LayerCost> costs(run.layers.size());
  for (const auto& l : run.layers) {
    LayerCost& c = costs.at(static_cast<std::size_t>(l.id));
    c.params = l.params;
    c.fwd_flops = l.fwd_flops;
    c.bwd_data_flops = l.bwd_data_flops;
    c.bwd_weight_flops = l.bwd_weight_flops;
    c.fm = l.fm;
  }

  return costs;
}

}  // namespace

PerfModel PerfModel::fit(const store::RunData& run) {
  if (run.iterations.empty() || run.samples.empty()) {
    throwBadInput("'" + run.path + "' holds no recorded iterations to fit a model to");
  }
  PerfModel m;
  m.m_hash = run.network.structure_hash;
  m.m_device = run.meta.device;
  m.m_poolAlignment = recordedPowerOfTwo(run, "pool_alignment", 1);
  m.m_poolPadding = recordedPoolPadding(run);
  m.m_workspaces = recordedWorkspaces(run);
  m.m_poolPadding.workspaces = m.m_workspaces.get();
  // The samples each step ran on: k, or k/S in an iteration run in S sub-batches.
  const PassSamples perPass = samplesPerPass(run);
  m.m_minK = samplesOf(perPass, run.iterations.front().k, run.iterations.front().iteration);
  for (const auto& it : run.iterations) {
    m.m_minK = std::min(m.m_minK, samplesOf(perPass, it.k, it.iteration));
    m.m_maxK = std::max(m.m_maxK, samplesOf(perPass, it.k, it.iteration));
  }
  fitTimeline(run, perPass, m.m_dispatch, m.m_contention);
  m.fitStepCurves(run, perPass);
  m.fitCopyLines(run);
  return m;
}

void PerfModel::fitStepCurves(const store::RunData& run, const PassSamples& perPass) {
  const std::vector<LayerCost> costs = storedCosts(run);
  // The median time per layer, direction and k (the samples of the step's pass) over the
  // recorded iterations; with a fitted compute slowdown, each time without what the copies
  // beside it added.
  std::map<std::tuple<int, StepKind, std::int64_t>, std::vector<double>> times;
  for (const auto& s : run.samples) {
    if (s.layer < 0 || static_cast<std::size_t>(s.layer) >= costs.size()) continue;
    times[{s.layer, kindOf(s.direction), samplesOf(perPass, s.k, s.iteration)}].push_back(
        fittedSeconds(s));
  }
  std::map<std::string, std::vector<FitPoint>> points;
  std::map<std::string, GroupFit> meta;
  for (const auto& [id, ts] : times) {
    const auto& [layer, kind, k] = id;
    bool bytesAxis = false;
    const double x = stepWork(costs[static_cast<std::size_t>(layer)], kind, k, bytesAxis);
    const FitPoint p{x, median(ts), k};
    const auto& row = run.layers[static_cast<std::size_t>(layer)];
    const std::string type = row.kind + (bytesAxis ? "@bytes" : "");
    for (const auto& [scope, target] :
         {std::pair<store::FitScope, std::string>{store::FitScope::Type, type},
          {store::FitScope::Layer, row.name}}) {
      const std::string kk = key(scope, target, kind);
      points[kk].push_back(p);
      meta[kk] = {scope, target, kind, bytesAxis, {}};
    }
  }
  for (auto& [kk, pts] : points) {
    GroupFit g = meta[kk];
    // Every recorded group gets a curve. One whose times are all 0 (a step below the clock's
    // resolution: a GPU's events time a step that launches no kernel at 0) gets t = 0: it was
    // measured, so a plan neither takes another curve for it nor calls its type unrecorded,
    // and `compare` shows it. Only a group without work to index a curve by has none.
    bool any = false;
    for (const auto& p : pts)
      any = any || (p.x > 0 && p.t >= 0);
    if (!any) continue;
    g.fit = fitBest(pts, "'" + run.path + "': the samples of " + kk);
    m_index[kk] = m_groups.size();
    m_groups.push_back(std::move(g));
  }
}

void PerfModel::fitCopyLines(const store::RunData& run) {
  // PCIe: swaps and loads per direction. A transfer that overlapped one in the other direction
  // is kept apart to measure the duplex factor.
  std::vector<const store::TransferRow*> copies;
  const auto slow = slowCopyPhases(run);
  for (const auto& t : run.transfers) {
    if (t.kind != store::TransferKind::Readback && t.bytes > 0 &&
        !slow.count({t.k, t.iteration, t.to_host}))
      copies.push_back(&t);
  }
  // Each direction is one stream: per iteration its copies are disjoint, so sorted by start
  // they are sorted by end too, and one binary search finds a copy overlapping [start, end).
  std::map<std::tuple<std::int64_t, int, bool>, std::vector<std::pair<std::int64_t, std::int64_t>>>
      busy;
  for (const auto* t : copies)
    busy[{t->k, t->iteration, t->to_host}].emplace_back(t->start_ns, t->end_ns);
  for (auto& [id, v] : busy)
    std::sort(v.begin(), v.end());
  auto overlapsOther = [&](const store::TransferRow& t) {
    const auto it = busy.find({t.k, t.iteration, !t.to_host});
    if (it == busy.end()) return false;
    const auto& v = it->second;
    const auto o = std::upper_bound(v.begin(), v.end(), t.start_ns,
                                    [](std::int64_t s, const auto& iv) { return s < iv.second; });
    return o != v.end() && o->first < t.end_ns;
  };
  // Per direction, per whether the copy ran beside compute (at least half its time), per
  // whether it overlapped one in the other direction.
  std::vector<FitPoint> pts[2][2][2];
  for (const auto* t : copies) {
    const std::int64_t dur = t->end_ns - t->start_ns;
    const FitPoint p{static_cast<double>(t->bytes), static_cast<double>(dur) * 1e-9, t->k};
    const int beside = 2 * t->overlap_ns >= dur && dur > 0 ? 1 : 0;
    pts[t->to_host ? 1 : 0][beside][overlapsOther(*t) ? 1 : 0].push_back(p);
  }
  bool fittedAlone[2][2] = {{false, false}, {false, false}};
  // Per direction, the lines without and beside compute, where its copies give a bandwidth.
  std::optional<std::pair<LinkFit, LinkFit>> lines[2];
  const auto what = [&](int d) {
    return "'" + run.path + "': the " + (d ? "device-to-host" : "host-to-device") +
           " copies in table transfers";
  };
  for (int d = 0; d < 2; ++d) {
    // A class needs copies of two sizes at least, and a line that rises with the bytes: copies
    // of one size (a run of one plan records few) give no bandwidth, and the other class then
    // stands in rather than timing every copy as free.
    auto fitClass = [&](int beside) -> std::optional<LinkFit> {
      const std::vector<FitPoint>& v = pts[d][beside][0];
      if (std::none_of(v.begin(), v.end(), [&](const FitPoint& p) { return p.x != v[0].x; }))
        return std::nullopt;
      LinkFit f =
          fitLink(v, what(d) + (beside ? " that ran beside compute" : " that ran without compute"));
      if (f.bandwidth <= 0) return std::nullopt;
      fittedAlone[d][beside] = true;
      return f;
    };
    std::optional<LinkFit> without = fitClass(0), beside = fitClass(1);
    if (!without && !beside) {  // too few copies apart: one line through all of them
      std::vector<FitPoint> all;
      for (const auto& byCompute : pts[d])
        for (const auto& byDuplex : byCompute)
          all.insert(all.end(), byDuplex.begin(), byDuplex.end());
      // No copy to the device: a run always loads its minibatch, so the table was emptied; a
      // zero copy time would plan swaps as free.
      if (all.empty() && d == 0)
        throwBadInput(what(d) + ": there are none, so copy times cannot be fitted");
      if (!all.empty()) {
        LinkFit f = fitLink(all, what(d));
        if (f.bandwidth > 0) without = std::move(f);
      }
    }
    if (without || beside) lines[d] = {without ? *without : *beside, beside ? *beside : *without};
  }
  // A direction without a bandwidth of its own (a run of a plan that offloads nothing copies
  // nothing to the host but its loss; copies all of one size) takes the other's lines, marked so.
  if (!lines[0] && !lines[1]) {
    throwBadInput(what(0) +
                  " and the other way are each of one size, so no bandwidth can be "
                  "fitted (copy times would come out free)");
  }
  for (int d = 0; d < 2; ++d) {
    LinkFit& without = d ? m_d2h : m_h2d;
    LinkFit& beside = d ? m_d2hBeside : m_h2dBeside;
    std::tie(without, beside) = lines[d] ? *lines[d] : *lines[1 - d];
    without.from_other_direction = beside.from_other_direction = !lines[d];
  }
  std::vector<double> ratios;
  for (int d = 0; d < 2; ++d) {
    for (int beside = 0; beside < 2; ++beside) {
      if (!fittedAlone[d][beside]) continue;
      const LinkFit& f = beside ? (d ? m_d2hBeside : m_h2dBeside) : (d ? m_d2h : m_h2d);
      for (const FitPoint& p : pts[d][beside][1]) {
        const double pred = f.seconds(p.x);
        if (pred > 0) ratios.push_back(p.t / pred);
      }
    }
  }
  m_duplex = ratios.empty() ? 1.0 : std::max(1.0, median(ratios));
  m_duplexPoints = static_cast<int>(ratios.size());
}

const GroupFit* PerfModel::find(store::FitScope scope, const std::string& target,
                                StepKind kind) const {
  const auto it = m_index.find(key(scope, target, kind));
  return it == m_index.end() ? nullptr : &m_groups[it->second];
}

const GroupFit* PerfModel::resolve(const Network& net, bool same, int layer, StepKind kind,
                                   bool bytesAxis, bool& transferred) const {
  transferred = false;
  const GroupFit* g = same ? find(store::FitScope::Layer, net.layer(layer).name, kind) : nullptr;
  if (!g) {
    const std::string type =
        std::string(layerKindName(net.layer(layer).kind)) + (bytesAxis ? "@bytes" : "");
    g = find(store::FitScope::Type, type, kind);
    transferred = !same;
  }
  return g;
}

namespace {

Estimate predictStep(const Curve* curve, bool transferred, const LayerCost& c, StepKind kind,
                     std::int64_t k) {
  Estimate e;
  // A backward step that computes no gradient (a layer without weights whose inputs need none,
  // such as a ReLU on the minibatch) runs no kernel: 0 s, with or without a curve.
  if (kind == StepKind::Backward && !c.backward_active) return e;
  if (!curve) {
    e.missing = true;
    return e;
  }
  bool bytesAxis = false;
  const double x = stepWork(c, kind, k, bytesAxis);
  e.seconds = std::max(0.0, curve->predict(x));
  e.extrapolated = curve->extrapolates(x);
  e.transferred = transferred;
  return e;
}

}  // namespace

Estimate PerfModel::step(const Network& net, const std::vector<LayerCost>& costs, int layer,
                         StepKind kind, std::int64_t k) const {
  const LayerCost& c = costs.at(static_cast<std::size_t>(layer));
  bool bytesAxis = false;
  stepWork(c, kind, k, bytesAxis);
  bool transferred = false;
  const GroupFit* g =
      resolve(net, net.structureHash() == m_hash, layer, kind, bytesAxis, transferred);
  return predictStep(g ? &g->fit.chosen() : nullptr, transferred, c, kind, k);
}

BoundModel PerfModel::bind(const Network& net, const std::vector<LayerCost>& costs) const {
  if (costs.size() != static_cast<std::size_t>(net.size())) {
    throw Error(ErrorKind::Runtime, "PerfModel::bind: costs do not match the network");
  }
  BoundModel b;
  b.m_model = this;
  b.m_costs = &costs;
  const bool same = net.structureHash() == m_hash;
  b.m_entries.resize(costs.size() * 3);
  for (int i = 0; i < net.size(); ++i) {
    for (const StepKind kind : {StepKind::Forward, StepKind::Backward, StepKind::Update}) {
      // Whether a step is on the bytes axis does not depend on k (FLOPs are linear in k).
      bool bytesAxis = false;
      stepWork(costs[static_cast<std::size_t>(i)], kind, 1, bytesAxis);
      BoundModel::Entry& e = b.m_entries[static_cast<std::size_t>(i) * 3 + static_cast<int>(kind)];
      const GroupFit* g = resolve(net, same, i, kind, bytesAxis, e.transferred);
      e.curve = g ? &g->fit.chosen() : nullptr;
    }
  }
  return b;
}

Estimate BoundModel::step(int layer, StepKind kind, std::int64_t k) const {
  const BoundModel::Entry& e =
      m_entries.at(static_cast<std::size_t>(layer) * 3 + static_cast<int>(kind));
  return predictStep(e.curve, e.transferred, (*m_costs)[static_cast<std::size_t>(layer)], kind, k);
}

double PerfModel::fittedSeconds(const store::SampleRow& s) const {
  double t = static_cast<double>(s.time_ns) * 1e-9;
  if (m_contention.present && s.copy_overlap_ns > 0)
    t -= m_contention.slowdown.slope * static_cast<double>(s.copy_overlap_ns) * 1e-9;
  return t;
}

double PerfModel::transfer(std::int64_t bytes, bool to_host, bool beside_compute) const {
  if (bytes <= 0) return 0.0;
  const LinkFit& f = beside_compute ? linkBesideCompute(to_host) : link(to_host);
  return f.seconds(static_cast<double>(bytes));
}

namespace {

store::FitDirection storedDirection(StepKind k) {
  switch (k) {
    case StepKind::Forward:
      return store::FitDirection::Forward;
    case StepKind::Backward:
      return store::FitDirection::Backward;
    case StepKind::Update:
      return store::FitDirection::Update;
  }
  return store::FitDirection::Forward;
}

}  // namespace

std::vector<store::FitRow> PerfModel::fitRows() const {
  using store::FitDirection;
  using store::FitRowForm;
  using store::FitScope;
  std::vector<store::FitRow> rows;
  for (const GroupFit& g : m_groups) {
    for (std::size_t i = 0; i < g.fit.curves.size(); ++i) {
      const Curve& c = g.fit.curves[i];
      rows.push_back({0, g.scope, g.target, storedDirection(g.kind), storedForm(c.form),
                      c.paramsJson(), c.points, c.rmse, c.max_rel_error,
                      static_cast<int>(i) == g.fit.best});
    }
  }
  for (const bool toHost : {false, true}) {
    const LinkFit& f = link(toHost);
    const FitDirection direction = toHost ? FitDirection::DeviceToHost : FitDirection::HostToDevice;
    const std::string params = "{\"latency_s\":" + std::to_string(f.latency) +
                               ",\"bytes_per_s\":" + std::to_string(f.bandwidth) +
                               ",\"duplex_factor\":" + std::to_string(m_duplex) + "}";
    rows.push_back({0, FitScope::Pcie, toHost ? "d2h" : "h2d", direction, FitRowForm::Affine,
                    params, f.points, f.rmse, f.max_rel_error, true});
    const LinkFit& b = linkBesideCompute(toHost);
    const std::string besideParams = "{\"latency_s\":" + std::to_string(b.latency) +
                                     ",\"bytes_per_s\":" + std::to_string(b.bandwidth) + "}";
    rows.push_back({0, FitScope::Pcie, toHost ? "d2h+compute" : "h2d+compute", direction,
                    FitRowForm::Affine, besideParams, b.points, b.rmse, b.max_rel_error, true});
  }
  if (m_dispatch.present) {
    rows.push_back({0, FitScope::Dispatch, "compute", FitDirection::None,
                    FitRowForm::MeanOfStepMedians,
                    "{\"seconds\":" + std::to_string(m_dispatch.seconds) +
                        ",\"median_seconds\":" + std::to_string(m_dispatch.median) +
                        ",\"woken_seconds\":" + std::to_string(m_dispatch.woken_seconds) +
                        ",\"woken_points\":" + std::to_string(m_dispatch.woken_points) + "}",
                    m_dispatch.points, m_dispatch.rmse, 0, true});
  }
  if (m_contention.present) {
    rows.push_back({0, FitScope::Contention, "compute-slowdown", FitDirection::None,
                    FitRowForm::Proportional,
                    "{\"slowdown\":" + std::to_string(m_contention.slowdown.slope) +
                        ",\"outliers\":" + std::to_string(m_contention.slowdown.outliers) + "}",
                    m_contention.slowdown.points, m_contention.slowdown.rmse, 0, true});
    rows.push_back({0, FitScope::Contention, "start-block", FitDirection::None,
                    FitRowForm::Proportional,
                    "{\"start_block\":" + std::to_string(m_contention.start_block.slope) +
                        ",\"outliers\":" + std::to_string(m_contention.start_block.outliers) + "}",
                    m_contention.start_block.points, m_contention.start_block.rmse, 0, true});
    rows.push_back(
        {0, FitScope::Contention, "copy-start-block", FitDirection::None, FitRowForm::Line,
         "{\"copy_start_block\":" + std::to_string(m_contention.copy_start_block.slope) +
             ",\"intercept_seconds\":" + std::to_string(m_contention.copy_start_block.intercept) +
             ",\"outliers\":" + std::to_string(m_contention.copy_start_block.outliers) + "}",
         m_contention.copy_start_block.points, m_contention.copy_start_block.rmse, 0, true});
  }
  return rows;
}

}  // namespace swapscope::perf
