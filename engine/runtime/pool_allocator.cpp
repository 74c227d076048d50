// SPDX-License-Identifier: MIT
#include "runtime/pool_allocator.h"

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
  updateLargestFree();
}

std::optional<PoolBlock> PoolAllocator::allocate(std::int64_t bytes) {
  if (bytes <= 0)
    throw Error(ErrorKind::Runtime, "pool allocation of " + std::to_string(bytes) + " bytes");
  if (bytes > m_stats.capacity) return std::nullopt;
  const std::int64_t need = (bytes + m_alignment - 1) & ~(m_alignment - 1);
  auto best = m_free.end();
  for (auto it = m_free.begin(); it != m_free.end(); ++it) {
    if (it->second.bytes >= need && (best == m_free.end() || it->second.bytes < best->second.bytes))
      best = it;
  }
  if (best == m_free.end()) return std::nullopt;
  return carve(best, best->first, bytes, need);
}

std::optional<PoolBlock> PoolAllocator::allocateAt(std::int64_t offset, std::int64_t bytes) {
  if (bytes <= 0)
    throw Error(ErrorKind::Runtime, "pool allocation of " + std::to_string(bytes) + " bytes");
  const std::int64_t need = (bytes + m_alignment - 1) & ~(m_alignment - 1);
  if (offset < 0 || offset % m_alignment != 0) return std::nullopt;
  auto it = m_free.upper_bound(offset);
  if (it == m_free.begin()) return std::nullopt;
  --it;
  if (it->first + it->second.bytes < offset + need) return std::nullopt;
  return carve(it, offset, bytes, need);
}

PoolBlock PoolAllocator::carve(std::map<std::int64_t, FreeBlock>::iterator free,
                               std::int64_t offset, std::int64_t bytes, std::int64_t need) {
  const std::int64_t start = free->first, end = free->first + free->second.bytes;
  const Fence fence = free->second.fence;
  m_free.erase(free);
  if (offset > start) m_free.emplace(start, FreeBlock{offset - start, fence});
  if (offset + need < end) m_free.emplace(offset + need, FreeBlock{end - offset - need, fence});
  PoolBlock block{offset, bytes, need, fence};
  m_live.emplace(offset, need);

  m_stats.in_use += bytes;
  m_stats.reserved += need;
  m_stats.high_water = std::max(m_stats.high_water, m_stats.in_use);
  m_stats.high_water_end = std::max(m_stats.high_water_end, offset + need);
  ++m_stats.live_blocks;
  ++m_stats.allocations;
  updateLargestFree();
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

  std::int64_t offset = block.offset;
  FreeBlock merged{block.reserved, fence};
  auto next = m_free.lower_bound(offset);
  if (next != m_free.end() && next->first == offset + merged.bytes) {
    merged.bytes += next->second.bytes;
    merged.fence = fenceMax(merged.fence, next->second.fence);
    next = m_free.erase(next);
  }
  if (next != m_free.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second.bytes == offset) {
      offset = prev->first;
      merged.bytes += prev->second.bytes;
      merged.fence = fenceMax(merged.fence, prev->second.fence);
      m_free.erase(prev);
    }
  }
  m_free.emplace(offset, merged);
  updateLargestFree();
}

void PoolAllocator::resetHighWater() {
  m_stats.high_water = m_stats.in_use;
  m_stats.high_water_end = 0;
  for (const auto& [offset, reserved] : m_live)
    m_stats.high_water_end = std::max(m_stats.high_water_end, offset + reserved);
}

void PoolAllocator::updateLargestFree() {
  std::int64_t largest = 0;
  for (const auto& [offset, block] : m_free)
    largest = std::max(largest, block.bytes);
  m_stats.largest_free = largest;
}

}  // namespace swapscope::rt
