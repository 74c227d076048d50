// SPDX-License-Identifier: MIT
/// @brief What the trade-off view draws, without any Qt:
/// (a) throughput and the chosen k against the budget: a sweep of plans over budgets that
///     arrives point by point (TradeoffSweep);
/// (b) t_iter and throughput against k at one budget: the planner run with k fixed at each k of
///     a grid (BatchCurve), the curve Algorithm 2 and the argmin search walk along (AccUDNN
///     section 4.3).
#pragma once

#include <functional>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "perfmodel/planner.h"

namespace swapscope {

/// One plan of the budget sweep.
struct SweepPoint {
  std::int64_t budget = 0;
  std::int64_t k = 0;     ///< the chosen k; 0 when infeasible
  double throughput = 0;  ///< samples per second; 0 when infeasible
  double t_iter = 0;      ///< seconds; 0 when infeasible
  bool feasible = false;  ///< the plan is trainable
};

/// `count` budgets from `lo` to `hi` (both included), evenly spaced on a log scale, ascending and
/// distinct (fewer when the range holds fewer bytes). Empty when hi < lo or lo < 1.
std::vector<std::int64_t> sweepBudgets(std::int64_t lo, std::int64_t hi, int count = 64);

/// The sweep point of a plan made for `budget`.
SweepPoint sweepPoint(std::int64_t budget, const perf::PlanResult& plan);

/// The sweep so far, sorted by budget, one point per budget (a later point replaces an earlier
/// one of the same budget).
struct TradeoffSweep {
  std::vector<SweepPoint> points;
  void add(const SweepPoint& p);
  /// The point whose budget is nearest on a log scale; nullopt when empty.
  std::optional<SweepPoint> nearest(double budget) const;
};

/// One k at the current budget.
struct BatchPoint {
  std::int64_t k = 0;
  bool trainable = false;
  double t_iter = 0;      ///< seconds
  double throughput = 0;  ///< samples per second
  double stall = 0;       ///< seconds
  std::int64_t peak = 0;  ///< bytes
};

struct BatchCurve {
  std::int64_t budget = 0;
  std::int64_t chosen_k = 0;       ///< the plan's k (0 when untrainable)
  std::string reason;              ///< why there is no curve
  std::vector<BatchPoint> points;  ///< ascending k
};

/// The k values of a curve up to kMax: every k when kMax <= maxPoints, else about maxPoints on
/// a geometric grid from 1 to kMax; `chosen` (when in 1..kMax) is always included. Ascending.
std::vector<std::int64_t> batchGrid(std::int64_t kMax, std::int64_t chosen, int maxPoints = 24);

/// Plans every k of batchGrid(current.k_max capped by request.max_batch, current's k) with the
/// request's policy, budget and options and k fixed (perf::Planner::plan with `batch` set, the
/// code path of `swapscope plan --batch`). About maxPoints plans: run it off the GUI thread for
/// large networks. `stop`, when given, is asked before each plan; when it returns true the
/// curve is abandoned and returned with the points made so far (the app stops a curve whose budget
/// the user has already left, and drops it).
BatchCurve makeBatchCurve(const perf::Planner& planner, const perf::PlanRequest& request,
                          const perf::PlanResult& current, int maxPoints = 24,
                          const std::function<bool()>& stop = {});

}  // namespace swapscope
