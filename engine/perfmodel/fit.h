// SPDX-License-Identifier: MIT
/// @brief Curves of time against work (FLOPs, or bytes for layers without FLOPs), fitted to
/// profiled points in three forms (AccUDNN §3.3, whose FLOPS curve is given only as a schematic):
/// - affine `t = a + x / P`, which is the paper's saturating FLOPS curve FLOPS(x) = P x / (x + aP);
/// - saturating `FLOPS(x) = P * min(1, (x / x_sat)^gamma)`, with an explicit saturation point;
/// - monotone piecewise-linear interpolation in log-log space (isotonic, so time never falls as
///   work grows).
/// Each fit keeps its residuals; fitBest chooses by leave-one-minibatch-out cross-validation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/bytes.h"

namespace swapscope::store {
enum class FitRowForm : int;  // store/run_db.h: the forms a stored fit names
}

namespace swapscope::perf {

enum class FitForm { Affine, Saturating, LogLog };
store::FitRowForm storedForm(FitForm f);  ///< the form the run database's fits name
std::string_view fitFormName(FitForm f);  ///< "affine", "saturating", "loglog"

struct FitPoint {
  double x = 0;        ///< FLOPs or bytes, > 0
  double t = 0;        ///< seconds, >= 0
  std::int64_t k = 0;  ///< the minibatch it was measured at (the cross-validation folds)
};

struct Curve {
  FitForm form = FitForm::Affine;
  double a = 0;      ///< affine: seconds of fixed cost
  double p = 0;      ///< affine and saturating: work per second at saturation
  double x_sat = 0;  ///< saturating
  double gamma = 0;  ///< saturating: 0 (constant time below x_sat) .. 1 (linear)
  std::vector<std::pair<double, double>> knots;  ///< loglog: (ln x, ln t), x increasing
  double x_min = 0, x_max = 0;                   ///< the fitted range
  int points = 0;
  std::vector<double> residuals;  ///< predicted - measured seconds, per input point
  double rmse = 0;                ///< seconds
  double max_rel_error = 0;       ///< over the fitted points
  double cv_rel_error = 0;        ///< mean |relative error| on held-out minibatches

  double predict(double x) const;
  /// Outside the fitted range by more than 1 %.
  bool extrapolates(double x) const { return x < x_min * 0.99 || x > x_max * 1.01; }
  /// The parameters as a JSON object (the run database's fits.params).
  std::string paramsJson() const;
};

/// Fits one form. Points with x or t <= 0 are ignored; at least one point must remain, else
/// Error(BadInput) that starts with `source` (the file and the points it names).
Curve fitCurve(FitForm form, const std::vector<FitPoint>& points, std::string_view source = {});

struct FitChoice {
  std::vector<Curve> curves;  ///< affine, saturating, loglog (the zero curve alone: fitBest)
  int best = 0;               ///< lowest cross-validated error
  const Curve& chosen() const { return curves.at(static_cast<std::size_t>(best)); }
};

/// All three forms with residuals. Cross-validation leaves one minibatch out at a time; with
/// fewer than three minibatches it falls back to the in-sample error. Points with x <= 0 are
/// ignored. A time of 0 (at work above 0: a step below the clock's resolution) is a measurement,
/// which the three forms cannot fit (they fit relative errors, in log space for two of them):
/// points that all took no time give one curve, the affine t = 0 through all of them, exact;
/// points that mix times of 0 with others give one curve, the affine line of least squares in
/// seconds through all of them (max_rel_error and cv_rel_error are then of the points timed
/// above 0, in sample).
FitChoice fitBest(const std::vector<FitPoint>& points, std::string_view source = {});

/// Least squares `t = latency + bytes / bandwidth` in seconds (ordinary least squares), so the
/// line gives a copy's mean time, and the residuals of the fitted copies sum to zero: the copy
/// time a schedule adds up is the measured one. On the CPU backend a copy beside compute runs
/// at one of two speeds (its thread on a free core, or waiting for the compute threads) and a
/// copy that outgrows the caches runs slower than a small one; a fit of the relative error
/// follows the many small and fast copies and timed the multi-MiB and the contended copies 10
/// to 60 % fast, which is the stall a schedule then missed.
struct LinkFit {
  double latency = 0;    ///< seconds
  double bandwidth = 0;  ///< bytes per second
  int points = 0;
  double rmse = 0;
  double max_rel_error = 0;
  std::vector<double> residuals;  ///< predicted - measured seconds, per point
  /// The run copied nothing this way (a plan that offloads nothing): the line is the other
  /// direction's.
  bool from_other_direction = false;
  double seconds(double bytes) const { return bandwidth > 0 ? latency + bytes / bandwidth : 0; }
};
LinkFit fitLink(const std::vector<FitPoint>& points, std::string_view source = {});

/// Least squares `y = slope x` through the origin over (x, y) pairs, the slope clamped to
/// [lo, hi]; residuals are slope x - y. An empty input gives slope 0 and no points.
///
/// Outliers are left out first: a pair whose residual from the median slope (of y / x) lies
/// beyond Tukey's far-out fences (Q1 - 3 IQR, Q3 + 3 IQR of those residuals) is not fitted. On a
/// shared machine a step preempted by other work for milliseconds is such a pair, and a few of
/// them would otherwise set the slope.
struct ProportionalFit {
  double slope = 0;
  double intercept = 0;           ///< fitBoundedLine only; 0 through the origin
  int points = 0;                 ///< pairs fitted
  int outliers = 0;               ///< pairs left out
  std::vector<double> residuals;  ///< per pair fitted
  double rmse = 0;
};
ProportionalFit fitProportional(const std::vector<std::pair<double, double>>& xy, double lo,
                                double hi);
/// Least squares `y = intercept + slope x` (slope clamped to [lo, hi]) for a y that the x bounds
/// from above (a wait for a copy is at most about the copy): the pairs whose y - x lies above
/// the upper Tukey fence (third quartile + 3 x the interquartile range) are left out as waits
/// the x does not explain; any y below x is kept, so that a mixture of pairs that waited (y near
/// x) and pairs that did not (y near 0) is fitted as its mean. The intercept is then the mean of
/// y - slope x; residuals are intercept + slope x - y.
ProportionalFit fitBoundedLine(const std::vector<std::pair<double, double>>& xy, double lo,
                               double hi);

/// A kernel workspace's bytes as a function of k, from the bytes a profile recorded at each of
/// its minibatches, (k, bytes) with k > 0 and bytes >= 0: the line a + b·k, a and b whole bytes
/// and at least 0, that is at or above every recorded value and exceeds them least in sum (ties:
/// the steeper line). It is exact where the recorded values lie on such a line (one algorithm
/// throughout, whose workspace is affine in k) and above them where the algorithm changes with
/// k; it never falls, so it is never below a value recorded at a smaller k. {} for no points.
LinearBytes workspaceLine(const std::vector<std::pair<std::int64_t, std::int64_t>>& recorded);

}  // namespace swapscope::perf
