// SPDX-License-Identifier: MIT
#include "runtime/gpu_inventory.h"

#include <gtest/gtest.h>

#include "runtime/cuda_test_support.h"

namespace swapscope {
namespace {

TEST(GpuInventory, NoGpuIsAnAnswerWithAReason) {
  const GpuInventory inv = queryGpuInventory();
  if (inv.devices.empty()) {
    EXPECT_FALSE(inv.unavailable_reason.empty());
  } else {
    EXPECT_TRUE(inv.built_with_cuda);
    EXPECT_GT(inv.driver_version, 0);
  }
}

TEST(GpuInventoryGpu, DevicesDescribeThemselves) {
  const GpuInventory inv = queryGpuInventory();
  if (inv.devices.empty()) SWAPSCOPE_GPU_UNAVAILABLE("no CUDA device: " + inv.unavailable_reason);
  EXPECT_GE(inv.driver_version, 13000) << "the CUDA 13 libraries need driver 580 or newer";
  for (const GpuDevice& d : inv.devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.total_memory, std::int64_t{1} << 30) << d.name;
    EXPECT_GE(d.compute_major, 7) << d.name << ": CUDA 13 needs compute capability 7.5 or newer";
    EXPECT_GT(d.multiprocessors, 0) << d.name;
  }
}

TEST(GpuInventory, FormatsCudaVersions) {
  EXPECT_EQ(formatCudaVersion(13000), "13.0");
  EXPECT_EQ(formatCudaVersion(12040), "12.4");
}

}  // namespace
}  // namespace swapscope
