// SPDX-License-Identifier: MIT
/// @brief A map of at most `capacity` shared values, least recently used first out, safe to share
/// between threads: the planner's caches (a swap set's GMAP, the step times at k, a set's
/// schedule at k, accudnn's pin rounds at k). With getOrMake, a value is made outside the lock,
/// so two threads may make the same one; the first kept wins and both get it. With put, the last
/// one put is kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace swapscope::perf {

template <typename Key, typename Value, typename Hash = std::hash<Key>>
class BoundedCache {
 public:
  explicit BoundedCache(std::size_t capacity) : m_capacity(capacity < 1 ? 1 : capacity) {}

  /// The value kept for `key`, else `make()`'s, kept now (evicting the least recently used one
  /// past the capacity). `make` runs unlocked and may throw: nothing is kept then.
  template <typename Make>
  std::shared_ptr<const Value> getOrMake(const Key& key, Make&& make) const {
    {
      const std::lock_guard<std::mutex> lock(m_mutex);
      if (auto it = m_entries.find(key); it != m_entries.end()) {
        it->second.last_use = ++m_tick;
        return it->second.value;
      }
    }
    std::shared_ptr<const Value> made = make();
    const std::lock_guard<std::mutex> lock(m_mutex);
    auto [it, inserted] = m_entries.try_emplace(key, Entry{std::move(made), ++m_tick});
    if (!inserted) return it->second.value;  // another thread made it meanwhile
    std::shared_ptr<const Value> value = it->second.value;
    evictPastCapacity();
    return value;
  }

  /// The value kept for `key`; null where none is.
  std::shared_ptr<const Value> get(const Key& key) const {
    const std::lock_guard<std::mutex> lock(m_mutex);
    const auto it = m_entries.find(key);
    if (it == m_entries.end()) return nullptr;
    it->second.last_use = ++m_tick;
    return it->second.value;
  }

  /// Keeps `value` for `key`, in place of the one kept before.
  void put(const Key& key, std::shared_ptr<const Value> value) const {
    const std::lock_guard<std::mutex> lock(m_mutex);
    m_entries.insert_or_assign(key, Entry{std::move(value), ++m_tick});
    evictPastCapacity();
  }

  std::size_t size() const {
    const std::lock_guard<std::mutex> lock(m_mutex);
    return m_entries.size();
  }

 private:
  /// Drops the least recently used entry where there are more than the capacity (locked).
  void evictPastCapacity() const {
    if (m_entries.size() <= m_capacity) return;
    auto oldest = m_entries.begin();
    for (auto i = m_entries.begin(); i != m_entries.end(); ++i) {
      if (i->second.last_use < oldest->second.last_use) oldest = i;
    }
    m_entries.erase(oldest);
  }
  struct Entry {
    std::shared_ptr<const Value> value;
    std::uint64_t last_use = 0;
  };
  std::size_t m_capacity;
  mutable std::mutex m_mutex;
  mutable std::unordered_map<Key, Entry, Hash> m_entries;
  mutable std::uint64_t m_tick = 0;
};

}  // namespace swapscope::perf
