// SPDX-License-Identifier: MIT
#include "analysis/pool_allocator.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace swapscope::rt {
namespace {

TEST(PoolAllocator, RoundsToAlignmentAndCountsRequestedBytes) {
  PoolAllocator pool(1024, 64);
  auto a = pool.allocate(10);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->offset, 0);
  EXPECT_EQ(a->reserved, 64);
  auto b = pool.allocate(100);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->offset, 64);
  EXPECT_EQ(b->reserved, 128);
  EXPECT_EQ(pool.stats().in_use, 110);
  EXPECT_EQ(pool.stats().reserved, 192);
  EXPECT_EQ(pool.stats().high_water, 110);
  EXPECT_EQ(pool.stats().high_water_end, 192);
  pool.release(*a, Fence{});
  EXPECT_EQ(pool.stats().in_use, 100);
  EXPECT_EQ(pool.stats().high_water, 110);
}

TEST(PoolAllocator, BestFitPicksTheSmallestHoleAndTheLowestOnTies) {
  PoolAllocator pool(64 * 10, 64);
  std::vector<PoolBlock> b;
  for (int i = 0; i < 10; ++i)
    b.push_back(*pool.allocate(64));
  // Holes: [64,192) of 2 units, [320,384) of 1 unit, [512,576) of 1 unit.
  pool.release(b[1], Fence{});
  pool.release(b[2], Fence{});
  pool.release(b[5], Fence{});
  pool.release(b[8], Fence{});
  auto one = pool.allocate(64);
  EXPECT_EQ(one->offset, 5 * 64);  // the smallest hole, the lower of the two of one unit
  auto two = pool.allocate(128);
  EXPECT_EQ(two->offset, 64);
  EXPECT_FALSE(pool.allocate(128));  // 64 B free in one hole only: too fragmented
  EXPECT_EQ(pool.largestFree(), 64);
}

TEST(PoolAllocator, MergesNeighboursAndKeepsTheLaterFencePerStream) {
  PoolAllocator pool(64 * 3, 64);
  auto a = *pool.allocate(64);
  auto b = *pool.allocate(64);
  auto c = *pool.allocate(64);
  pool.release(a, Fence{5, 0, 1});
  pool.release(c, Fence{2, 7, 0});
  EXPECT_DOUBLE_EQ(pool.fragmentation(), 0.5);
  pool.release(b, Fence{3, 3, 3});
  EXPECT_EQ(pool.largestFree(), 192);
  EXPECT_DOUBLE_EQ(pool.fragmentation(), 0.0);
  auto all = pool.allocate(192);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->fence, (Fence{5, 7, 3}));
}

TEST(PoolAllocator, SameCallsGiveSameOffsets) {
  auto run = [] {
    PoolAllocator pool(1 << 20, 256);
    std::vector<std::int64_t> offsets;
    std::vector<PoolBlock> live;
    for (int i = 0; i < 200; ++i) {
      if (i % 3 == 2 && !live.empty()) {
        pool.release(live[static_cast<std::size_t>(i) % live.size()], Fence{});
        live.erase(live.begin() + static_cast<long>(static_cast<std::size_t>(i) % live.size()));
      }
      auto b = pool.allocate(1000 + 37 * i);
      offsets.push_back(b ? b->offset : -1);
      if (b) live.push_back(*b);
    }
    return offsets;
  };
  EXPECT_EQ(run(), run());
}

TEST(PoolAllocator, RefusesBadCalls) {
  EXPECT_THROW(PoolAllocator(1024, 48), Error);
  PoolAllocator pool(1024, 64);
  EXPECT_FALSE(pool.allocate(2048));
  EXPECT_THROW(pool.allocate(0), Error);
  PoolBlock fake{128, 64, 64, {}};
  EXPECT_THROW(pool.release(fake, Fence{}), Error);
}

}  // namespace
}  // namespace swapscope::rt
