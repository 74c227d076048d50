// SPDX-License-Identifier: MIT
#include "cli/device_options.h"

#include "common/bytes.h"
#include "common/error.h"

namespace swapscope::cli {

void addDeviceOptions(ArgParser& args) {
  args.option("--device", "DEV", "cpu (default); cuda[:N] where built and present");
  args.option("--conv-algo", "P",
              "cuda: performance (default: cuDNN's fastest within --workspace-limit) or memory "
              "(the least workspace), per layer as in vDNN");
  args.flag("--deterministic",
            "cuda: deterministic algorithms only, chosen without timing (bit-identical runs)");
  args.option("--math", "M", "cuda: fp32 (default, no tensor-core rounding) or tf32");
  args.option("--workspace-limit", "SIZE",
              "cuda: the largest workspace one convolution pass may take under --conv-algo "
              "performance (default 256MiB); workspaces count against the budget");
  args.option("--device-headroom", "SIZE",
              "cuda: device memory left free beside the pool for what allocates outside it "
              "(default 1GiB); a budget above free memory less this is refused");
}

std::string deviceUsage(const std::string& indent) {
  return indent + "[--device cpu|cuda[:N]] [--conv-algo performance|memory] [--deterministic]\n" +
         indent + "[--math fp32|tf32] [--workspace-limit SIZE] [--device-headroom SIZE]";
}

rt::DeviceOptions deviceOptions(const ArgParser& args) {
  rt::DeviceOptions o;
  if (auto v = args.value("--conv-algo")) {
    if (*v == "performance") {
      o.conv_algo = rt::ConvAlgoPolicy::Performance;
    } else if (*v == "memory") {
      o.conv_algo = rt::ConvAlgoPolicy::Memory;
    } else {
      throwBadInput("--conv-algo: unknown policy '" + *v + "' (choose performance or memory)");
    }
  }
  if (auto v = args.value("--math")) {
    if (*v == "fp32") {
      o.math = rt::MathMode::Fp32;
    } else if (*v == "tf32") {
      o.math = rt::MathMode::Tf32;
    } else {
      throwBadInput("--math: unknown mode '" + *v + "' (choose fp32 or tf32)");
    }
  }
  o.deterministic = args.has("--deterministic");
  if (auto v = args.value("--workspace-limit"))
    o.workspace_limit = parseByteSize(*v, "--workspace-limit");
  if (auto v = args.value("--device-headroom"))
    o.device_headroom = parseByteSize(*v, "--device-headroom");
  return o;
}

std::unique_ptr<rt::Device> openDevice(const ArgParser& args, std::ostream& err) {
  std::unique_ptr<rt::Device> device =
      rt::openDevice(args.value("--device").value_or("cpu"), deviceOptions(args));
  if (device->backendName() != "cuda") {
    for (const char* option :
         {"--conv-algo", "--deterministic", "--math", "--workspace-limit", "--device-headroom"}) {
      if (!args.has(option)) continue;
      const std::string value = args.value(option).value_or("");
      warnNoEffect(err, std::string(option) + (value.empty() ? "" : " " + value),
                   "it applies to the CUDA backend, and " + device->deviceName() + " is the " +
                       device->backendName() + " backend (fp32, no workspaces)");
    }
  }
  return device;
}

}  // namespace swapscope::cli
