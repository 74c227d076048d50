// SPDX-License-Identifier: MIT
#include "perfmodel/fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/error.h"
#include "common/stats.h"
#include "store/run_db.h"

namespace swapscope::perf {

store::FitRowForm storedForm(FitForm f) {
  switch (f) {
    case FitForm::Affine:
      return store::FitRowForm::Affine;
    case FitForm::Saturating:
      return store::FitRowForm::Saturating;
    case FitForm::LogLog:
      return store::FitRowForm::LogLog;
  }
  return store::FitRowForm::Affine;
}

std::string_view fitFormName(FitForm f) {
  return store::fitRowFormName(storedForm(f));
}

namespace {

std::vector<FitPoint> usable(const std::vector<FitPoint>& in, std::string_view source) {
  std::vector<FitPoint> out;
  for (const FitPoint& p : in) {
    if (p.x > 0 && p.t > 0 && std::isfinite(p.x) && std::isfinite(p.t)) out.push_back(p);
  }
  if (out.empty()) {
    throw Error(ErrorKind::BadInput,
                (source.empty() ? std::string() : std::string(source) + ": ") +
                    "a fit needs at least one point with work and time above zero, and none of "
                    "the " +
                    std::to_string(in.size()) + " given has both");
  }
  return out;
}

/// Least squares for t = a + b x, a >= 0, b >= 0: of the relative error (weights 1/t^2, every
/// point counts alike whatever its time) or of the error in seconds (at each x the line passes
/// through the mean time).
std::pair<double, double> line(const std::vector<FitPoint>& pts, bool relative) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const FitPoint& p : pts) {
    const double w = relative ? 1.0 / (p.t * p.t) : 1.0;
    sw += w;
    sx += w * p.x;
    sy += w * p.t;
    sxx += w * p.x * p.x;
    sxy += w * p.x * p.t;
  }
  const double det = sw * sxx - sx * sx;
  double a = 0, b = 0;
  if (det > 1e-300 * sw * sxx && det > 0) {
    a = (sxx * sy - sx * sxy) / det;
    b = (sw * sxy - sx * sy) / det;
  }
  if (!(det > 0) || b <= 0) return {sy / sw, 0.0};  // no growth measurable: a constant
  if (a < 0) return {0.0, sxy / sxx};               // through the origin
  return {a, b};
}

void finish(Curve& c, const std::vector<FitPoint>& pts) {
  c.points = static_cast<int>(pts.size());
  c.x_min = std::numeric_limits<double>::infinity();
  c.x_max = 0;
  double sse = 0;
  c.max_rel_error = 0;
  c.residuals.clear();
  for (const FitPoint& p : pts) {
    c.x_min = std::min(c.x_min, p.x);
    c.x_max = std::max(c.x_max, p.x);
    const double r = c.predict(p.x) - p.t;
    c.residuals.push_back(r);
    sse += r * r;
    // A point timed at 0 has no relative error (fitSeconds fits such points).
    if (p.t > 0) c.max_rel_error = std::max(c.max_rel_error, std::abs(r) / p.t);
  }
  c.rmse = std::sqrt(sse / static_cast<double>(pts.size()));
}

Curve fitAffine(const std::vector<FitPoint>& pts) {
  Curve c;
  c.form = FitForm::Affine;
  const auto [a, b] = line(pts, true);
  c.a = a;
  c.p = b > 0 ? 1.0 / b : std::numeric_limits<double>::infinity();
  return c;
}

Curve fitSaturating(const std::vector<FitPoint>& pts) {
  // ln t - ln x = -ln P + gamma * max(0, ln x_sat - ln x): linear in (-ln P, gamma) for a given
  // x_sat. Try each measured x (and "saturated everywhere") as x_sat; keep the best.
  std::set<double> candidates;
  for (const FitPoint& p : pts)
    candidates.insert(p.x);
  Curve best;
  best.form = FitForm::Saturating;
  double bestSse = std::numeric_limits<double>::infinity();
  for (const double xs : candidates) {
    double n = 0, su = 0, sy = 0, suu = 0, suy = 0;
    for (const FitPoint& p : pts) {
      const double u = std::max(0.0, std::log(xs) - std::log(p.x));
      const double y = std::log(p.t) - std::log(p.x);
      n += 1;
      su += u;
      sy += y;
      suu += u * u;
      suy += u * y;
    }
    const double det = n * suu - su * su;
    double gamma = det > 1e-12 ? (n * suy - su * sy) / det : 0.0;
    gamma = std::clamp(gamma, 0.0, 1.0);
    const double c0 = (sy - gamma * su) / n;
    double sse = 0;
    for (const FitPoint& p : pts) {
      const double u = std::max(0.0, std::log(xs) - std::log(p.x));
      const double r = c0 + gamma * u - (std::log(p.t) - std::log(p.x));
      sse += r * r;
    }
    if (sse < bestSse) {
      bestSse = sse;
      best.x_sat = xs;
      best.gamma = gamma;
      best.p = std::exp(-c0);
    }
  }
  return best;
}

Curve fitLogLog(const std::vector<FitPoint>& pts) {
  Curve c;
  c.form = FitForm::LogLog;
  // Mean ln t per distinct x, then pool adjacent violators so that ln t never decreases.
  std::map<double, std::pair<double, int>> byX;
  for (const FitPoint& p : pts) {
    auto& e = byX[p.x];
    e.first += std::log(p.t);
    e.second += 1;
  }
  struct Block {
    double lx, lt;
    double w;
  };
  std::vector<Block> blocks;
  for (const auto& [x, e] : byX) {
    blocks.push_back({std::log(x), e.first / e.second, static_cast<double>(e.second)});
    while (blocks.size() > 1 && blocks[blocks.size() - 2].lt > blocks.back().lt) {
      Block b = blocks.back();
      blocks.pop_back();
      Block& a = blocks.back();
      const double w = a.w + b.w;
      a = {(a.lx * a.w + b.lx * b.w) / w, (a.lt * a.w + b.lt * b.w) / w, w};
    }
  }
  for (const Block& b : blocks)
    c.knots.emplace_back(b.lx, b.lt);
  return c;
}

/// The mean |relative error| over the points timed above 0 (a point timed at 0 has none).
double relError(const Curve& c, const std::vector<FitPoint>& pts) {
  double sum = 0;
  int n = 0;
  for (const FitPoint& p : pts) {
    if (!(p.t > 0)) continue;
    sum += std::abs(c.predict(p.x) - p.t) / p.t;
    ++n;
  }
  return n == 0 ? 0 : sum / n;
}

Curve fitForm(FitForm form, const std::vector<FitPoint>& pts) {
  switch (form) {
    case FitForm::Affine:
      return fitAffine(pts);
    case FitForm::Saturating:
      return fitSaturating(pts);
    case FitForm::LogLog:
      return fitLogLog(pts);
  }
  return fitAffine(pts);
}

}  // namespace

double Curve::predict(double x) const {
  if (x <= 0) return form == FitForm::Affine ? a : 0.0;
  switch (form) {
    case FitForm::Affine:
      return a + (std::isinf(p) ? 0.0 : x / p);
    case FitForm::Saturating: {
      const double share = x >= x_sat ? 1.0 : std::pow(x / x_sat, gamma);
      return x / (p * share);
    }
    case FitForm::LogLog: {
      if (knots.empty()) return 0;
      const double lx = std::log(x);
      if (knots.size() == 1) return std::exp(knots[0].second + (lx - knots[0].first));
      if (lx >= knots.back().first) {
        // Beyond the largest measured work the device is saturated: time grows linearly.
        return std::exp(knots.back().second + (lx - knots.back().first));
      }
      if (lx <= knots.front().first) {
        const auto& [x0, t0] = knots[0];
        const auto& [x1, t1] = knots[1];
        const double slope = std::clamp((t1 - t0) / (x1 - x0), 0.0, 1.0);
        return std::exp(t0 + slope * (lx - x0));
      }
      const auto it = std::upper_bound(knots.begin(), knots.end(), lx,
                                       [](double v, const auto& kn) { return v < kn.first; });
      const auto& [x1, t1] = *it;
      const auto& [x0, t0] = *(it - 1);
      return std::exp(t0 + (t1 - t0) * (lx - x0) / (x1 - x0));
    }
  }
  return 0;
}

std::string Curve::paramsJson() const {
  nlohmann::json j;
  switch (form) {
    case FitForm::Affine:
      j = {{"a_s", a}, {"work_per_s", std::isinf(p) ? 0.0 : p}};
      break;
    case FitForm::Saturating:
      j = {{"work_per_s", p}, {"x_sat", x_sat}, {"gamma", gamma}};
      break;
    case FitForm::LogLog: {
      nlohmann::json knotsJson = nlohmann::json::array();
      for (const auto& [lx, lt] : knots)
        knotsJson.push_back({std::exp(lx), std::exp(lt)});
      j = {{"knots", knotsJson}};
      break;
    }
  }
  j["x_min"] = x_min;
  j["x_max"] = x_max;
  j["cv_rel_error"] = cv_rel_error;
  return j.dump();
}

Curve fitCurve(FitForm form, const std::vector<FitPoint>& points, std::string_view source) {
  const auto pts = usable(points, source);
  Curve c = fitForm(form, pts);
  finish(c, pts);
  c.cv_rel_error = relError(c, pts);
  return c;
}

namespace {

/// The curve t = 0 (affine, a = 0 and no growth) through `points`, every one of which took no
/// time: exact, with no error.
Curve zeroCurve(const std::vector<FitPoint>& points) {
  Curve c;
  c.form = FitForm::Affine;
  c.a = 0;
  c.p = std::numeric_limits<double>::infinity();
  c.points = static_cast<int>(points.size());
  c.x_min = std::numeric_limits<double>::infinity();
  for (const FitPoint& p : points) {
    c.x_min = std::min(c.x_min, p.x);
    c.x_max = std::max(c.x_max, p.x);
  }
  c.residuals.assign(points.size(), 0.0);
  return c;
}

/// The affine t = a + x / P (a, 1/P >= 0) of least squares in seconds through every point,
/// those timed at 0 included: fitBest's curve for a group that mixes times of 0 with others.
Curve fitSeconds(const std::vector<FitPoint>& pts) {
  Curve c;
  c.form = FitForm::Affine;
  const auto [a, b] = line(pts, false);
  c.a = a;
  c.p = b > 0 ? 1.0 / b : std::numeric_limits<double>::infinity();
  finish(c, pts);
  c.cv_rel_error = relError(c, pts);
  return c;
}

}  // namespace

FitChoice fitBest(const std::vector<FitPoint>& points, std::string_view source) {
  // Work measured at no time at all (below the clock's resolution: a GPU's events time a step
  // that launches no kernel at 0) is a measurement, not a missing one.
  std::vector<FitPoint> worked;  // the points with work to index a curve by, and a time
  for (const FitPoint& p : points) {
    if (p.x > 0 && std::isfinite(p.x) && p.t >= 0 && std::isfinite(p.t)) worked.push_back(p);
  }
  const auto timedAtZero = [](const FitPoint& p) { return p.t == 0; };
  if (!worked.empty() && std::all_of(worked.begin(), worked.end(), timedAtZero)) {
    // All of them at 0: the curve t = 0, exact.
    FitChoice zero;
    zero.curves.push_back(zeroCurve(worked));
    return zero;
  }
  if (std::any_of(worked.begin(), worked.end(), timedAtZero)) {
    // Some at 0, some above: the three forms fit relative errors (the affine one weighted by
    // 1/t^2, the saturating and log-log ones in log space), which a time of 0 has none of, so
    // they could only leave those points out, and a curve of the others alone times the group's
    // steps measured at 0 high (such a step takes less than the clock's resolution, at most a
    // microsecond for a GPU's events, where the curve's fixed cost alone may be several). The
    // group gets the one curve that takes every point: the affine line of least squares in
    // seconds, as the copy lines are fitted (where neither bound binds, its times over the
    // points add up to the measured total).
    FitChoice mixed;
    mixed.curves.push_back(fitSeconds(worked));
    return mixed;
  }
  const auto pts = usable(points, source);
  std::set<std::int64_t> ks;
  for (const FitPoint& p : pts)
    ks.insert(p.k);
  FitChoice choice;
  double bestErr = std::numeric_limits<double>::infinity();
  for (const FitForm form : {FitForm::Affine, FitForm::Saturating, FitForm::LogLog}) {
    Curve c = fitForm(form, pts);
    finish(c, pts);
    if (ks.size() >= 3) {
      double sum = 0;
      for (const std::int64_t held : ks) {
        std::vector<FitPoint> train, test;
        for (const FitPoint& p : pts)
          (p.k == held ? test : train).push_back(p);
        const Curve part = fitForm(form, train);
        for (const FitPoint& p : test)
          sum += std::abs(part.predict(p.x) - p.t) / p.t;
      }
      c.cv_rel_error = sum / static_cast<double>(pts.size());
    } else {
      c.cv_rel_error = relError(c, pts);
    }
    if (c.cv_rel_error < bestErr) {
      bestErr = c.cv_rel_error;
      choice.best = static_cast<int>(choice.curves.size());
    }
    choice.curves.push_back(std::move(c));
  }
  return choice;
}

LinkFit fitLink(const std::vector<FitPoint>& points, std::string_view source) {
  const auto pts = usable(points, source);
  const auto [a, b] = line(pts, false);
  LinkFit f;
  f.latency = a;
  f.bandwidth = b > 0 ? 1.0 / b : 0;
  f.points = static_cast<int>(pts.size());
  double sse = 0;
  for (const FitPoint& p : pts) {
    const double r = f.seconds(p.x) - p.t;
    f.residuals.push_back(r);
    sse += r * r;
    f.max_rel_error = std::max(f.max_rel_error, std::abs(r) / p.t);
  }
  f.rmse = std::sqrt(sse / static_cast<double>(pts.size()));
  return f;
}

namespace {

/// The pairs of `xy` whose residual from the median slope (of y / x) lies within Tukey's far-out
/// fences; `outliers` counts the others. Empty where no pair has x > 0.
std::vector<std::pair<double, double>> withoutOutliers(
    const std::vector<std::pair<double, double>>& xy, int& outliers) {
  std::vector<double> ratios;
  for (const auto& [x, y] : xy) {
    if (x > 0) ratios.push_back(y / x);
  }
  if (ratios.empty()) return {};
  const double guess = median(ratios);
  std::vector<double> spread;
  spread.reserve(xy.size());
  for (const auto& [x, y] : xy)
    spread.push_back(y - guess * x);
  const Fences far = tukeyFences(spread, 3);
  std::vector<std::pair<double, double>> kept;
  kept.reserve(xy.size());
  for (std::size_t i = 0; i < xy.size(); ++i) {
    if (spread[i] < far.below || spread[i] > far.above) {
      ++outliers;
    } else {
      kept.push_back(xy[i]);
    }
  }
  return kept;
}

void residualsOf(const std::vector<std::pair<double, double>>& kept, ProportionalFit& f) {
  f.points = static_cast<int>(kept.size());
  double sse = 0;
  for (const auto& [x, y] : kept) {
    const double r = f.intercept + f.slope * x - y;
    f.residuals.push_back(r);
    sse += r * r;
  }
  f.rmse = std::sqrt(sse / static_cast<double>(kept.size()));
}

}  // namespace

ProportionalFit fitProportional(const std::vector<std::pair<double, double>>& xy, double lo,
                                double hi) {
  ProportionalFit f;
  const auto kept = withoutOutliers(xy, f.outliers);
  double sxy = 0, sxx = 0;
  for (const auto& [x, y] : kept) {
    sxy += x * y;
    sxx += x * x;
  }
  if (sxx <= 0) return f;
  f.slope = std::clamp(sxy / sxx, lo, hi);
  residualsOf(kept, f);
  return f;
}

namespace {

/// Least squares `y = intercept + slope x` over `kept`, the slope clamped to [lo, hi].
void fitLineTo(const std::vector<std::pair<double, double>>& kept, double lo, double hi,
               ProportionalFit& f) {
  if (kept.empty()) return;
  const double n = static_cast<double>(kept.size());
  double mx = 0, my = 0;
  for (const auto& [x, y] : kept) {
    mx += x / n;
    my += y / n;
  }
  double sxy = 0, sxx = 0;
  for (const auto& [x, y] : kept) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) * (x - mx);
  }
  f.slope = std::clamp(sxx > 0 ? sxy / sxx : 0.0, lo, hi);
  f.intercept = my - f.slope * mx;
  residualsOf(kept, f);
}

}  // namespace

ProportionalFit fitBoundedLine(const std::vector<std::pair<double, double>>& xy, double lo,
                               double hi) {
  ProportionalFit f;
  if (xy.empty()) return f;
  std::vector<double> beyond;
  beyond.reserve(xy.size());
  for (const auto& [x, y] : xy)
    beyond.push_back(y - x);
  const double above = tukeyFences(beyond, 3).above;
  std::vector<std::pair<double, double>> kept;
  kept.reserve(xy.size());
  for (const auto& p : xy) {
    if (p.second - p.first > above) {
      ++f.outliers;
    } else {
      kept.push_back(p);
    }
  }
  fitLineTo(kept, lo, hi, f);
  return f;
}

LinearBytes workspaceLine(const std::vector<std::pair<std::int64_t, std::int64_t>>& recorded) {
  if (recorded.empty()) return {};
  // The least-excess line above the points has slope 0, a slope through the origin and a point,
  // or a slope through two points: a vertex of the region of lines above every point. With the
  // intercept the least that clears every point, the excess is convex in the slope, so the best
  // whole-byte slope is one of those slopes rounded down or up.
  std::vector<long double> slopes{0};
  const auto around = [&](std::int64_t n, std::int64_t d) {
    slopes.push_back(static_cast<long double>(n / d));
    if (n % d > 0) slopes.push_back(static_cast<long double>(n / d + 1));
  };
  for (const auto& [ki, wi] : recorded) {
    around(wi, ki);
    for (const auto& [kj, wj] : recorded) {
      if (kj > ki && wj > wi) around(wj - wi, kj - ki);
    }
  }
  // Beyond this a line is not a workspace any pool holds; the candidate is skipped (slope 0,
  // whose intercept is the largest value, always stays).
  constexpr long double kLimit = static_cast<long double>(std::int64_t{1} << 62);
  LinearBytes best;
  long double bestExcess = -1;
  for (const long double b : slopes) {
    long double a = 0;
    bool fits = true;
    for (const auto& [k, w] : recorded) {
      const long double rise = b * static_cast<long double>(k);
      if (rise > kLimit) fits = false;
      a = std::max(a, static_cast<long double>(w) - rise);
    }
    if (!fits) continue;
    long double excess = 0;
    for (const auto& [k, w] : recorded)
      excess += a + b * static_cast<long double>(k) - static_cast<long double>(w);
    const LinearBytes line{static_cast<std::int64_t>(a), static_cast<std::int64_t>(b)};
    if (bestExcess < 0 || excess < bestExcess ||
        (excess == bestExcess && line.per_sample > best.per_sample)) {
      best = line;
      bestExcess = excess;
    }
  }
  return best;
}

}  // namespace swapscope::perf
