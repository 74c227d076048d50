// SPDX-License-Identifier: MIT
#include "analysis/gmap.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/error.h"

namespace swapscope {

std::string_view bufferKindName(BufferKind kind) {
  switch (kind) {
    case BufferKind::Weights:
      return "weights";
    case BufferKind::WeightGrad:
      return "weight_grad";
    case BufferKind::Momentum:
      return "momentum";
    case BufferKind::RunningStats:
      return "running_stats";
    case BufferKind::Labels:
      return "labels";
    case BufferKind::FeatureMap:
      return "fm";
    case BufferKind::FmGrad:
      return "fm_grad";
    case BufferKind::Saved:
      return "saved";
    case BufferKind::LossValue:
      return "loss";
    case BufferKind::Workspace:
      return "workspace";
  }
  return "?";
}

std::string_view gmapOpKindName(GmapOpKind kind) {
  switch (kind) {
    case GmapOpKind::Allocate:
      return "allocate";
    case GmapOpKind::Release:
      return "release";
    case GmapOpKind::Offload:
      return "offload";
    case GmapOpKind::Prefetch:
      return "prefetch";
    case GmapOpKind::Compute:
      return "compute";
    case GmapOpKind::Recompute:
      return "recompute";
  }
  return "?";
}

namespace {

class GmapBuilder {
 public:
  GmapBuilder(const Network& net, const std::vector<LayerCost>& costs, const SwapSet& swapped,
              const RecomputeSet& recomputed, const std::vector<LinearBytes>* workspace)
      : m_net(net), m_costs(costs), m_workspace(workspace) {
    m_gmap.swapped = swapped;
    m_gmap.recomputed = recomputed;
  }

  Gmap build() {
    const int n = m_net.size();
    if (static_cast<int>(m_costs.size()) != n || static_cast<int>(m_gmap.swapped.size()) != n ||
        static_cast<int>(m_gmap.recomputed.size()) != n) {
      throwBadInput(
          "GMAP: the costs, the swap set and the recompute set must have one entry per layer");
    }
    for (int i = 0; i < n; ++i) {
      if (i != m_net.inputLayer()) m_compute.push_back(i);
    }
    const int steps = 2 * static_cast<int>(m_compute.size());
    m_gmap.forward_steps = static_cast<int>(m_compute.size());
    if (m_workspace && static_cast<int>(m_workspace->size()) != steps + 2) {
      throwBadInput("GMAP: the workspace table needs one entry per step 0.." +
                    std::to_string(steps + 1));
    }
    m_fwdStep.assign(n, 0);
    for (int s = 0; s < m_gmap.forward_steps; ++s)
      m_fwdStep[m_compute[s]] = s + 1;
    m_gmap.step_layer.assign(steps + 2, -1);
    for (int s = 1; s <= steps; ++s)
      m_gmap.step_layer[s] = m_compute[stepIndex(s)];
    m_gmap.step_touches.assign(steps + 2, {});
    planLifetimes();
    createBuffers();

    setup();
    for (int s = 1; s <= m_gmap.forward_steps; ++s)
      forwardStep(s);
    for (int s = m_gmap.forward_steps + 1; s <= steps; ++s)
      backwardStep(s);
    teardown(steps + 1);
    return std::move(m_gmap);
  }

 private:
  int stepIndex(int step) const {
    const int fwd = m_gmap.forward_steps;
    return step <= fwd ? step - 1 : 2 * fwd - step;
  }
  int backwardStepOf(int layer) const { return 2 * m_gmap.forward_steps + 1 - m_fwdStep[layer]; }
  bool swapped(int layer) const { return m_gmap.swapped[layer]; }
  bool recomputed(int layer) const { return m_gmap.recomputed[layer]; }

  /// For every FM: the last forward step that reads it and the backward steps that read it.
  void planLifetimes() {
    const int n = m_net.size();
    m_lastFwd.assign(n, 0);
    m_firstBwd.assign(n, 0);
    m_lastBwd.assign(n, 0);
    auto noteBackwardRead = [&](int fm, int step) {
      m_firstBwd[fm] = m_firstBwd[fm] == 0 ? step : std::min(m_firstBwd[fm], step);
      m_lastBwd[fm] = std::max(m_lastBwd[fm], step);
    };
    for (int i = 0; i < n; ++i) {
      for (int c : m_net.consumersOf(i))
        m_lastFwd[i] = std::max(m_lastFwd[i], m_fwdStep[c]);
      if (m_costs[i].reads.output) noteBackwardRead(i, backwardStepOf(i));
      if (m_costs[i].reads.inputs) {
        for (int src : m_net.inputsOf(i))
          noteBackwardRead(src, backwardStepOf(i));
      }
    }
    const int steps = m_gmap.steps();
    planRecompute();
    m_prefetchAt.assign(steps + 2, {});
    m_lastReadAt.assign(steps + 2, {});
    for (int i = 0; i < n; ++i) {
      if (swapped(i) && m_firstBwd[i] == 0) {
        throwBadInput("GMAP: the feature map of '" + m_net.layer(i).name +
                      "' is not read by any backward step and cannot be swapped");
      }
      if (swapped(i)) m_prefetchAt[m_firstBwd[i]].push_back(i);
      if (m_lastBwd[i] > 0) m_lastReadAt[m_lastBwd[i]].push_back(i);
    }
  }

  /// Where each recomputed FM is re-made: the first backward step that reads it, or earlier where
  /// a recomputed descendant needs it. Its sources (the nearest FMs that backward steps read: kept,
  /// prefetched or recomputed themselves) must be resident then, so their backward lifetimes
  /// are extended to that step; the FMs between (released in forward) are re-made with it and
  /// released once the step's re-makes are done where that moves no peak (backwardStep), else
  /// at the end of the step. Descendants first (layer ids are topological), so that a
  /// source's step is final before the source itself is planned.
  void planRecompute() {
    const int n = m_net.size();
    const int steps = m_gmap.steps();
    m_remakeAt.assign(steps + 2, {});
    m_transientAt.assign(steps + 2, {});
    const std::vector<bool> backwardRead = [&] {
      std::vector<bool> r(n, false);
      for (int i = 0; i < n; ++i)
        r[i] = m_firstBwd[i] != 0;
      return r;
    }();
    for (int x = n - 1; x >= 0; --x) {
      if (!recomputed(x)) continue;
      const std::string fm = "GMAP: the feature map of '" + m_net.layer(x).name + "'";
      if (swapped(x)) throwBadInput(fm + " cannot be both swapped and recomputed");
      if (!backwardRead[x]) {
        throwBadInput(fm + " is not read by any backward step and cannot be recomputed");
      }
      if (m_lastFwd[x] == 0) {
        throwBadInput(fm + " has no forward reader, so recomputing it saves nothing");
      }
      const int r = m_firstBwd[x];
      std::vector<int> chain;  // layers to run again at r, topological
      std::vector<bool> inChain(n, false);
      auto visit = [&](auto&& self, int layer) -> void {
        if (!isLightLayer(m_net.layer(layer).kind)) {
          throwBadInput(fm + " cannot be recomputed: '" + m_net.layer(layer).name + "' (" +
                        std::string(layerKindName(m_net.layer(layer).kind)) +
                        ") would run again, and only light layers are recomputed");
        }
        for (int src : uniqueInputs(layer)) {
          if (backwardRead[src]) {  // a source: resident at r
            m_firstBwd[src] = std::min(m_firstBwd[src], r);
            m_lastBwd[src] = std::max(m_lastBwd[src], r);
          } else if (!inChain[src]) {
            if (src == m_net.inputLayer()) {
              throwBadInput(fm + " cannot be recomputed: it needs the minibatch, which no " +
                            "backward step keeps");
            }
            self(self, src);
          }
        }
        inChain[layer] = true;
        chain.push_back(layer);
      };
      visit(visit, x);
      for (int layer : chain) {
        auto& at = m_remakeAt[r];
        if (std::find(at.begin(), at.end(), layer) == at.end()) at.push_back(layer);
        if (layer != x) {
          auto& t = m_transientAt[r];
          if (std::find(t.begin(), t.end(), layer) == t.end()) t.push_back(layer);
        }
      }
    }
    for (auto& at : m_remakeAt)
      std::sort(at.begin(), at.end());
  }

  int addBuffer(std::string name, BufferKind kind, int layer, LinearBytes size) {
    m_gmap.buffers.push_back({std::move(name), kind, layer, size});
    return static_cast<int>(m_gmap.buffers.size()) - 1;
  }

  void createBuffers() {
    const int n = m_net.size();
    m_fm.assign(n, -1);
    m_grad.assign(n, -1);
    m_saved.assign(n, -1);
    for (int i = 0; i < n; ++i) {
      const Layer& l = m_net.layer(i);
      const LayerCost& c = m_costs[i];
      if (c.params > 0) {
        const LinearBytes bytes{c.params * kFloatBytes, 0};
        m_persistent.push_back(addBuffer(l.name + ".weights", BufferKind::Weights, i, bytes));
        m_persistent.push_back(
            addBuffer(l.name + ".weight_grad", BufferKind::WeightGrad, i, bytes));
        m_persistent.push_back(addBuffer(l.name + ".momentum", BufferKind::Momentum, i, bytes));
      }
      if (c.running_stats > 0) {
        m_persistent.push_back(addBuffer(l.name + ".running_stats", BufferKind::RunningStats, i,
                                         {c.running_stats * kFloatBytes, 0}));
      }
      const bool isLoss = l.kind == LayerKind::SoftmaxCrossEntropy;
      m_fm[i] = addBuffer(l.name, isLoss ? BufferKind::LossValue : BufferKind::FeatureMap, i, c.fm);
      if (c.needs_grad && !isLoss) {
        m_grad[i] = addBuffer(l.name + ".grad", BufferKind::FmGrad, i, c.fm);
      }
      if (c.backward_active && c.reads.saved != LinearBytes{}) {
        m_saved[i] = addBuffer(l.name + ".saved", BufferKind::Saved, i, c.reads.saved);
      }
    }
    m_labels = addBuffer("labels", BufferKind::Labels, -1, {0, kLabelBytes});
    if (m_workspace) {
      m_ws.assign(m_workspace->size(), -1);
      for (std::size_t s = 0; s < m_workspace->size(); ++s) {
        if ((*m_workspace)[s] == LinearBytes{}) continue;
        if (s == 0 || s + 1 == m_workspace->size()) {
          throwBadInput("GMAP: setup and teardown cannot have a workspace");
        }
        const int layer = m_gmap.step_layer[s];
        m_ws[s] =
            addBuffer("step" + std::to_string(s) + "." + m_net.layer(layer).name + ".workspace",
                      BufferKind::Workspace, layer, (*m_workspace)[s]);
      }
    }
  }

  void op(GmapOpKind kind, int step, int buffer) { m_gmap.ops.push_back({kind, step, buffer}); }
  void touch(int step, int buffer) {
    auto& t = m_gmap.step_touches[step];
    if (buffer >= 0 && std::find(t.begin(), t.end(), buffer) == t.end()) t.push_back(buffer);
  }
  int workspaceOf(int step) const { return m_ws.empty() ? -1 : m_ws[step]; }

  void setup() {
    for (int b : m_persistent)
      op(GmapOpKind::Allocate, 0, b);
  }

  void teardown(int step) {
    for (int b : m_persistent)
      op(GmapOpKind::Release, step, b);
  }

  void forwardStep(int s) {
    const int layer = m_compute[stepIndex(s)];
    const LayerCost& c = m_costs[layer];
    if (s == 1) {
      // The minibatch arrives from host memory like a prefetch (Algorithm 1's t_ready[1]).
      const int data = m_fm[m_net.inputLayer()];
      op(GmapOpKind::Allocate, s, data);
      op(GmapOpKind::Prefetch, s, data);
      op(GmapOpKind::Allocate, s, m_labels);
      op(GmapOpKind::Prefetch, s, m_labels);
    }
    op(GmapOpKind::Allocate, s, m_fm[layer]);
    if (m_saved[layer] >= 0) op(GmapOpKind::Allocate, s, m_saved[layer]);
    const int ws = workspaceOf(s);
    if (ws >= 0) op(GmapOpKind::Allocate, s, ws);

    op(GmapOpKind::Compute, s, -1);
    for (int src : m_net.inputsOf(layer))
      touch(s, m_fm[src]);
    touch(s, m_fm[layer]);
    touch(s, m_saved[layer]);
    if (m_net.layer(layer).kind == LayerKind::SoftmaxCrossEntropy) touch(s, m_labels);

    if (ws >= 0) op(GmapOpKind::Release, s, ws);
    // The minibatch needs no offload: its host copy is where it came from.
    if (swapped(layer)) op(GmapOpKind::Offload, s, m_fm[layer]);
    if (c.fm.per_sample == 0 && m_net.consumersOf(layer).empty()) {
      op(GmapOpKind::Release, s, m_fm[layer]);  // the loss value, read back by the host
    }
    for (int src : uniqueInputs(layer)) {
      if (m_lastFwd[src] != s) continue;
      if (m_firstBwd[src] == 0 || swapped(src) || recomputed(src)) {
        op(GmapOpKind::Release, s, m_fm[src]);
      }
    }
  }

  void backwardStep(int s) {
    const int layer = m_compute[stepIndex(s)];
    const LayerCost& c = m_costs[layer];
    for (int i : m_prefetchAt[s]) {
      op(GmapOpKind::Allocate, s, m_fm[i]);
      op(GmapOpKind::Prefetch, s, m_fm[i]);
    }
    // Recomputed FMs and the FMs between them and their sources, in topological order.
    for (int r : m_remakeAt[s])
      op(GmapOpKind::Allocate, s, m_fm[r]);
    for (int r : m_remakeAt[s]) {
      op(GmapOpKind::Recompute, s, m_fm[r]);
      for (int src : m_net.inputsOf(r))
        touch(s, m_fm[src]);
      touch(s, m_fm[r]);
      touch(s, m_saved[r]);
    }
    // The input gradients the step writes first, and its workspace: allocated for the compute.
    std::vector<int> allocatedAfter;
    if (c.backward_active) {
      for (int src : uniqueInputs(layer)) {
        if (m_grad[src] >= 0 && !m_gradAllocated[src]) {
          allocatedAfter.push_back(m_grad[src]);
          m_gradAllocated[src] = true;
        }
      }
    }
    const int ws = workspaceOf(s);
    if (ws >= 0) allocatedAfter.push_back(ws);
    // The FMs re-made only to re-make another (no backward step reads them) go once the
    // recomputes are done, before the compute, where what the step allocates after them is at
    // least as large at every k: the step's most bytes are then still those at its compute,
    // which the memory curve counts. Else they go after the compute, as the others.
    const bool transientsEarly = [&] {
      if (m_transientAt[s].empty()) return false;
      LinearBytes freed, taken;
      for (int t : m_transientAt[s])
        freed += m_gmap.buffers[m_fm[t]].size;
      for (int b : allocatedAfter)
        taken += m_gmap.buffers[b].size;
      return taken.fixed >= freed.fixed && taken.per_sample >= freed.per_sample;
    }();
    if (transientsEarly) {
      // Nor are they the step's (its compute's) then: only their re-makes read and write them.
      auto& touched = m_gmap.step_touches[s];
      for (int t : m_transientAt[s]) {
        op(GmapOpKind::Release, s, m_fm[t]);
        touched.erase(std::remove(touched.begin(), touched.end(), m_fm[t]), touched.end());
      }
    }
    for (int b : allocatedAfter)
      op(GmapOpKind::Allocate, s, b);

    op(GmapOpKind::Compute, s, -1);
    const bool isLoss = m_net.layer(layer).kind == LayerKind::SoftmaxCrossEntropy;
    if (c.backward_active) {
      touch(s, m_grad[layer]);
      for (int src : m_net.inputsOf(layer)) {
        touch(s, m_grad[src]);
        if (c.reads.inputs) touch(s, m_fm[src]);
      }
      if (c.reads.output) touch(s, m_fm[layer]);
      touch(s, m_saved[layer]);
      if (isLoss) touch(s, m_labels);
    }

    if (ws >= 0) op(GmapOpKind::Release, s, ws);
    if (m_grad[layer] >= 0) op(GmapOpKind::Release, s, m_grad[layer]);
    if (m_saved[layer] >= 0) op(GmapOpKind::Release, s, m_saved[layer]);
    for (int i : m_lastReadAt[s])
      op(GmapOpKind::Release, s, m_fm[i]);
    if (!transientsEarly) {
      for (int t : m_transientAt[s])
        op(GmapOpKind::Release, s, m_fm[t]);
    }
    if (isLoss) op(GmapOpKind::Release, s, m_labels);
  }

  std::vector<int> uniqueInputs(int layer) const {
    std::vector<int> in = m_net.inputsOf(layer);
    std::sort(in.begin(), in.end());
    in.erase(std::unique(in.begin(), in.end()), in.end());
    return in;
  }

  const Network& m_net;
  const std::vector<LayerCost>& m_costs;
  const std::vector<LinearBytes>* m_workspace;
  Gmap m_gmap;
  std::vector<int> m_compute;  // layer id of forward step s at index s-1
  std::vector<int> m_fwdStep, m_lastFwd, m_firstBwd, m_lastBwd;
  std::vector<std::vector<int>> m_prefetchAt;   // per backward step: swapped FMs it brings back
  std::vector<std::vector<int>> m_lastReadAt;   // per backward step: FMs it reads last
  std::vector<std::vector<int>> m_remakeAt;     // per backward step: FMs it re-makes (layer order)
  std::vector<std::vector<int>> m_transientAt;  // per backward step: re-made FMs it releases
  std::vector<int> m_fm, m_grad, m_saved, m_ws, m_persistent;
  std::vector<bool> m_gradAllocated = std::vector<bool>(m_net.size(), false);
  int m_labels = -1;
};

}  // namespace

Gmap buildGmap(const Network& net, const std::vector<LayerCost>& costs, const SwapSet& swapped,
               const std::vector<LinearBytes>* workspace) {
  return GmapBuilder(net, costs, swapped, RecomputeSet(swapped.size(), false), workspace).build();
}

Gmap buildGmap(const Network& net, const std::vector<LayerCost>& costs, const SwapSet& swapped,
               const RecomputeSet& recomputed, const std::vector<LinearBytes>* workspace) {
  return GmapBuilder(net, costs, swapped, recomputed, workspace).build();
}

std::vector<SwapSteps> swapSteps(const Gmap& g) {
  const int n = g.forward_steps;
  std::vector<SwapSteps> out(g.buffers.size());
  std::vector<int> release(g.buffers.size(), 0);
  for (const GmapOp& op : g.ops) {
    if (op.buffer < 0) continue;
    const auto b = static_cast<std::size_t>(op.buffer);
    if (op.kind == GmapOpKind::Release && op.step <= n) release[b] = op.step;
    if (op.kind == GmapOpKind::Prefetch && op.step > n) out[b].prefetch = op.step;
  }
  for (std::size_t b = 0; b < out.size(); ++b) {
    if (out[b].prefetch > 0 && g.buffers[b].kind == BufferKind::FeatureMap) {
      out[b].release = release[b];
    } else {
      out[b] = {};
    }
  }
  return out;
}

std::vector<RecomputeSteps> recomputeSteps(const Gmap& g) {
  const int n = g.forward_steps;
  std::vector<RecomputeSteps> out(g.buffers.size());
  for (const GmapOp& op : g.ops) {
    if (op.buffer < 0) continue;
    const auto b = static_cast<std::size_t>(op.buffer);
    const GmapBuffer& buf = g.buffers[b];
    if (buf.kind != BufferKind::FeatureMap || buf.layer < 0 ||
        static_cast<std::size_t>(buf.layer) >= g.recomputed.size() ||
        !g.recomputed[static_cast<std::size_t>(buf.layer)]) {
      continue;
    }
    if (op.kind == GmapOpKind::Release && op.step <= n) out[b].release = op.step;
    if (op.kind == GmapOpKind::Recompute && out[b].recompute == 0) out[b].recompute = op.step;
  }
  for (RecomputeSteps& r : out) {
    if (r.recompute == 0) r = {};
  }
  return out;
}

LinearBytes paddedSize(const LinearBytes& size, BufferKind kind, const PoolPadding& padding) {
  const std::int64_t m = kind == BufferKind::Workspace ? padding.workspace : padding.buffer;
  if (m <= 0)
    throw Error(ErrorKind::Runtime, "pool padding must be positive, not " + std::to_string(m));
  auto up = [m](std::int64_t v) {
    const std::int64_t r = v % m;
    if (r == 0) return v;
    if (v > INT64_MAX - (m - r)) {
      throwBadInput("a buffer of " + std::to_string(v) + " bytes padded to a multiple of " +
                    std::to_string(m) + " does not fit in 64-bit integers");
    }
    return v + (m - r);
  };
  return {up(size.fixed), up(size.per_sample)};
}

std::vector<LinearBytes> workspaceSteps(const Gmap& gmap, const std::string& networkHash,
                                        const KernelWorkspaces& workspaces) {
  if (networkHash != workspaces.network_hash) return {};
  std::vector<LinearBytes> table(static_cast<std::size_t>(gmap.steps() + 2));
  bool any = false;
  for (int s = 1; s <= gmap.steps(); ++s) {
    const int layer = gmap.step_layer[static_cast<std::size_t>(s)];
    const std::vector<LinearBytes>& perLayer =
        gmap.isBackwardStep(s) ? workspaces.backward : workspaces.forward;
    if (layer < 0 || static_cast<std::size_t>(layer) >= perLayer.size()) continue;
    table[static_cast<std::size_t>(s)] = perLayer[static_cast<std::size_t>(layer)];
    any = any || table[static_cast<std::size_t>(s)] != LinearBytes{};
  }
  if (!any) table.clear();
  return table;
}

Gmap padGmap(const Gmap& gmap, const PoolPadding& padding) {
  Gmap out = gmap;
  if (padding == PoolPadding{}) return out;
  for (GmapBuffer& b : out.buffers)
    b.size = paddedSize(b.size, b.kind, padding);
  return out;
}

}  // namespace swapscope
