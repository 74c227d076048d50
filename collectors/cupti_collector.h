// SPDX-License-Identifier: MIT
/// @brief The CUPTI half of the kernel collector (cupti_collector.cpp where the build has CUPTI,
/// cupti_none.cpp where it has not).
#pragma once

#include <memory>
#include <string>

#include "collectors/kernel_collector.h"

namespace swapscope::collect {

/// A started CUPTI collector for `device`, or nullptr with the reason in `why` (not built in,
/// no driver, insufficient privileges, another CUPTI subscriber, ...). Only one can exist per
/// process: CUPTI's activity buffers are process-wide.
std::unique_ptr<KernelCollector> createCuptiCollector(rt::Device& device, std::string& why,
                                                      CuptiApiRecords api);

}  // namespace swapscope::collect
