// SPDX-License-Identifier: MIT
#include "store/chrome_trace.h"

#include <algorithm>
#include <string>

#include "common/error.h"

namespace swapscope::store {
namespace {

using json = nlohmann::ordered_json;

constexpr int kPid = 1;
constexpr int kComputeTid = 1, kSwapOutTid = 2, kSwapInTid = 3;

double micros(std::int64_t ns) {
  return static_cast<double>(ns) / 1000.0;
}

json metadata(const char* name, int tid, const std::string& value) {
  json e{{"name", name}, {"ph", "M"}, {"pid", kPid}};
  if (tid > 0) e["tid"] = tid;
  e["args"] = {{"name", value}};
  return e;
}

json sortIndex(int tid) {
  return {{"name", "thread_sort_index"},
          {"ph", "M"},
          {"pid", kPid},
          {"tid", tid},
          {"args", {{"sort_index", tid}}}};
}

}  // namespace

std::int64_t largestRecordedK(const RunData& run) {
  if (run.iterations.empty()) throwBadInput("'" + run.path + "' holds no recorded iterations");
  std::int64_t k = 0;
  for (const IterationRow& r : run.iterations)
    k = std::max(k, r.k);
  return k;
}

const IterationRow& recordedIteration(const RunData& run, std::int64_t k, int iteration) {
  for (const IterationRow& r : run.iterations) {
    if (r.k == k && r.iteration == iteration) return r;
  }
  std::string have;
  int atK = 0;  // the iterations recorded at k: 0 .. atK - 1
  for (const IterationRow& r : run.iterations) {
    if (r.iteration == 0) have += (have.empty() ? "" : ", ") + std::to_string(r.k);
    if (r.k == k) atK = std::max(atK, r.iteration + 1);
  }
  const std::string atKText = atK == 0 ? ""
                                       : "; at k = " + std::to_string(k) +
                                             " it holds iterations 0 to " + std::to_string(atK - 1);
  throwBadInput(
      "'" + run.path + "' holds no iteration " + std::to_string(iteration) +
      " at k = " + std::to_string(k) +
      (have.empty() ? " (it holds no iterations)" : " (recorded k: " + have + atKText + ")"));
}

std::map<int, std::vector<Span>> recomputeSpans(const RunData& run, std::int64_t k, int iteration) {
  std::map<int, std::vector<Span>> spans;
  for (const RecomputeRow& r : run.recomputes) {
    if (r.k == k && r.iteration == iteration)
      spans[r.step].push_back({r.start_ns, r.start_ns + r.time_ns});
  }
  for (auto& [step, list] : spans) {
    std::sort(list.begin(), list.end(),
              [](const Span& a, const Span& b) { return a.start_ns < b.start_ns; });
  }
  return spans;
}

std::vector<Span> stallSpans(const SampleRow& s, const std::map<int, std::vector<Span>>& recomputes,
                             std::int64_t iteration_start_ns) {
  std::vector<Span> spans;
  std::int64_t left = s.stall_ns, end = s.start_ns;
  if (const auto remakes = recomputes.find(s.step); remakes != recomputes.end()) {
    const std::vector<Span>& list = remakes->second;
    for (auto it = list.rbegin(); it != list.rend() && left > 0; ++it) {
      if (it->end_ns > end) continue;  // not before this row (another pass of the step)
      const std::int64_t piece = std::min(left, end - it->end_ns);
      if (piece > 0) spans.push_back({end - piece, end});
      left -= piece;
      end = it->start_ns;
    }
  }
  if (left > 0) spans.push_back({end - left, end});
  std::reverse(spans.begin(), spans.end());
  // Cut at the iteration's start (the older sub-batched layout's summed stall, laid before an
  // earlier pass): the spans are in time order, so the cut ones come first.
  std::vector<Span> within;
  for (Span span : spans) {
    span.start_ns = std::max(span.start_ns, iteration_start_ns);
    if (span.end_ns > span.start_ns) within.push_back(span);
  }
  return within;
}

json chromeTrace(const RunData& run, std::int64_t k, int iteration) {
  const IterationRow* it = &recordedIteration(run, k, iteration);
  auto layerName = [&](int layer) {
    return layer >= 0 && static_cast<std::size_t>(layer) < run.layers.size()
               ? run.layers[static_cast<std::size_t>(layer)].name
               : std::string("layer ") + std::to_string(layer);
  };
  auto tensorName = [&](int tensor) {
    return tensor >= 0 && static_cast<std::size_t>(tensor) < run.tensors.size()
               ? run.tensors[static_cast<std::size_t>(tensor)].name
               : std::string("tensor ") + std::to_string(tensor);
  };

  json events = json::array();
  events.push_back(
      metadata("process_name", 0,
               run.network.name + " at k = " + std::to_string(k) + " on " + run.meta.device));
  events.push_back(metadata("thread_name", kComputeTid, "compute"));
  events.push_back(metadata("thread_name", kSwapOutTid, "swap-out (device to host)"));
  events.push_back(metadata("thread_name", kSwapInTid, "swap-in (host to device)"));
  for (int tid : {kComputeTid, kSwapOutTid, kSwapInTid})
    events.push_back(sortIndex(tid));

  const std::map<int, std::vector<Span>> recomputes = recomputeSpans(run, k, iteration);
  for (const SampleRow& s : run.samples) {
    if (s.k != k || s.iteration != iteration) continue;
    for (const Span& idle : stallSpans(s, recomputes, it->start_ns)) {
      events.push_back({{"name", "stall"},
                        {"cat", "stall"},
                        {"ph", "X"},
                        {"pid", kPid},
                        {"tid", kComputeTid},
                        {"ts", micros(idle.start_ns)},
                        {"dur", micros(idle.end_ns - idle.start_ns)},
                        {"args", {{"before step", s.step}}}});
    }
    const std::string dir(directionName(s.direction));
    events.push_back({{"name", layerName(s.layer) + " " + dir},
                      {"cat", dir},
                      {"ph", "X"},
                      {"pid", kPid},
                      {"tid", kComputeTid},
                      {"ts", micros(s.start_ns)},
                      {"dur", micros(s.time_ns)},
                      {"args", {{"step", s.step}, {"flops", s.flops}}}});
  }
  for (const RecomputeRow& r : run.recomputes) {
    if (r.k != k || r.iteration != iteration) continue;
    events.push_back({{"name", layerName(r.layer) + " recompute"},
                      {"cat", "recompute"},
                      {"ph", "X"},
                      {"pid", kPid},
                      {"tid", kComputeTid},
                      {"ts", micros(r.start_ns)},
                      {"dur", micros(r.time_ns)},
                      {"args", {{"step", r.step}, {"flops", r.flops}}}});
  }
  for (const TransferRow& t : run.transfers) {
    if (t.k != k || t.iteration != iteration) continue;
    const std::string kind(transferKindName(t.kind));
    const double seconds = static_cast<double>(t.end_ns - t.start_ns) * 1e-9;
    json args{{"step", t.step}, {"bytes", t.bytes}};
    if (seconds > 0) args["GB/s"] = static_cast<double>(t.bytes) / seconds * 1e-9;
    args["overlap with compute (us)"] = micros(t.overlap_ns);
    // The loss readback runs on the compute stream, in order with the steps.
    const int tid = t.kind == TransferKind::Readback ? kComputeTid
                    : t.to_host                      ? kSwapOutTid
                                                     : kSwapInTid;
    events.push_back({{"name", tensorName(t.tensor) + " " + kind},
                      {"cat", kind},
                      {"ph", "X"},
                      {"pid", kPid},
                      {"tid", tid},
                      {"ts", micros(t.start_ns)},
                      {"dur", micros(t.end_ns - t.start_ns)},
                      {"args", std::move(args)}});
  }
  for (const MemoryRow& m : run.memory) {
    if (m.k != k || m.iteration != iteration) continue;
    events.push_back({{"name", "pool bytes"},
                      {"ph", "C"},
                      {"pid", kPid},
                      {"ts", micros(m.time_ns)},
                      {"args", {{"in use", m.in_use}, {"budget", run.meta.budget}}}});
  }
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ms"},
          {"otherData",
           {{"source", "swapscope trace"},
            {"database", run.path},
            {"network", run.network.name},
            {"k", k},
            {"iteration", iteration},
            {"iteration_start_us", micros(it->start_ns)},
            {"iteration_us", micros(it->duration_ns)}}}};
}

}  // namespace swapscope::store
