// SPDX-License-Identifier: MIT
#include "analysis/pool_allocator.h"

#include <algorithm>
#include <string>

#include "common/error.h"

namespace swapscope::rt {

PoolAllocator::PoolAllocator(std::int64_t capacity, std::int64_t alignment)
    : m_alignment(alignment) {
  if (alignment <= 0 || (alignment & (alignment - 1)) != 0) {
    throw Error(ErrorKind::Runtime,
                "pool alignment must be a power of two, not " + std::to_string(alignment));
  }
  if (capacity < 0) throw Error(ErrorKind::Runtime, "pool capacity cannot be negative");
  m_stats.capacity = capacity;
  if (capacity > 0) m_free.emplace(0, FreeBlock{capacity, Fence{}});
}

std::optional<PoolBlock> PoolAllocator::allocate(std::int64_t bytes, std::int64_t alignment) {
  if (bytes <= 0) {
    throw Error(ErrorKind::Runtime, "pool allocation of " + std::to_string(bytes) + " bytes");
  }
  if (alignment != 0 && (alignment < 0 || (alignment & (alignment - 1)) != 0)) {
    throw Error(ErrorKind::Runtime, "pool allocation alignment must be a power of two, not " +
                                        std::to_string(alignment));
  }
  const std::int64_t align = std::max(alignment, m_alignment);
  if (bytes > m_stats.capacity) return std::nullopt;
  const std::int64_t need = (bytes + m_alignment - 1) & ~(m_alignment - 1);
  // Best fit over runs of adjacent free pieces, from the run's first offset aligned to `align`.
  std::int64_t best = -1, bestSize = 0;
  forEachRun([&](std::int64_t start, std::int64_t size) {
    const std::int64_t at = (start + align - 1) & ~(align - 1);
    if (at + need <= start + size && (best < 0 || size < bestSize)) {
      best = at;
      bestSize = size;
    }
  });
  if (best < 0) return std::nullopt;
  return carve(best, bytes, need);
}

std::optional<PoolBlock> PoolAllocator::allocateAt(std::int64_t offset, std::int64_t bytes) {
  if (bytes <= 0) {
    throw Error(ErrorKind::Runtime, "pool allocation of " + std::to_string(bytes) + " bytes");
  }
  const std::int64_t need = (bytes + m_alignment - 1) & ~(m_alignment - 1);
  if (offset < 0 || offset % m_alignment != 0) return std::nullopt;
  // The range must be covered by adjacent free pieces.
  auto it = m_free.upper_bound(offset);
  if (it == m_free.begin()) return std::nullopt;
  --it;
  std::int64_t covered = it->first;
  for (; it != m_free.end() && it->first == covered && covered < offset + need; ++it)
    covered += it->second.bytes;
  if (covered < offset + need) return std::nullopt;
  return carve(offset, bytes, need);
}

PoolBlock PoolAllocator::carve(std::int64_t offset, std::int64_t bytes, std::int64_t need) {
  // Take [offset, offset + need) out of the pieces that cover it; the block must wait for the
  // last users of every piece it takes bytes from, and of no other.
  Fence fence{};
  auto it = std::prev(m_free.upper_bound(offset));
  while (it != m_free.end() && it->first < offset + need) {
    const std::int64_t start = it->first, end = it->first + it->second.bytes;
    const FreeBlock piece = it->second;
    fence = fenceMax(fence, piece.fence);
    it = m_free.erase(it);
    if (start < offset) m_free.emplace(start, FreeBlock{offset - start, piece.fence});
    if (end > offset + need) {
      m_free.emplace(offset + need, FreeBlock{end - offset - need, piece.fence});
      break;
    }
  }
  PoolBlock block{.offset = offset, .bytes = bytes, .reserved = need, .fence = fence};
  m_live.emplace(offset, need);
  m_stats.in_use += bytes;
  m_stats.reserved += need;
  m_stats.high_water = std::max(m_stats.high_water, m_stats.in_use);
  m_stats.high_water_end = std::max(m_stats.high_water_end, offset + need);
  ++m_stats.live_blocks;
  ++m_stats.allocations;
  return block;
}

void PoolAllocator::release(const PoolBlock& block, const Fence& fence) {
  auto live = m_live.find(block.offset);
  if (live == m_live.end() || live->second != block.reserved) {
    throw Error(ErrorKind::Runtime, "pool release of a block at offset " +
                                        std::to_string(block.offset) + " that is not live");
  }
  m_live.erase(live);
  m_stats.in_use -= block.bytes;
  m_stats.reserved -= block.reserved;
  --m_stats.live_blocks;

  // Adjacent free pieces merge only when their fences agree: a piece keeps the fence of the
  // bytes it holds, so a later block waits only for the users of the bytes it reuses.
  std::int64_t offset = block.offset;
  FreeBlock merged{block.reserved, fence};
  auto next = m_free.lower_bound(offset);
  if (next != m_free.end() && next->first == offset + merged.bytes && next->second.fence == fence) {
    merged.bytes += next->second.bytes;
    next = m_free.erase(next);
  }
  if (next != m_free.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second.bytes == offset && prev->second.fence == fence) {
      offset = prev->first;
      merged.bytes += prev->second.bytes;
      m_free.erase(prev);
    }
  }
  m_free.emplace(offset, merged);
}

void PoolAllocator::resetHighWater() {
  m_stats.high_water = m_stats.in_use;
  m_stats.high_water_end = 0;
  for (const auto& [offset, reserved] : m_live)
    m_stats.high_water_end = std::max(m_stats.high_water_end, offset + reserved);
}

std::int64_t PoolAllocator::largestFree() const {
  std::int64_t largest = 0;
  forEachRun([&](std::int64_t, std::int64_t size) { largest = std::max(largest, size); });
  return largest;
}

double PoolAllocator::fragmentation() const {
  const std::int64_t free = m_stats.capacity - m_stats.reserved;
  return free > 0 ? 1.0 - static_cast<double>(largestFree()) / static_cast<double>(free) : 0.0;
}

}  // namespace swapscope::rt
