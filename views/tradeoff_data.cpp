// SPDX-License-Identifier: MIT
#include "views/tradeoff_data.h"

#include <algorithm>
#include <cmath>

namespace swapscope {

std::vector<std::int64_t> sweepBudgets(std::int64_t lo, std::int64_t hi, int count) {
  std::vector<std::int64_t> out;
  if (lo < 1 || hi < lo || count < 1) return out;
  if (count == 1 || hi == lo) return {lo};
  const double a = std::log(static_cast<double>(lo));
  const double b = std::log(static_cast<double>(hi));
  for (int i = 0; i < count; ++i) {
    std::int64_t v = i == 0           ? lo
                     : i == count - 1 ? hi
                                      : std::llround(std::exp(a + (b - a) * i / (count - 1)));
    v = std::clamp(v, lo, hi);
    if (out.empty() || v > out.back()) out.push_back(v);
  }
  return out;
}

SweepPoint sweepPoint(std::int64_t budget, const perf::PlanResult& plan) {
  SweepPoint p;
  p.budget = budget;
  p.feasible = plan.trainable;
  if (plan.trainable) {
    p.k = plan.best.k;
    p.throughput = plan.best.sim.throughput;
    p.t_iter = plan.best.sim.t_iter;
  }
  return p;
}

void TradeoffSweep::add(const SweepPoint& p) {
  const auto it =
      std::lower_bound(points.begin(), points.end(), p.budget,
                       [](const SweepPoint& a, std::int64_t b) { return a.budget < b; });
  if (it != points.end() && it->budget == p.budget) {
    *it = p;
  } else {
    points.insert(it, p);
  }
}

std::optional<SweepPoint> TradeoffSweep::nearest(double budget) const {
  std::optional<SweepPoint> best;
  double bestDistance = 0;
  const double lb = std::log(std::max(1.0, budget));
  for (const SweepPoint& p : points) {
    const double d = std::abs(std::log(static_cast<double>(p.budget)) - lb);
    if (!best || d < bestDistance) {
      best = p;
      bestDistance = d;
    }
  }
  return best;
}

std::vector<std::int64_t> batchGrid(std::int64_t kMax, std::int64_t chosen, int maxPoints) {
  std::vector<std::int64_t> ks;
  if (kMax < 1) return ks;
  if (kMax <= maxPoints || maxPoints < 2) {
    for (std::int64_t k = 1; k <= kMax; ++k)
      ks.push_back(k);
    return ks;
  }
  const double ratio = std::pow(static_cast<double>(kMax), 1.0 / (maxPoints - 1));
  double v = 1;
  for (int i = 0; i < maxPoints; ++i, v *= ratio) {
    const auto k = std::clamp<std::int64_t>(std::llround(v), 1, kMax);
    if (ks.empty() || k > ks.back()) ks.push_back(k);
  }
  if (ks.back() != kMax) ks.push_back(kMax);
  if (chosen >= 1 && chosen <= kMax && !std::binary_search(ks.begin(), ks.end(), chosen)) {
    ks.insert(std::lower_bound(ks.begin(), ks.end(), chosen), chosen);
  }
  return ks;
}

BatchCurve makeBatchCurve(const perf::Planner& planner, const perf::PlanRequest& request,
                          const perf::PlanResult& current, int maxPoints,
                          const std::function<bool()>& stop) {
  BatchCurve c;
  c.budget = request.budget;
  if (!current.trainable && current.k_max < 1) {
    c.reason = current.reason;
    return c;
  }
  c.chosen_k = current.trainable ? current.best.k : 0;
  const std::int64_t top =
      request.max_batch > 0 ? std::min(current.k_max, request.max_batch) : current.k_max;
  for (const std::int64_t k : batchGrid(top, c.chosen_k, maxPoints)) {
    if (stop && stop()) return c;
    perf::PlanRequest r = request;
    r.batch = k;
    const perf::PlanResult p = planner.plan(r);
    BatchPoint b;
    b.k = k;
    b.trainable = p.trainable;
    if (p.trainable) {
      b.t_iter = p.best.sim.t_iter;
      b.throughput = p.best.sim.throughput;
      b.stall = p.best.sim.stall;
      b.peak = p.best.peak;
    }
    c.points.push_back(b);
  }
  return c;
}

}  // namespace swapscope
