// SPDX-License-Identifier: MIT
#include "analysis/placement.h"

#include <algorithm>
#include <array>
#include <limits>
#include <tuple>

#include "analysis/reuse_delay.h"

namespace swapscope {

Placement planPlacement(const Gmap& gmap, const std::vector<GmapOp>& ops, std::int64_t k,
                        std::int64_t alignment, int delay, std::int64_t workspaceAlignment,
                        std::int64_t target) {
  struct Instance {
    std::int64_t size;
    std::int64_t align;
    std::size_t start, end;  // op indices; end exclusive (the release), max when never released
    std::size_t allocIndex;  // index among the Allocate ops
    std::int64_t offset = -1;
  };
  std::vector<Instance> inst;
  std::vector<std::size_t> open(gmap.buffers.size(), std::numeric_limits<std::size_t>::max());
  std::size_t allocs = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const GmapOp& op = ops[i];
    if (op.kind == GmapOpKind::Allocate) {
      const GmapBuffer& buf = gmap.buffers[static_cast<std::size_t>(op.buffer)];
      const std::int64_t align =
          buf.kind == BufferKind::Workspace ? std::max(alignment, workspaceAlignment) : alignment;
      const std::int64_t bytes = buf.size.at(k);
      const std::int64_t size = (bytes + align - 1) / align * align;
      open[static_cast<std::size_t>(op.buffer)] = inst.size();
      inst.push_back({size, align, i, std::numeric_limits<std::size_t>::max(), allocs++});
    } else if (op.kind == GmapOpKind::Release) {
      const std::size_t j = open[static_cast<std::size_t>(op.buffer)];
      if (j != std::numeric_limits<std::size_t>::max()) inst[j].end = i;
      open[static_cast<std::size_t>(op.buffer)] = std::numeric_limits<std::size_t>::max();
    }
  }
  if (delay > 0) {  // offloaded FMs' memory kept from reuse (analysis/reuse_delay.h)
    const std::vector<std::size_t> ends = delayedReleaseEnds(gmap, ops, delay);
    for (Instance& in : inst) {
      if (in.end < ops.size()) in.end = ends[in.end];
    }
  }
  // The buffers in one order, each into a gap left by the placed buffers whose lifetimes overlap
  // its own: the smallest that holds it (best fit, lowest offset on ties) or the lowest (first
  // fit). The gaps are those of the union of the overlapping buffers' byte ranges, so how the
  // overlapping buffers are found does not change the answer; two structures find them without
  // looking at every placed buffer:
  // - a buffer that overlaps every buffer to be placed (the weights and the other persistent
  //   buffers, alive from the setup on) joins `always`, the union of such byte ranges kept as
  //   disjoint ranges in offset order, so that a thousand weights packed side by side are one
  //   range; `occupied` is the union of every buffer placed, all of which such a buffer overlaps;
  // - any other buffer joins the time buckets its lifetime meets (a bucket is a run of op
  //   indices), each kept in (offset, end) order. A buffer that lives within one bucket (most of
  //   them: a step's outputs, gradients and workspaces) finds the buffers it overlaps in its
  //   bucket, or in the few buckets it meets, merged; one whose lifetime meets more looks
  //   through all the placed buffers outside `always`, kept in the same order.
  struct Span {
    std::size_t start, end;  // lifetime, op indices
    std::int64_t lo, hi;     // [offset, offset + size)
    bool operator<(const Span& o) const { return std::tie(lo, hi) < std::tie(o.lo, o.hi); }
  };
  const std::size_t horizon = std::max<std::size_t>(1, ops.size());
  std::size_t firstEnd = std::numeric_limits<std::size_t>::max(), lastStart = 0;
  for (const Instance& in : inst) {
    if (in.size == 0) continue;
    firstEnd = std::min(firstEnd, in.end);
    lastStart = std::max(lastStart, in.start);
  }
  const auto overlapsEveryone = [&](const Instance& in) {
    return in.start < firstEnd && lastStart < in.end;
  };
  constexpr std::size_t kOpsPerBucket = 32;
  const std::size_t buckets =
      std::min<std::size_t>(1024, (horizon + kOpsPerBucket - 1) / kOpsPerBucket);
  const std::size_t width = (horizon + buckets - 1) / buckets;
  const auto bucketRange = [&](const Instance& in) {
    const std::size_t last = std::max(in.start, std::min(in.end, horizon) - 1);  // last op alive
    return std::pair<std::size_t, std::size_t>{in.start / width, last / width};
  };
  using Ranges = std::vector<std::pair<std::int64_t, std::int64_t>>;  // disjoint, in offset order
  Ranges always;    // the union of the spans that overlap every buffer
  Ranges occupied;  // the union of every span placed
  // Adds [lo, hi) to `ranges`, joined to the ranges it touches or overlaps.
  const auto join = [](Ranges& ranges, std::int64_t lo, std::int64_t hi) {
    auto it = std::lower_bound(ranges.begin(), ranges.end(), lo,
                               [](const auto& r, std::int64_t v) { return r.second < v; });
    auto last = it;
    while (last != ranges.end() && last->first <= hi) {
      lo = std::min(lo, last->first);
      hi = std::max(hi, last->second);
      ++last;
    }
    it = ranges.erase(it, last);
    ranges.insert(it, {lo, hi});
  };
  std::vector<std::vector<Span>> timeBuckets(buckets);
  std::vector<Span> placed;  // every span not in `always`, for buffers that meet several buckets
  auto place = [&](const std::vector<std::size_t>& order, bool firstFit) {
    Placement p;
    p.offsets.assign(allocs, -1);
    always.clear();
    occupied.clear();
    placed.clear();
    for (std::vector<Span>& b : timeBuckets)
      b.clear();
    for (std::size_t idx : order) {
      Instance& a = inst[idx];
      if (a.size == 0) continue;
      const auto aligned = [&a](std::int64_t v) { return (v + a.align - 1) / a.align * a.align; };
      const auto [b0, b1] = bucketRange(a);
      // A buffer that overlaps every other one overlaps every placed one: its gaps are those of
      // `occupied`. Any other's are those of `always` and of the spans alive with it in the
      // buckets its lifetime meets, or in all of `placed` where it meets more than a few.
      const bool universal = overlapsEveryone(a);
      const Ranges& ranges = universal ? occupied : always;
      constexpr std::size_t kMergedBuckets = 4;
      std::array<std::pair<const Span*, const Span*>, kMergedBuckets> heads;
      std::size_t lists = 0;
      if (!universal && b1 - b0 < kMergedBuckets) {
        for (std::size_t b = b0; b <= b1; ++b) {
          const std::vector<Span>& list = timeBuckets[b];
          heads[lists++] = {list.data(), list.data() + list.size()};
        }
      } else if (!universal) {
        heads[lists++] = {placed.data(), placed.data() + placed.size()};
      }
      // The gaps of the union, the lists merged in offset order.
      std::int64_t best = -1, bestGap = std::numeric_limits<std::int64_t>::max(), cursor = 0;
      bool done = false;
      const auto visit = [&](std::int64_t lo, std::int64_t hi) {
        if (lo > cursor) {
          const std::int64_t gap = lo - cursor;
          if (aligned(cursor) + a.size <= lo && gap < bestGap) {
            best = aligned(cursor);
            bestGap = gap;
            if (firstFit) done = true;
          }
        }
        cursor = std::max(cursor, hi);
      };
      auto u = ranges.begin();
      while (!done) {
        std::size_t pick = lists;
        for (std::size_t h = 0; h < lists; ++h) {
          if (heads[h].first != heads[h].second &&
              (pick == lists || heads[h].first->lo < heads[pick].first->lo)) {
            pick = h;
          }
        }
        if (pick == lists) break;
        const Span& b = *heads[pick].first++;
        if (!(a.start < b.end && b.start < a.end)) continue;  // not alive at the same time
        for (; u != ranges.end() && u->first < b.lo && !done; ++u)
          visit(u->first, u->second);
        if (!done) visit(b.lo, b.hi);
      }
      for (; u != ranges.end() && !done; ++u)
        visit(u->first, u->second);
      a.offset = best >= 0 ? best : aligned(cursor);
      p.offsets[a.allocIndex] = a.offset;
      p.extent = std::max(p.extent, a.offset + a.size);
      if (target > 0 && p.extent > target) return p;  // this order cannot fit: stop it here
      const Span span{a.start, a.end, a.offset, a.offset + a.size};
      join(occupied, span.lo, span.hi);
      if (universal) {
        join(always, span.lo, span.hi);
      } else {
        placed.insert(std::upper_bound(placed.begin(), placed.end(), span), span);
        for (std::size_t b = b0; b <= b1; ++b) {
          std::vector<Span>& list = timeBuckets[b];
          list.insert(std::upper_bound(list.begin(), list.end(), span), span);
        }
      }
    }
    return p;
  };
  // The orders tried, until one fits `target`: largest first (ties: earliest), then longest-lived
  // first, then largest area (bytes x ops alive), then in allocation order, as the run time would.
  const auto life = [&](std::size_t i) {
    return static_cast<std::int64_t>(std::min(inst[i].end, ops.size()) - inst[i].start);
  };
  // Each order as a sort key per buffer, ties broken by the buffer's index (a stable sort).
  struct Key {
    std::int64_t first;
    double area;
    std::int64_t second;
    std::size_t index;
    bool operator<(const Key& o) const {
      return std::tie(first, area, second, index) < std::tie(o.first, o.area, o.second, o.index);
    }
  };
  const auto key = [&](int kind, std::size_t i) -> Key {
    const auto start = static_cast<std::int64_t>(inst[i].start);
    switch (kind) {
      case 0:
        return {-inst[i].size, 0, start, i};
      case 1:
        return {-life(i), 0, -inst[i].size, i};
      case 2:
        return {0, -static_cast<double>(inst[i].size) * static_cast<double>(life(i)), start, i};
      default:
        return {start, 0, 0, i};
    }
  };
  Placement p;
  std::vector<Key> keys(inst.size());
  std::vector<std::size_t> order(inst.size());
  for (int kind = 0; kind < 4; ++kind) {
    for (std::size_t i = 0; i < inst.size(); ++i)
      keys[i] = key(kind, i);
    std::sort(keys.begin(), keys.end());
    for (std::size_t i = 0; i < order.size(); ++i)
      order[i] = keys[i].index;
    for (const bool firstFit : {false, true}) {
      Placement q = place(order, firstFit);
      if (p.offsets.empty() || q.extent < p.extent) p = std::move(q);
      if (p.extent <= target) return p;
    }
  }
  return p;
}

PlacementMemo::Known PlacementMemo::get(int delay, bool moved, std::int64_t alignment) const {
  const std::lock_guard<std::mutex> lock(m_mutex);
  const auto it = m_known.find({delay, moved, alignment});
  return it == m_known.end() ? Known{} : it->second;
}

void PlacementMemo::put(int delay, bool moved, std::int64_t alignment, const Known& k) {
  const std::lock_guard<std::mutex> lock(m_mutex);
  Known& known = m_known[{delay, moved, alignment}];  // merged: another thread may have put too
  if (k.fitted > 0) known.fitted = known.fitted > 0 ? std::min(known.fitted, k.fitted) : k.fitted;
  known.least = std::max(known.least, k.least);
}

AheadOfTime placeAhead(const Gmap& gmap, const std::vector<int>& move_to, std::int64_t k,
                       std::int64_t budget, int delay, const std::vector<std::int64_t>& alignments,
                       std::int64_t workspaceAlignment, PlacementMemo* memo,
                       const std::function<bool(int, bool)>& matters) {
  AheadOfTime out;
  const bool moves = std::any_of(move_to.begin(), move_to.end(), [](int s) { return s > 0; });
  std::vector<GmapOp> orders[2];  // without and with the moves, built when first needed
  struct Attempt {
    int delay;
    std::int64_t alignment;
  };
  std::vector<Attempt> attempts;
  if (delay > 0 && !alignments.empty()) attempts.push_back({delay, alignments.front()});
  for (const std::int64_t a : alignments)
    attempts.push_back({0, a});
  // Whether an outcome from attempt `from` (hoisted first) on, or none packing, matters.
  const auto stillMatters = [&](std::size_t from, bool hoistFirst) {
    if (matters(0, moves)) return true;
    for (std::size_t i = from; i < attempts.size(); ++i) {
      for (const bool hoist : {true, false}) {
        if ((hoist && !moves) || (i == from && hoist && !hoistFirst)) continue;
        if (matters(attempts[i].delay, hoist)) return true;
      }
    }
    return false;
  };
  for (std::size_t ai = 0; ai < attempts.size(); ++ai) {
    const Attempt& a = attempts[ai];
    for (const bool hoist : {true, false}) {
      if (hoist && !moves) continue;
      std::vector<GmapOp>& ops = orders[hoist ? 1 : 0];
      if (ops.empty()) ops = executionOrder(gmap, hoist ? move_to : std::vector<int>{});
      std::int64_t extent = 0;
      std::vector<std::int64_t> offsets;
      if (memo) {
        PlacementMemo::Known known = memo->get(a.delay, hoist, a.alignment);
        if (known.fitted > 0 && known.fitted <= budget) {
          extent = known.fitted;
        } else if (known.least > budget) {
          extent = known.least;
        } else if (const std::int64_t bound = delayedPeak(gmap, ops, k, a.delay, a.alignment);
                   bound > budget) {
          extent = bound;  // no order packs below it: not placed
        } else {
          if (matters && !stillMatters(ai, hoist)) {
            out.undecided = true;
            return out;
          }
          Placement p =
              planPlacement(gmap, ops, k, a.alignment, a.delay, workspaceAlignment, budget);
          extent = p.extent;
          // None fitted: every order stopped beyond the budget, each at an extent its full
          // placement cannot be below; the least of them is returned.
          if (extent <= budget) {
            known.fitted = extent;
          } else {
            known.least = std::max(known.least, extent);
          }
          memo->put(a.delay, hoist, a.alignment, known);
        }
      } else {
        if (matters && !stillMatters(ai, hoist)) {
          out.undecided = true;
          return out;
        }
        Placement p = planPlacement(gmap, ops, k, a.alignment, a.delay, workspaceAlignment, budget);
        extent = p.extent;
        offsets = std::move(p.offsets);
      }
      if (extent <= budget) {
        out.placed = PlacedSchedule{a.delay, hoist, a.alignment, std::move(offsets)};
        return out;
      }
      if (a.delay == 0)
        out.best_extent = out.best_extent == 0 ? extent : std::min(out.best_extent, extent);
    }
  }
  return out;
}

}  // namespace swapscope
