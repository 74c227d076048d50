// SPDX-License-Identifier: MIT
#include "perfmodel/model.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "common/error.h"
#include "common/stats.h"

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

std::string key(const std::string& scope, const std::string& target, StepKind kind) {
  return scope + "/" + target + "/" + std::string(stepKindName(kind));
}

}  // namespace

PerfModel PerfModel::fit(const store::RunData& run) {
  if (run.iterations.empty() || run.samples.empty()) {
    throwBadInput("'" + run.path + "' holds no recorded iterations to fit a model to");
  }
  PerfModel m;
  m.m_hash = run.network.structure_hash;
  m.m_device = run.meta.device;
  m.m_minK = run.iterations.front().k;
  for (const auto& it : run.iterations) {
    m.m_minK = std::min(m.m_minK, it.k);
    m.m_maxK = std::max(m.m_maxK, it.k);
  }

  // Layer costs from the stored rows (the stored network may differ from any zoo model).
  std::vector<LayerCost> costs(run.layers.size());
  for (const auto& l : run.layers) {
    LayerCost& c = costs.at(static_cast<std::size_t>(l.id));
    c.params = l.params;
    c.fwd_flops = l.fwd_flops;
    c.bwd_data_flops = l.bwd_data_flops;
    c.bwd_weight_flops = l.bwd_weight_flops;
    c.fm = l.fm;
  }

  // The median time per layer, direction and k over the recorded iterations.
  std::map<std::tuple<int, StepKind, std::int64_t>, std::vector<double>> times;
  for (const auto& s : run.samples) {
    if (s.layer < 0 || static_cast<std::size_t>(s.layer) >= costs.size()) continue;
    times[{s.layer, kindOf(s.direction), s.k}].push_back(static_cast<double>(s.time_ns) * 1e-9);
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
         {std::pair<std::string, std::string>{"type", type}, {"layer", row.name}}) {
      const std::string kk = key(scope, target, kind);
      points[kk].push_back(p);
      meta[kk] = {scope, target, kind, bytesAxis, {}};
    }
  }
  for (auto& [kk, pts] : points) {
    GroupFit g = meta[kk];
    bool any = false;
    for (const auto& p : pts)
      any = any || (p.x > 0 && p.t > 0);
    if (!any) continue;
    g.fit = fitBest(pts, "'" + run.path + "': the samples of " + kk);
    m.m_index[kk] = m.m_groups.size();
    m.m_groups.push_back(std::move(g));
  }

  // PCIe: swaps and loads per direction. A transfer that overlapped one in the other direction
  // is kept apart to measure the duplex factor.
  std::vector<const store::TransferRow*> copies;
  for (const auto& t : run.transfers) {
    if (t.kind != store::TransferKind::Readback && t.bytes > 0) copies.push_back(&t);
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
  std::vector<FitPoint> alone[2], both[2];
  for (const auto* t : copies) {
    const FitPoint p{static_cast<double>(t->bytes),
                     static_cast<double>(t->end_ns - t->start_ns) * 1e-9, t->k};
    (overlapsOther(*t) ? both : alone)[t->to_host ? 1 : 0].push_back(p);
  }
  bool fittedAlone[2] = {false, false};
  for (int d = 0; d < 2; ++d) {
    fittedAlone[d] = alone[d].size() >= 2;
    const auto& fitPts = fittedAlone[d] ? alone[d] : both[d];
    if (fitPts.empty()) continue;
    (d ? m.m_d2h : m.m_h2d) =
        fitLink(fitPts, "'" + run.path + "': the " + (d ? "device-to-host" : "host-to-device") +
                            " copies in table transfers");
  }
  std::vector<double> ratios;
  for (int d = 0; d < 2; ++d) {
    if (!fittedAlone[d]) continue;
    const LinkFit& f = d ? m.m_d2h : m.m_h2d;
    for (const FitPoint& p : both[d]) {
      const double pred = f.seconds(p.x);
      if (pred > 0) ratios.push_back(p.t / pred);
    }
  }
  m.m_duplex = ratios.empty() ? 1.0 : std::max(1.0, median(ratios));
  return m;
}

const GroupFit* PerfModel::find(const std::string& scope, const std::string& target,
                                StepKind kind) const {
  const auto it = m_index.find(key(scope, target, kind));
  return it == m_index.end() ? nullptr : &m_groups[it->second];
}

const GroupFit* PerfModel::resolve(const Network& net, bool same, int layer, StepKind kind,
                                   bool bytesAxis, bool& transferred) const {
  transferred = false;
  const GroupFit* g = same ? find("layer", net.layer(layer).name, kind) : nullptr;
  if (!g) {
    const std::string type =
        std::string(layerKindName(net.layer(layer).kind)) + (bytesAxis ? "@bytes" : "");
    g = find("type", type, kind);
    transferred = !same;
  }
  return g;
}

namespace {

Estimate predictStep(const Curve* curve, bool transferred, const LayerCost& c, StepKind kind,
                     std::int64_t k) {
  Estimate e;
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

double PerfModel::transfer(std::int64_t bytes, bool to_host) const {
  return bytes > 0 ? link(to_host).seconds(static_cast<double>(bytes)) : 0.0;
}

std::vector<store::FitRow> PerfModel::fitRows() const {
  std::vector<store::FitRow> rows;
  for (const GroupFit& g : m_groups) {
    for (std::size_t i = 0; i < g.fit.curves.size(); ++i) {
      const Curve& c = g.fit.curves[i];
      rows.push_back({0, g.scope, g.target, std::string(stepKindName(g.kind)),
                      std::string(fitFormName(c.form)), c.paramsJson(), c.points, c.rmse,
                      c.max_rel_error, static_cast<int>(i) == g.fit.best});
    }
  }
  for (const bool toHost : {false, true}) {
    const LinkFit& f = link(toHost);
    const std::string params = "{\"latency_s\":" + std::to_string(f.latency) +
                               ",\"bytes_per_s\":" + std::to_string(f.bandwidth) +
                               ",\"duplex_factor\":" + std::to_string(m_duplex) + "}";
    rows.push_back({0, "pcie", toHost ? "d2h" : "h2d", toHost ? "d2h" : "h2d", "affine", params,
                    f.points, f.rmse, f.max_rel_error, true});
  }
  return rows;
}

}  // namespace swapscope::perf
