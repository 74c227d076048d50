// SPDX-License-Identifier: MIT
/// @brief The deterministic allocator that runs inside the one budget-sized pool (docs/runtime.md).
/// It is part of the analysis library, beside the offline placement, so that the planner replays
/// the executor's run-time placement (analysis/placement.h's placeAtRunTime) as it runs.
///
/// Policy: best fit. An allocation of `bytes` is rounded up to the alignment and carved from the
/// start of the smallest free run that holds it; ties go to the lowest offset. A released block
/// joins the free space around it. The same sequence of calls always yields the same offsets, so
/// a dry run before a training run finds out exactly whether the plan fits. allocateAt() places a
/// block at a planned offset instead.
///
/// Free space is kept as pieces, each with a Fence: the last work on each stream that used its
/// bytes. Adjacent pieces form one free run for placement but merge only when their fences agree,
/// so whoever is handed memory waits for the last users of exactly those bytes (the later fence
/// per stream where it spans pieces). The allocator itself never waits.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>

namespace swapscope::rt {

inline constexpr int kStreamCount = 3;
/// Per stream, the sequence number of the last task that must complete (0: nothing to wait for).
using Fence = std::array<std::uint64_t, kStreamCount>;
inline Fence fenceMax(const Fence& a, const Fence& b) {
  Fence r;
  for (int i = 0; i < kStreamCount; ++i)
    r[i] = a[i] > b[i] ? a[i] : b[i];
  return r;
}

struct PoolBlock {
  std::int64_t offset = 0;
  std::int64_t bytes = 0;     ///< what was asked for
  std::int64_t reserved = 0;  ///< what was carved out (bytes rounded up to the alignment)
  Fence fence{};              ///< wait for this before using the memory
};

struct PoolStats {
  std::int64_t capacity = 0;
  std::int64_t in_use = 0;          ///< bytes asked for by the live blocks
  std::int64_t reserved = 0;        ///< bytes carved out for them (alignment included)
  std::int64_t high_water = 0;      ///< the largest in_use so far
  std::int64_t high_water_end = 0;  ///< the highest end offset any block reached
  std::int64_t live_blocks = 0;
  std::int64_t allocations = 0;  ///< successful allocations so far
};

class PoolAllocator {
 public:
  /// `alignment` must be a power of two.
  PoolAllocator(std::int64_t capacity, std::int64_t alignment);

  /// A block of at least `bytes` (> 0), or nullopt when no free block is large enough.
  /// `alignment` (a power of two; 0: the pool's) above the pool's aligns the block's offset to it.
  std::optional<PoolBlock> allocate(std::int64_t bytes, std::int64_t alignment = 0);
  /// A block of `bytes` at exactly `offset` (aligned), or nullopt when that range is not free.
  /// The executor places buffers by a precomputed plan (docs/runtime.md) through this call.
  std::optional<PoolBlock> allocateAt(std::int64_t offset, std::int64_t bytes);
  /// Returns a block; `fence` is the last use of its bytes. Throws Error(Runtime) for a block
  /// that is not live (a broken caller, never a user error).
  void release(const PoolBlock& block, const Fence& fence);

  const PoolStats& stats() const { return m_stats; }
  /// The largest free block now: a walk over the free pieces, so found when asked (kept up to
  /// date on every allocation and release, it made an iteration of thousands of buffers
  /// quadratic in them).
  std::int64_t largestFree() const;
  /// 1 - largest free block / all free bytes: 0 when the free space is one block.
  double fragmentation() const;
  std::int64_t alignment() const { return m_alignment; }
  /// Starts a new high-water measurement from the current use.
  void resetHighWater();

 private:
  struct FreeBlock {
    std::int64_t bytes;
    Fence fence;
  };
  PoolBlock carve(std::int64_t offset, std::int64_t bytes, std::int64_t need);
  /// Calls f(start, size) for every run of adjacent free pieces, in address order.
  template <typename F>
  void forEachRun(F&& f) const {
    std::int64_t start = -1, end = -1;
    for (const auto& [offset, piece] : m_free) {
      if (offset != end) {
        if (start >= 0) f(start, end - start);
        start = offset;
      }
      end = offset + piece.bytes;
    }
    if (start >= 0) f(start, end - start);
  }

  std::int64_t m_alignment;
  std::map<std::int64_t, FreeBlock> m_free;     // by offset
  std::map<std::int64_t, std::int64_t> m_live;  // offset -> reserved bytes
  PoolStats m_stats;
};

}  // namespace swapscope::rt
