// SPDX-License-Identifier: MIT
#include "views/model_data.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "common/stats.h"

namespace swapscope {
namespace {

perf::StepKind kindOf(store::Direction d) {
  switch (d) {
    case store::Direction::Forward:
      return perf::StepKind::Forward;
    case store::Direction::Backward:
      return perf::StepKind::Backward;
    case store::Direction::Update:
      return perf::StepKind::Update;
  }
  return perf::StepKind::Forward;
}

const char* kindWord(perf::StepKind k) {
  switch (k) {
    case perf::StepKind::Forward:
      return "forward";
    case perf::StepKind::Backward:
      return "backward";
    case perf::StepKind::Update:
      return "update";
  }
  return "?";
}

constexpr int kGridPoints = 80;

}  // namespace

std::string modelGroupKey(const std::string& scope, const std::string& target,
                          perf::StepKind kind) {
  return scope + "/" + target + "/" + std::string(perf::stepKindName(kind));
}

int ModelData::groupIndex(const std::string& key) const {
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (groups[i].key == key) return static_cast<int>(i);
  }
  return -1;
}

ModelData makeModelData(const store::RunData& run, const perf::PerfModel& model) {
  ModelData d;
  d.device = model.device();
  d.network = run.network.name;
  d.path = run.path;
  d.duplex_factor = model.duplexFactor();
  d.duplex_points = model.duplexPoints();
  d.structure_hash = run.network.structure_hash;
  d.layer_names.resize(run.layers.size());
  d.layer_kinds.resize(run.layers.size());

  // Layer costs from the stored rows, as the fit takes them.
  std::vector<LayerCost> costs(run.layers.size());
  std::vector<const store::LayerRow*> rows(run.layers.size(), nullptr);
  for (const store::LayerRow& l : run.layers) {
    if (l.id < 0 || static_cast<std::size_t>(l.id) >= costs.size()) continue;
    rows[static_cast<std::size_t>(l.id)] = &l;
    d.layer_names[static_cast<std::size_t>(l.id)] = l.name;
    d.layer_kinds[static_cast<std::size_t>(l.id)] = l.kind;
    LayerCost& c = costs[static_cast<std::size_t>(l.id)];
    c.params = l.params;
    c.fwd_flops = l.fwd_flops;
    c.bwd_data_flops = l.bwd_data_flops;
    c.bwd_weight_flops = l.bwd_weight_flops;
    c.fm = l.fm;
  }
  std::map<std::tuple<int, perf::StepKind, std::int64_t>, std::vector<double>> times;
  for (const store::SampleRow& s : run.samples) {
    if (s.layer < 0 || static_cast<std::size_t>(s.layer) >= costs.size()) continue;
    // As the engine fits them: less what the copies beside a step added.
    times[{s.layer, kindOf(s.direction), s.k}].push_back(model.fittedSeconds(s));
  }
  std::map<std::string, std::vector<MeasuredPoint>> points;
  for (const auto& [id, ts] : times) {
    const auto& [layer, kind, k] = id;
    bool bytesAxis = false;
    const double x = perf::stepWork(costs[static_cast<std::size_t>(layer)], kind, k, bytesAxis);
    const MeasuredPoint p{
        .x = x, .t = median(ts), .k = k, .layer = layer, .samples = static_cast<int>(ts.size())};
    const store::LayerRow* row = rows[static_cast<std::size_t>(layer)];
    if (!row) continue;
    points[modelGroupKey("type", row->kind + (bytesAxis ? "@bytes" : ""), kind)].push_back(p);
    points[modelGroupKey("layer", row->name, kind)].push_back(p);
  }

  for (const store::FitScope scope : {store::FitScope::Type, store::FitScope::Layer}) {
    std::vector<ModelGroupData> scoped;
    for (const perf::GroupFit& g : model.groups()) {
      if (g.scope != scope) continue;
      ModelGroupData m;
      m.scope = store::fitScopeName(g.scope);
      m.target = g.target;
      m.kind = g.kind;
      m.bytes_axis = g.bytes_axis;
      m.key = modelGroupKey(m.scope, g.target, g.kind);
      m.label = g.target + ", " + kindWord(g.kind) +
                (scope == store::FitScope::Type ? " (per type)" : " (layer)");
      m.curves = g.fit.curves;
      m.best = g.fit.best;
      const auto it = points.find(m.key);
      if (it != points.end()) m.points = it->second;
      double lo = 0, hi = 0;
      for (const MeasuredPoint& p : m.points) {
        if (p.x <= 0) continue;
        lo = lo > 0 ? std::min(lo, p.x) : p.x;
        hi = std::max(hi, p.x);
      }
      if (lo > 0) {
        const double a = std::log(lo / 1.5), b = std::log(hi * 1.5);
        for (int i = 0; i < kGridPoints; ++i)
          m.grid_x.push_back(std::exp(a + (b - a) * i / (kGridPoints - 1)));
      }
      for (const perf::Curve& c : m.curves) {
        std::vector<double> t;
        t.reserve(m.grid_x.size());
        for (const double x : m.grid_x)
          t.push_back(c.predict(x));
        m.grid_t.push_back(std::move(t));
      }
      scoped.push_back(std::move(m));
    }
    std::sort(scoped.begin(), scoped.end(),
              [](const ModelGroupData& a, const ModelGroupData& b) { return a.key < b.key; });
    for (ModelGroupData& m : scoped)
      d.groups.push_back(std::move(m));
  }

  // PCIe: which copies ran while the other direction was busy in the same iteration.
  std::map<std::tuple<std::int64_t, int, bool>, std::vector<std::pair<std::int64_t, std::int64_t>>>
      busy;
  std::vector<const store::TransferRow*> copies;
  for (const store::TransferRow& t : run.transfers) {
    if (t.kind == store::TransferKind::Readback || t.bytes <= 0) continue;
    copies.push_back(&t);
    busy[{t.k, t.iteration, t.to_host}].emplace_back(t.start_ns, t.end_ns);
  }
  for (auto& [id, v] : busy)
    std::sort(v.begin(), v.end());
  d.h2d.to_host = false;
  d.d2h.to_host = true;
  d.h2d.fit = model.link(false);
  d.d2h.fit = model.link(true);
  for (const store::TransferRow* t : copies) {
    bool overlapped = false;
    const auto it = busy.find({t->k, t->iteration, !t->to_host});
    if (it != busy.end()) {
      for (const auto& [s, e] : it->second) {
        if (s >= t->end_ns) break;
        if (e > t->start_ns) {
          overlapped = true;
          break;
        }
      }
    }
    (t->to_host ? d.d2h : d.h2d)
        .transfers.push_back({.bytes = static_cast<double>(t->bytes),
                              .seconds = static_cast<double>(t->end_ns - t->start_ns) * 1e-9,
                              .k = t->k,
                              .overlapped = overlapped});
  }
  return d;
}

}  // namespace swapscope
