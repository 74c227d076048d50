// SPDX-License-Identifier: MIT
#include "runtime/device.h"

#include <charconv>

#include "common/bytes.h"
#include "common/error.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/gpu_inventory.h"
#ifdef SWAPSCOPE_WITH_CUDA_BACKEND
#include "runtime/cuda/cuda_device.h"
#endif

namespace swapscope::rt {

std::string_view streamName(StreamKind s) {
  switch (s) {
    case StreamKind::Compute:
      return "compute";
    case StreamKind::SwapOut:
      return "swap-out";
    case StreamKind::SwapIn:
      return "swap-in";
  }
  return "?";
}

std::string_view taskKindName(TaskKind k) {
  switch (k) {
    case TaskKind::Compute:
      return "compute";
    case TaskKind::Offload:
      return "offload";
    case TaskKind::Prefetch:
      return "prefetch";
    case TaskKind::Update:
      return "update";
    case TaskKind::Readback:
      return "readback";
    case TaskKind::Recompute:
      return "recompute";
  }
  return "?";
}

void checkDeviceBudget(const std::string& device, std::int64_t free, std::int64_t total,
                       std::int64_t headroom, std::int64_t budget) {
  if (free <= 0) return;
  if (headroom < 0) {
    throwBadInput("the device headroom cannot be negative: " + std::to_string(headroom));
  }
  const std::int64_t usable = free - headroom;
  if (budget <= usable) return;
  auto both = [](std::int64_t v) { return formatBytes(v) + " (" + std::to_string(v) + " bytes)"; };
  throwBadInput("the budget of " + both(budget) + " exceeds what " + device +
                " can give the pool: " + both(free) + " free of " + formatBytes(total) +
                " less the headroom of " + both(headroom) + " leaves " +
                (usable > 0 ? both(usable) : std::string("nothing")) +
                "; lower the budget or --device-headroom");
}

std::string_view convAlgoPolicyName(ConvAlgoPolicy p) {
  return p == ConvAlgoPolicy::Memory ? "memory" : "performance";
}

std::string_view mathModeName(MathMode m) {
  return m == MathMode::Tf32 ? "tf32" : "fp32";
}

std::vector<BackendInfo> listBackends() {
  std::vector<BackendInfo> out;
  out.push_back({"cpu", true, "cpu:0 " + cpuDescription()});
  const GpuInventory inv = queryGpuInventory();
  BackendInfo cuda{"cuda", false, ""};
  if (!inv.built_with_cuda) {
    cuda.detail = "not part of this build (configured without CUDA)";
  } else if (inv.devices.empty()) {
    cuda.detail = inv.unavailable_reason;
  } else {
#ifdef SWAPSCOPE_WITH_CUDA_BACKEND
    cuda.available = true;
    for (const GpuDevice& d : inv.devices) {
      if (!cuda.detail.empty()) cuda.detail += ", ";
      cuda.detail += "cuda:" + std::to_string(d.index) + " " + d.name;
    }
#else
    cuda.detail = "this build has no CUDA backend (cuDNN was not found when it was configured); " +
                  std::to_string(inv.devices.size()) + " CUDA device(s) present";
#endif
  }
  out.push_back(cuda);
  return out;
}

std::unique_ptr<Device> openDevice(std::string_view spec, const DeviceOptions& options) {
  const auto colon = spec.find(':');
  const std::string_view backend = spec.substr(0, colon);
  int index = 0;
  if (colon != std::string_view::npos) {
    const std::string_view num = spec.substr(colon + 1);
    const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), index);
    if (ec != std::errc() || end != num.data() + num.size() || index < 0) {
      throwBadInput("device '" + std::string(spec) + "': '" + std::string(num) +
                    "' is not a device number");
    }
  }
  if (backend == "cpu") {
    if (index != 0) {
      throwBadInput("device '" + std::string(spec) +
                    "' is not there: the cpu backend has one device, cpu:0");
    }
    return createCpuDevice(options);
  }
  if (backend == "cuda") {
    for (const BackendInfo& b : listBackends()) {
      if (b.name != "cuda") continue;
      if (!b.available) throwBadInput("device '" + std::string(spec) + "': " + b.detail);
#ifdef SWAPSCOPE_WITH_CUDA_BACKEND
      return createCudaDevice(index, options);
#endif
    }
  }
  throwBadInput("unknown device '" + std::string(spec) + "': use cpu or cuda[:N]");
}

}  // namespace swapscope::rt
