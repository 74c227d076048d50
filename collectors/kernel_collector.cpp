// SPDX-License-Identifier: MIT
#include "collectors/kernel_collector.h"

#include <algorithm>
#include <map>
#include <utility>

#include "collectors/cupti_collector.h"
#include "common/error.h"

namespace swapscope::collect {

std::int64_t KernelProfile::kernelTotalNs() const {
  std::int64_t total = 0;
  for (const StepKernels& s : steps)
    total += s.kernel_ns;
  return total;
}

namespace {

class TimelineCollector final : public KernelCollector {
 public:
  TimelineCollector(rt::Device& device, std::string source)
      : KernelCollector(false, std::move(source)), m_pageLocked(device.hostMemoryPageLocked()) {}
  void attach() override {}
  void detach() override {}
  void taskBegin(rt::StreamKind, const rt::TaskTag&) override {}
  void taskEnd(rt::StreamKind, const rt::TaskTag&) override {}
  KernelProfile take(const rt::IterationRecord& rec) override {
    return profileFromTimeline(rec, m_pageLocked);
  }

 private:
  bool m_pageLocked;
};

}  // namespace

bool overlapsAny(const std::vector<std::pair<std::int64_t, std::int64_t>>& busy, std::int64_t start,
                 std::int64_t end) {
  for (const auto& [lo, hi] : busy) {
    if (lo >= end) break;
    if (hi > start) return true;
  }
  return false;
}

KernelProfile profileFromTimeline(const rt::IterationRecord& rec, bool pageLocked) {
  KernelProfile p;
  std::map<int, std::int64_t> perStep;
  std::vector<std::pair<std::int64_t, std::int64_t>> busy;
  for (const rt::TimelineOp& op : rec.ops) {
    if (op.stream != rt::StreamKind::Compute) continue;
    if (op.kind != rt::TaskKind::Compute && op.kind != rt::TaskKind::Recompute &&
        op.kind != rt::TaskKind::Update)
      continue;
    perStep[op.step] += op.end_ns - op.start_ns;
    busy.emplace_back(op.start_ns, op.end_ns);
  }
  for (const auto& [step, ns] : perStep)
    p.steps.push_back({step, ns, -1});
  std::sort(busy.begin(), busy.end());
  for (const rt::TimelineOp& op : rec.ops) {
    if (op.kind != rt::TaskKind::Offload && op.kind != rt::TaskKind::Prefetch) continue;
    p.transfers.push_back({.kind = op.kind,
                           .step = op.step,
                           .buffer = op.buffer,
                           .to_device = op.kind == rt::TaskKind::Prefetch,
                           .bytes = op.bytes,
                           .start_ns = op.start_ns,
                           .end_ns = op.end_ns,
                           .page_locked = pageLocked,
                           .overlapped_compute = overlapsAny(busy, op.start_ns, op.end_ns)});
  }
  return p;
}

StepCoverage checkStepCoverage(const KernelProfile& p, const Network& net, const Gmap& gmap,
                               const std::vector<LayerCost>& costs) {
  StepCoverage c;
  const int n = gmap.forward_steps;
  std::map<int, const StepKernels*> byStep;
  for (const StepKernels& s : p.steps)
    byStep[s.step] = &s;
  for (int step = 1; step <= 2 * n + 1; ++step) {
    std::string name = "step " + std::to_string(step);
    int layer = -1;
    bool backward = false;
    if (step <= 2 * n) {
      layer = gmap.step_layer.at(static_cast<std::size_t>(step));
      backward = gmap.isBackwardStep(step);
      name += std::string(" (") + (backward ? "backward" : "forward") + " of '" +
              net.layer(layer).name + "')";
    } else {
      name += " (the SGD update)";
    }
    const auto it = byStep.find(step);
    const StepKernels* s = it == byStep.end() ? nullptr : it->second;
    if (s && s->kernels != 0) continue;  // kernels, or a task ran (-1: not counted)
    if (layer >= 0 && backward && !costs.at(static_cast<std::size_t>(layer)).backward_active) {
      c.allowed.push_back(name + ": launches nothing (no gradient is needed there)");
      continue;
    }
    const LayerKind kind = layer >= 0 ? net.layer(layer).kind : LayerKind::Input;
    if (s && s->memcpys > 0 && (kind == LayerKind::Flatten || kind == LayerKind::Concat)) {
      c.allowed.push_back(name + ": device-to-device copies only (" + std::to_string(s->memcpys) +
                          "), no kernel");
      continue;
    }
    c.missing.push_back(step);
    c.problems.push_back(name + ": " + (s ? "no kernel and no copy recorded" : "nothing recorded"));
  }
  return c;
}

std::unique_ptr<KernelCollector> KernelCollector::create(rt::Device& device, bool want_cupti,
                                                         CuptiApiRecords api) {
  const std::string fallback =
      device.backendName() == "cuda" ? "CUDA events" : device.backendName() + " task timers";
  if (!want_cupti) {
    return std::make_unique<TimelineCollector>(device, fallback + " (CUPTI not asked for)");
  }
  if (device.backendName() != "cuda") {
    return std::make_unique<TimelineCollector>(
        device, fallback + " (CUPTI unavailable: the device is not a CUDA device)");
  }
  std::string why;
  auto cupti = createCuptiCollector(device, why, api);
  if (cupti) return cupti;
  return std::make_unique<TimelineCollector>(device,
                                             fallback + " (CUPTI unavailable: " + why + ")");
}

}  // namespace swapscope::collect
