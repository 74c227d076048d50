// SPDX-License-Identifier: MIT
// CUPTI Activity API collection: CONCURRENT_KERNEL and MEMCPY records, joined to the engine's
// tasks through EXTERNAL_CORRELATION records. CUPTI emits an external-correlation record only
// for an API activity record made inside the pushed region, so API records are needed; cuDNN and
// cuBLAS launch through both the runtime and the driver API. By default only the API calls that
// launch a kernel or copy or set memory are recorded (cuptiActivityEnableRuntimeApi and
// EnableDriverApi); CuptiApiRecords::All records every API call (the RUNTIME and DRIVER kinds),
// which costs more and is kept for comparing the overhead. Buffers are parsed in the completion
// callback, which takes the state's mutex; the mutex is never held across
// cuptiActivityFlushAll, which calls that callback.
#include "collectors/cupti_collector.h"

#include <cupti.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "collectors/cupti_check.h"

namespace swapscope::collect {
namespace {

constexpr std::size_t kBufferBytes = std::size_t{4} << 20;  // CUPTI advises 1 to 10 MiB
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_MEMCPY,
                                         CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
constexpr CUpti_ActivityKind kAllApiKinds[] = {CUPTI_ACTIVITY_KIND_RUNTIME,
                                               CUPTI_ACTIVITY_KIND_DRIVER};
/// The runtime API calls that launch work on a stream: the engine's own kernels and copies, and
/// cuDNN's and cuBLAS's where they launch through the runtime.
constexpr CUpti_CallbackId kRuntimeLaunches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000,
};
/// The driver API calls that launch work, for libraries that call the driver directly.
/// Each with its per-thread-default-stream (_ptsz) variant.
constexpr CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async_ptsz,
};

struct KernelRec {
  std::uint32_t correlation;
  std::int64_t start, end;
};
struct CopyRec {
  std::uint32_t correlation;
  std::uint8_t copy_kind, src_kind, dst_kind;
  std::int64_t bytes, start, end;
};

/// What the completion callback hands over. Process-wide, as CUPTI's buffers are.
struct Records {
  std::mutex mutex;
  std::unordered_map<std::uint32_t, std::uint64_t> external;  // correlation id -> task id
  std::vector<KernelRec> kernels;
  std::vector<CopyRec> copies;
  std::int64_t dropped = 0;
  bool registered = false;
  bool in_use = false;
};
Records& records() {
  static Records r;
  return r;
}

void CUPTIAPI bufferRequested(std::uint8_t** buffer, std::size_t* size,
                              std::size_t* maxNumRecords) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *maxNumRecords = 0;
}

void CUPTIAPI bufferCompleted(CUcontext context, std::uint32_t streamId, std::uint8_t* buffer,
                              std::size_t, std::size_t validSize) {
  std::vector<KernelRec> kernels;
  std::vector<CopyRec> copies;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> external;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, validSize, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        if (k->start == 0 && k->end == 0) break;  // no timestamps could be taken
        kernels.push_back({k->correlationId, static_cast<std::int64_t>(k->start),
                           static_cast<std::int64_t>(k->end)});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        if (m->start == 0 && m->end == 0) break;
        copies.push_back({m->correlationId, m->copyKind, m->srcKind, m->dstKind,
                          static_cast<std::int64_t>(m->bytes), static_cast<std::int64_t>(m->start),
                          static_cast<std::int64_t>(m->end)});
        break;
      }
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        if (e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
          external.emplace_back(e->correlationId, e->externalId);
        break;
      }
      default:
        break;
    }
  }
  std::size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(context, streamId, &dropped);
  std::free(buffer);
  Records& r = records();
  std::lock_guard lock(r.mutex);
  r.kernels.insert(r.kernels.end(), kernels.begin(), kernels.end());
  r.copies.insert(r.copies.end(), copies.begin(), copies.end());
  for (const auto& [c, id] : external)
    r.external[c] = id;
  r.dropped += static_cast<std::int64_t>(dropped);
}

/// A task's identity in 64 bits: kind, stream, step, buffer + 1.
std::uint64_t taskId(rt::StreamKind s, const rt::TaskTag& t) {
  return (static_cast<std::uint64_t>(t.kind) << 56) | (static_cast<std::uint64_t>(s) << 48) |
         ((static_cast<std::uint64_t>(t.step) & 0xFFFFFF) << 24) |
         (static_cast<std::uint64_t>(t.buffer + 1) & 0xFFFFFF);
}
rt::TaskKind idKind(std::uint64_t id) {
  return static_cast<rt::TaskKind>((id >> 56) & 0xFF);
}
int idStep(std::uint64_t id) {
  return static_cast<int>((id >> 24) & 0xFFFFFF);
}
int idBuffer(std::uint64_t id) {
  return static_cast<int>(id & 0xFFFFFF) - 1;
}

class CuptiCollector final : public KernelCollector {
 public:
  CuptiCollector(rt::Device& device, CuptiApiRecords api)
      : KernelCollector(true, api == CuptiApiRecords::All
                                  ? "CUPTI activity (concurrent kernels, memcpy, external "
                                    "correlation; every runtime and driver API call)"
                                  : "CUPTI activity (concurrent kernels, memcpy, external "
                                    "correlation; launch and copy API calls only)"),
        m_device(device),
        m_api(api) {}
  ~CuptiCollector() override {
    try {
      detach();
    } catch (...) {
      // Best effort: the process may be ending with the driver already gone.
    }
    std::lock_guard lock(records().mutex);
    records().in_use = false;
  }

  void attach() override {
    if (m_attached) return;
    Records& r = records();
    if (!r.registered) {
      SWAPSCOPE_CUPTI_CHECK(cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted));
      r.registered = true;
    }
    for (const CUpti_ActivityKind k : kKinds) {
      const CUptiResult status = cuptiActivityEnable(k);
      if (status != CUPTI_SUCCESS) {
        disableAll();
        detail::throwCuptiError(status, "cuptiActivityEnable", __FILE__, __LINE__);
      }
    }
    const CUptiResult status = enableApiRecords(true);
    if (status != CUPTI_SUCCESS) {
      disableAll();
      detail::throwCuptiError(status, "enabling CUPTI's API records", __FILE__, __LINE__);
    }
    m_device.setTaskObserver(this);
    m_attached = true;
  }

  void detach() override {
    if (!m_attached) return;
    m_device.setTaskObserver(nullptr);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    disableAll();
    std::lock_guard lock(records().mutex);
    records().kernels.clear();
    records().copies.clear();
    records().external.clear();
    m_attached = false;
  }

  void taskBegin(rt::StreamKind s, const rt::TaskTag& tag) override {
    cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, taskId(s, tag));
  }
  void taskEnd(rt::StreamKind, const rt::TaskTag&) override {
    std::uint64_t last = 0;
    cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
  }

  KernelProfile take(const rt::IterationRecord&) override {
    // The device is synchronised, so a forced flush delivers every record with its end time.
    SWAPSCOPE_CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    std::vector<KernelRec> kernels;
    std::vector<CopyRec> copies;
    std::unordered_map<std::uint32_t, std::uint64_t> external;
    KernelProfile p;
    {
      Records& r = records();
      std::lock_guard lock(r.mutex);
      kernels.swap(r.kernels);
      copies.swap(r.copies);
      external.swap(r.external);
      p.dropped_records = std::exchange(r.dropped, 0);
    }
    std::int64_t origin = INT64_MAX;
    for (const KernelRec& k : kernels)
      origin = std::min(origin, k.start);
    for (const CopyRec& c : copies)
      origin = std::min(origin, c.start);

    std::unordered_map<int, StepKernels> perStep;
    std::vector<std::pair<std::int64_t, std::int64_t>> busy;
    for (const KernelRec& k : kernels) {
      const auto it = external.find(k.correlation);
      if (it == external.end()) {
        ++p.untagged_kernels;
        continue;
      }
      StepKernels& s = stepOf(perStep, idStep(it->second));
      s.kernel_ns += k.end - k.start;
      s.kernels = std::max(s.kernels, 0) + 1;
      busy.emplace_back(k.start, k.end);
    }
    std::sort(busy.begin(), busy.end());
    for (const CopyRec& c : copies) {
      const auto it = external.find(c.correlation);
      if (it == external.end()) continue;
      const rt::TaskKind kind = idKind(it->second);
      if ((kind == rt::TaskKind::Compute || kind == rt::TaskKind::Recompute) &&
          c.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD) {
        // A step that copies on the device (flatten, concat) without a kernel, or re-makes such
        // an FM.
        StepKernels& s = stepOf(perStep, idStep(it->second));
        ++s.memcpys;
        continue;
      }
      if (kind != rt::TaskKind::Offload && kind != rt::TaskKind::Prefetch) continue;
      const bool toDevice = c.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
      const std::uint8_t hostKind = toDevice ? c.src_kind : c.dst_kind;
      const bool overlapped = overlapsAny(busy, c.start, c.end);
      p.transfers.push_back({kind, idStep(it->second), idBuffer(it->second), toDevice, c.bytes,
                             c.start - origin, c.end - origin,
                             hostKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED, overlapped});
    }
    for (const auto& [step, s] : perStep)
      p.steps.push_back(s);
    std::sort(p.steps.begin(), p.steps.end(),
              [](const StepKernels& a, const StepKernels& b) { return a.step < b.step; });
    return p;
  }

 private:
  static StepKernels& stepOf(std::unordered_map<int, StepKernels>& perStep, int step) {
    StepKernels& s = perStep[step];
    s.step = step;
    s.kernels = std::max(s.kernels, 0);  // counted: 0 until a kernel is seen
    return s;
  }
  CUptiResult enableApiRecords(bool enable) const {
    const auto on = static_cast<std::uint8_t>(enable ? 1 : 0);
    if (m_api == CuptiApiRecords::All) {
      for (const CUpti_ActivityKind k : kAllApiKinds) {
        const CUptiResult r = enable ? cuptiActivityEnable(k) : cuptiActivityDisable(k);
        if (r != CUPTI_SUCCESS) return r;
      }
      return CUPTI_SUCCESS;
    }
    for (const CUpti_CallbackId id : kRuntimeLaunches) {
      if (const CUptiResult r = cuptiActivityEnableRuntimeApi(id, on); r != CUPTI_SUCCESS) return r;
    }
    for (const CUpti_CallbackId id : kDriverLaunches) {
      if (const CUptiResult r = cuptiActivityEnableDriverApi(id, on); r != CUPTI_SUCCESS) return r;
    }
    return CUPTI_SUCCESS;
  }
  void disableAll() const {
    (void)enableApiRecords(false);
    for (const CUpti_ActivityKind k : kKinds)
      cuptiActivityDisable(k);
  }

  rt::Device& m_device;
  CuptiApiRecords m_api;
  bool m_attached = false;
};

}  // namespace

std::unique_ptr<KernelCollector> createCuptiCollector(rt::Device& device, std::string& why,
                                                      CuptiApiRecords api) {
  {
    std::lock_guard lock(records().mutex);
    if (records().in_use) {
      why = "another collector of this process holds CUPTI";
      return nullptr;
    }
    records().in_use = true;
  }
  auto c = std::make_unique<CuptiCollector>(device, api);
  try {
    c->attach();  // proves CUPTI works here; the caller attaches again when it measures
    c->detach();
  } catch (const Error& e) {
    why = e.what();
    return nullptr;
  }
  return c;
}

}  // namespace swapscope::collect
