// SPDX-License-Identifier: MIT
#include "runtime/gpu_inventory.h"

namespace swapscope {

GpuInventory queryGpuInventory() {
  GpuInventory inv;
  inv.unavailable_reason =
      "this build has no CUDA support (SWAPSCOPE_CUDA=OFF or no CUDA toolkit at configure time)";
  return inv;
}

}  // namespace swapscope
