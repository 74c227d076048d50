// SPDX-License-Identifier: MIT
/// @brief The options every verb that runs the engine uses to open its device: --device, and for
/// the CUDA backend --conv-algo, --deterministic, --math, --workspace-limit and --device-headroom.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "options/args.h"
#include "runtime/device.h"

namespace swapscope::cli {

void addDeviceOptions(ArgParser& args);
/// The usage text of addDeviceOptions' options: two lines, each starting with `indent`.
std::string deviceUsage(const std::string& indent);
/// The DeviceOptions the flags say; Error(BadInput) naming the option on a bad value.
rt::DeviceOptions deviceOptions(const ArgParser& args);
/// Opens --device (default cpu) with deviceOptions(). On a device without them, each CUDA option
/// given is named in a warning on `err`: it has no effect there.
std::unique_ptr<rt::Device> openDevice(const ArgParser& args, std::ostream& err);

}  // namespace swapscope::cli
