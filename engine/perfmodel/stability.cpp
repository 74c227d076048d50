// SPDX-License-Identifier: MIT
#include "perfmodel/stability.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/error.h"
#include "common/format.h"
#include "common/stats.h"
#include "graph/json_guard.h"
#include "perfmodel/model.h"

namespace swapscope::perf {

using json = nlohmann::json;

ProfileStability measureStability(const store::RunData& run, const PerfModel* model) {
  std::map<std::int64_t, std::vector<double>> times;  // per k, in ns
  for (const store::IterationRow& it : run.iterations)
    times[it.k].push_back(static_cast<double>(it.duration_ns));
  ProfileStability s;
  for (const auto& [k, v] : times) {
    KStability ks;
    ks.k = k;
    ks.iterations = static_cast<int>(v.size());
    const double mid = median(v);
    ks.median_ns = static_cast<std::int64_t>(mid);
    ks.spread = mid > 0 ? (quantile(v, 0.9) - quantile(v, 0.1)) / mid : 0;
    if (s.per_k.empty() || ks.spread > s.largest) {
      s.largest = ks.spread;
      s.worst_k = k;
    }
    s.per_k.push_back(ks);
  }
  // One iteration has no spread: such a k says nothing either way (-1: no k had two).
  std::vector<double> spreads;
  for (const KStability& k : s.per_k) {
    if (k.iterations >= 2) spreads.push_back(k.spread);
  }
  s.spread = spreads.empty() ? -1 : median(spreads);
  if (model && model->contention().present) {
    const ContentionFit& c = model->contention();
    s.preempted_compute = c.slowdown.outliers;
    s.preempted_waits = c.start_block.outliers + c.copy_start_block.outliers;
  }
  return s;
}

std::string stabilityToMeta(const ProfileStability& s) {
  json perK = json::array();
  for (const KStability& k : s.per_k) {
    perK.push_back({{"k", k.k},
                    {"iterations", k.iterations},
                    {"median_ns", k.median_ns},
                    {"spread", k.spread}});
  }
  return json{{"spread", s.spread},
              {"largest", s.largest},
              {"worst_k", s.worst_k},
              {"threshold", kUnsteadySpread},
              {"preempted_compute", s.preempted_compute},
              {"preempted_waits", s.preempted_waits},
              {"per_k", perK}}
      .dump();
}

std::optional<ProfileStability> readStability(const store::RunData& run) {
  const auto at = run.meta.extra.find("stability");
  if (at == run.meta.extra.end()) return std::nullopt;
  // Checked on the text, before the parser allocates a level per bracket.
  const json j = jsonTooDeepAt(at->second) ? json() : json::parse(at->second, nullptr, false);
  const std::string bad =
      "'" + run.path + "' is damaged: meta 'stability' is not the stability of a profile";
  if (!j.is_object()) throwBadInput(bad + " (not a JSON object)");
  try {
    ProfileStability s;
    s.spread = j.at("spread").get<double>();
    s.largest = j.at("largest").get<double>();
    s.worst_k = j.at("worst_k").get<std::int64_t>();
    s.preempted_compute = j.at("preempted_compute").get<int>();
    s.preempted_waits = j.at("preempted_waits").get<int>();
    for (const json& k : j.at("per_k")) {
      s.per_k.push_back({k.at("k").get<std::int64_t>(), k.at("iterations").get<int>(),
                         k.at("median_ns").get<std::int64_t>(), k.at("spread").get<double>()});
    }
    // Spreads are from 0 to 1e9; -1 says that no k recorded two iterations, and only then.
    // (A spread is a ratio of iteration times: one beyond 1e9 is no measurement.)
    const auto spreadOk = [](double v) { return std::isfinite(v) && v >= 0 && v <= 1e9; };
    bool twoAtAnyK = false;
    for (const KStability& k : s.per_k) {
      if (!spreadOk(k.spread))
        throwBadInput(bad + " (k " + std::to_string(k.k) + "'s spread is " + numberText(k.spread) +
                      ")");
      twoAtAnyK = twoAtAnyK || k.iterations >= 2;
    }
    if (!(spreadOk(s.spread) || (s.spread == -1 && !twoAtAnyK))) {
      throwBadInput(
          bad + " (its spread is " + numberText(s.spread) +
          (s.spread == -1 ? ", 'not measured', but a k recorded two iterations or more" : "") +
          ")");
    }
    if (!spreadOk(s.largest))
      throwBadInput(bad + " (its largest spread is " + numberText(s.largest) + ")");
    return s;
  } catch (const json::exception& e) {
    throwBadInput(bad + " (" + e.what() + ")");
  }
}

std::string describeStability(const ProfileStability& s) {
  if (s.spread < 0) return "not measurable: one recorded iteration per k (--iters 2 or more)";
  std::string text = "iterations spread " + formatFixed(100 * s.spread, 1) +
                     " % ((p90 - p10) / median at each k, the median over k; " +
                     formatFixed(100 * s.largest, 1) + " % at k = " + std::to_string(s.worst_k) +
                     ")";
  if (s.preempted_compute >= 0) {
    text += ", " + std::to_string(s.preempted_compute) + " compute and " +
            std::to_string(s.preempted_waits) + " start-wait samples left out as preempted";
  }
  return text;
}

std::string stabilityWarning(const ProfileStability& s) {
  if (!s.unsteady()) return "";
  // Enough decimals that a spread just beyond the threshold does not print as the threshold.
  int decimals = 0;
  while (decimals < 3 &&
         formatFixed(100 * s.spread, decimals) == formatFixed(100 * kUnsteadySpread, decimals))
    ++decimals;
  return "the machine was busy while it was profiled: its iteration times spread " +
         formatFixed(100 * s.spread, decimals) +
         " % ((p90 - p10) / median at each k, the median over its minibatches), beyond the " +
         formatFixed(100 * kUnsteadySpread, 0) +
         " % of a quiet machine, so predictions from it may be far off; profile again while "
         "nothing else runs";
}

std::string unfinishedProfileWarning(const store::RunMeta& m) {
  const std::string why = m.status_message.empty() ? "" : " (" + m.status_message + ")";
  const std::string tail = ", which may be too little for a plan to rest on";
  switch (m.status) {
    case store::RunStatus::Complete:
      return "";
    case store::RunStatus::Running:
      return "the profile is still running" + why +
             ": the model is fitted to what it has recorded so far" + tail;
    case store::RunStatus::Failed:
      return "the profile failed" + why + ": the model is fitted to what it recorded before then" +
             tail;
    case store::RunStatus::Incomplete:
      break;
  }
  return "the profile is incomplete" + why +
         ": the model is fitted to what it recorded before it stopped" + tail;
}

std::string notAProfileWarning(const store::RunData& d) {
  if (d.meta.kind == "profile") return "";
  std::set<std::int64_t> ks;
  for (const store::BatchRow& b : d.batches)
    ks.insert(b.k);
  std::string list;
  for (const std::int64_t k : ks)
    list += (list.empty() ? "" : ", ") + std::to_string(k);
  return "it is a '" + d.meta.kind + "' database, not a profile: the model is fitted to the " +
         (ks.size() == 1 ? "one minibatch" : "minibatches") +
         " it ran (k = " + (list.empty() ? "none" : list) +
         "), so the times at other k are extrapolated; plans rest on a profile (swapscope "
         "profile), which runs five minibatch sizes";
}

}  // namespace swapscope::perf
