// SPDX-License-Identifier: MIT
#include "collectors/cupti_collector.h"

namespace swapscope::collect {

std::unique_ptr<KernelCollector> createCuptiCollector(rt::Device&, std::string& why,
                                                      CuptiApiRecords) {
  why = "this build has no CUPTI (configured without the CUDA toolkit)";
  return nullptr;
}

}  // namespace swapscope::collect
