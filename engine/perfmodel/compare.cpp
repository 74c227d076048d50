// SPDX-License-Identifier: MIT
#include "perfmodel/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "common/format.h"
#include "common/stats.h"

namespace swapscope::perf {

namespace {

std::optional<PerfModel> tryFit(const store::RunData& run) {
  if (run.iterations.empty()) return std::nullopt;
  return PerfModel::fit(run);
}

RunSide side(const store::RunData& run, const std::optional<PerfModel>& model) {
  RunSide s;
  s.path = run.path;
  s.kind = run.meta.kind;
  s.status = std::string(store::runStatusName(run.meta.status));
  s.device = run.meta.device;
  s.backend = run.meta.backend;
  s.host_cpu = run.meta.host_cpu;
  s.network = run.network.name;
  s.structure_hash = run.network.structure_hash;
  s.policy = run.meta.policy;
  s.budget = run.meta.budget;
  std::set<std::int64_t> ks;
  for (const auto& it : run.iterations)
    ks.insert(it.k);
  s.ks.assign(ks.begin(), ks.end());
  std::set<std::pair<std::int64_t, std::int64_t>> batches;
  const auto passes = subBatchesOf(run);
  for (const auto& it : run.iterations) {
    const auto p = passes.find({it.k, it.iteration});
    batches.insert({it.k, p == passes.end() ? 1 : p->second});
  }
  s.batches.assign(batches.begin(), batches.end());
  s.fitted = model.has_value();
  if (model) {
    const LinkFit& h = model->link(false);
    const LinkFit& d = model->link(true);
    s.h2d_bytes_per_s = h.bandwidth;
    s.h2d_latency_s = h.latency;
    s.h2d_points = h.points;
    if (!d.from_other_direction) {  // else none measured: 0 points, and "-" in the table
      s.d2h_bytes_per_s = d.bandwidth;
      s.d2h_latency_s = d.latency;
      s.d2h_points = d.points;
    }
    s.duplex_factor = model->duplexFactor();
    s.duplex_points = model->duplexPoints();
  }
  s.check = planCheck(run);
  return s;
}

}  // namespace

std::optional<RunSide::Check> planCheck(const store::RunData& run) {
  if (run.plans.empty() || run.iterations.empty()) return std::nullopt;
  const auto plan = nlohmann::json::parse(run.plans.back().json, nullptr, false);
  if (plan.is_discarded() || !plan.contains("predictions") || !plan.contains("k"))
    return std::nullopt;
  RunSide::Check c;
  c.k = plan.value("k", std::int64_t{0});
  const auto& p = plan["predictions"];
  c.t_iter_predicted = p.value("t_iter_s", 0.0);
  c.peak_predicted = p.value("peak_bytes", std::int64_t{0});
  c.stall_predicted = p.value("stall_s", 0.0);
  std::vector<double> times, stalls;
  for (const auto& it : run.iterations) {
    if (it.k != c.k) continue;
    times.push_back(static_cast<double>(it.duration_ns) * 1e-9);
    stalls.push_back(static_cast<double>(it.stall_ns) * 1e-9);
  }
  if (times.empty()) return std::nullopt;
  for (const auto& b : run.batches) {
    if (b.k == c.k) c.peak_measured = b.measured_peak;
  }
  c.t_iter_measured = median(times);
  c.stall_measured = median(stalls);
  if (const auto d = plan.find("device"); d != plan.end() && d->is_object()) {
    c.device_mismatch =
        planDeviceMismatch(d->value("name", std::string()), d->value("backend", std::string()),
                           run.meta.device, run.meta.backend);
  }
  return c;
}

std::string planDeviceMismatch(const std::string& planDevice, const std::string& planBackend,
                               const std::string& device, const std::string& backend) {
  if (planBackend == backend && planDevice == device) return "";
  return "the plan's model was fitted on " + planDevice + " (" + planBackend +
         "), but this run is on " + device + " (" + backend +
         "): predictions from another device are not comparable with this run's measurement";
}

namespace {

/// Median seconds per step over the step samples that ran on n samples.
std::map<int, double> stepMedians(const store::RunData& run,
                                  const std::map<std::pair<std::int64_t, int>, std::int64_t>& ns,
                                  std::int64_t n) {
  std::map<int, std::vector<double>> times;
  for (const auto& s : run.samples) {
    const auto it = ns.find({s.k, s.iteration});
    if (it != ns.end() && it->second == n && s.direction != store::Direction::Update)
      times[s.step].push_back(static_cast<double>(s.time_ns) * 1e-9);
  }
  std::map<int, double> out;
  for (auto& [step, t] : times)
    out[step] = median(t);
  return out;
}

}  // namespace

RunComparison compareRuns(const store::RunData& a, const store::RunData& b, std::size_t top) {
  const auto ma = tryFit(a), mb = tryFit(b);
  RunComparison c;
  c.a = side(a, ma);
  c.b = side(b, mb);
  c.same_network = a.network.structure_hash == b.network.structure_hash;

  // Per-type curves both runs fitted, at the geometric mean of the overlap of their profiled
  // ranges (or of the two ranges when they do not overlap, flagged as extrapolated).
  if (ma && mb) {
    for (const GroupFit& ga : ma->groups()) {
      if (ga.scope != store::FitScope::Type) continue;
      for (const GroupFit& gb : mb->groups()) {
        if (gb.scope != store::FitScope::Type || gb.target != ga.target || gb.kind != ga.kind)
          continue;
        const Curve& ca = ga.fit.chosen();
        const Curve& cb = gb.fit.chosen();
        const double lo = std::max(ca.x_min, cb.x_min), hi = std::min(ca.x_max, cb.x_max);
        CurveAtCommonWork w;
        w.target = ga.target;
        w.direction = std::string(stepKindName(ga.kind));
        w.bytes_axis = ga.bytes_axis;
        if (lo <= hi && lo > 0) {
          w.work = std::sqrt(lo * hi);
        } else {
          w.work = std::sqrt(std::max(ca.x_min, 1.0) * std::max(cb.x_max, 1.0));
          w.extrapolated = true;
        }
        w.extrapolated = w.extrapolated || ca.extrapolates(w.work) || cb.extrapolates(w.work);
        w.seconds_a = std::max(0.0, ca.predict(w.work));
        w.seconds_b = std::max(0.0, cb.predict(w.work));
        w.form_a = std::string(fitFormName(ca.form));
        w.form_b = std::string(fitFormName(cb.form));
        c.curves.push_back(std::move(w));
      }
    }
    std::sort(c.curves.begin(), c.curves.end(), [](const auto& x, const auto& y) {
      return std::tie(x.target, x.direction) < std::tie(y.target, y.direction);
    });
  }

  // Per-step differences at the largest k both recorded, for the same network.
  if (c.same_network) {
    // At the samples per step, which a run in sub-batches records at k/S.
    const auto na = samplesPerPass(a), nb = samplesPerPass(b);
    std::set<std::int64_t> sizesA, sizesB;
    for (const auto& [id, n] : na)
      sizesA.insert(n);
    for (const auto& [id, n] : nb)
      sizesB.insert(n);
    std::vector<std::int64_t> common;
    std::set_intersection(sizesA.begin(), sizesA.end(), sizesB.begin(), sizesB.end(),
                          std::back_inserter(common));
    if (!common.empty()) {
      c.step_k = common.back();
      const auto ta = stepMedians(a, na, c.step_k), tb = stepMedians(b, nb, c.step_k);
      std::map<int, const store::StepRow*> rows;
      for (const auto& s : a.steps)
        rows[s.step] = &s;
      for (const auto& [step, sa] : ta) {
        const auto it = tb.find(step);
        if (it == tb.end()) continue;
        StepDiff d;
        d.step = step;
        d.seconds_a = sa;
        d.seconds_b = it->second;
        if (const auto r = rows.find(step); r != rows.end()) {
          const int layer = r->second->layer;
          if (layer >= 0 && static_cast<std::size_t>(layer) < a.layers.size())
            d.layer = a.layers[static_cast<std::size_t>(layer)].name;
          d.direction = std::string(store::directionName(r->second->direction));
        }
        c.steps.push_back(std::move(d));
      }
      std::stable_sort(c.steps.begin(), c.steps.end(), [](const StepDiff& x, const StepDiff& y) {
        return std::abs(x.seconds_b - x.seconds_a) > std::abs(y.seconds_b - y.seconds_a);
      });
      c.steps_total = c.steps.size();
      if (c.steps.size() > top) c.steps.resize(top);
    }
  }
  return c;
}

std::string describeBatches(const RunSide& side) {
  std::string s;
  for (const auto& [k, passes] : side.batches) {
    if (!s.empty()) s += ',';
    s += std::to_string(k);
    if (passes > 1)
      s += " in " + std::to_string(passes) + " passes of " + std::to_string(k / passes);
  }
  return s.empty() ? "none" : s;
}

std::string stepsNotCompared(const RunComparison& c) {
  if (!c.same_network) return "the networks differ";
  if (c.a.batches.empty() || c.b.batches.empty()) {
    return std::string(c.a.batches.empty() ? "A" : "B") + " records no iterations";
  }
  if (c.step_k != 0) return "";
  return "no pass size was recorded by both (A: k = " + describeBatches(c.a) +
         "; B: k = " + describeBatches(c.b) +
         "), and a step's time is compared at the samples it ran on";
}

std::string nothingToCompare(const RunComparison& c) {
  std::string who;
  for (const RunSide* s : {&c.a, &c.b}) {
    if (!s->batches.empty()) continue;
    if (!who.empty()) who += " and ";
    who += (s == &c.a ? "A (" : "B (") + s->path + ")";
  }
  if (who.empty()) return "";
  return who + (c.a.batches.empty() && c.b.batches.empty() ? " record" : " records") +
         " no iterations: nothing to compare but the identity (no fits, PCIe rates, step "
         "times or ratios)";
}

namespace {

struct SetScore {
  double precision = 1, recall = 1, f1 = 1;
};

SetScore scoreSets(const std::vector<int>& predicted, const std::vector<int>& measured) {
  std::size_t both = 0;
  for (const int p : predicted)
    both += std::binary_search(measured.begin(), measured.end(), p) ? 1 : 0;
  SetScore s;
  if (!predicted.empty())
    s.precision = static_cast<double>(both) / static_cast<double>(predicted.size());
  if (!measured.empty())
    s.recall = static_cast<double>(both) / static_cast<double>(measured.size());
  s.f1 = s.precision + s.recall > 0 ? 2 * s.precision * s.recall / (s.precision + s.recall) : 0;
  return s;
}

}  // namespace

StallMetrics compareStalls(double predictedTIter, const std::vector<double>& predictedStall,
                           const std::vector<double>& predictedStart,
                           const std::vector<MeasuredIteration>& measured, double threshold) {
  StallMetrics m;
  m.threshold = threshold;
  m.iterations = static_cast<int>(measured.size());
  for (std::size_t j = 1; j < predictedStall.size(); ++j) {
    m.stall_predicted += predictedStall[j];
    if (predictedStall[j] > threshold * predictedTIter)
      m.predicted_stalled.push_back(static_cast<int>(j));
  }
  if (measured.empty()) return m;
  std::vector<double> totals, precision, recall, f1;
  std::map<int, int> stalledCount;
  for (const MeasuredIteration& it : measured) {
    double total = 0;
    std::vector<int> stalled;
    for (std::size_t j = 1; j < it.stall.size(); ++j) {
      total += it.stall[j];
      if (it.stall[j] > threshold * it.t_iter) {
        stalled.push_back(static_cast<int>(j));
        ++stalledCount[static_cast<int>(j)];
      }
    }
    totals.push_back(total);
    const SetScore s = scoreSets(m.predicted_stalled, stalled);
    precision.push_back(s.precision);
    recall.push_back(s.recall);
    f1.push_back(s.f1);
  }
  m.stall_measured = median(totals);
  m.precision = median(precision);
  m.recall = median(recall);
  m.f1 = median(f1);
  for (const auto& [step, count] : stalledCount) {
    if (2 * count > m.iterations) m.measured_stalled.push_back(step);
  }
  const std::size_t steps = measured.front().start.size();
  if (steps > 1 && predictedStart.size() == steps) {
    m.has_starts = true;
    std::vector<double> errors;
    for (std::size_t j = 1; j < steps; ++j) {
      std::vector<double> starts;
      for (const MeasuredIteration& it : measured)
        if (j < it.start.size()) starts.push_back(it.start[j]);
      if (starts.empty()) continue;
      const double e = std::abs(predictedStart[j] - median(starts));
      if (errors.empty() || e > m.start_error_max) {
        m.start_error_max = e;
        m.start_error_worst_step = static_cast<int>(j);
      }
      errors.push_back(e);
    }
    if (!errors.empty()) {
      m.start_error_median = median(errors);
      std::sort(errors.begin(), errors.end());
      m.start_error_p90 =
          errors[static_cast<std::size_t>(0.9 * static_cast<double>(errors.size() - 1))];
    }
  }
  return m;
}

std::string timeRatioText(double secondsA, double secondsB) {
  // Shows as a time other than 0 where its text holds a digit other than 0.
  const auto shows = [](double s) {
    return s > 0 && formatMilliseconds(s).find_first_not_of("-0.") != std::string::npos;
  };
  return shows(secondsA) && shows(secondsB) ? formatFixed(secondsB / secondsA, 2) + "x" : "-";
}

}  // namespace swapscope::perf
