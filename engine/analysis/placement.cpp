// SPDX-License-Identifier: MIT
#include "analysis/placement.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <functional>
#include <limits>
#include <tuple>
#include <utility>

#include "analysis/pool_allocator.h"
#include "analysis/reuse_delay.h"
#include "common/error.h"

namespace swapscope {
namespace {

/// One allocation of the ops being placed.
struct Instance {
  std::int64_t size;
  std::int64_t align;
  std::size_t start, end;  // op indices; end exclusive (the release), max when never released
  std::size_t allocIndex;  // index among the Allocate ops
  std::int64_t offset = -1;
};

/// The Allocate ops of `ops` as instances, sizes at k rounded to their alignment, lifetimes to
/// their Release (delayed by `delay` for offloaded FMs); `allocs` is the count of Allocate ops.
std::vector<Instance> instancesOf(const Gmap& gmap, const std::vector<GmapOp>& ops, std::int64_t k,
                                  std::int64_t alignment, int delay,
                                  std::int64_t workspaceAlignment, std::size_t& allocs) {
  std::vector<Instance> inst;
  std::vector<std::size_t> open(gmap.buffers.size(), std::numeric_limits<std::size_t>::max());
  allocs = 0;
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
  return inst;
}

using Ranges = std::vector<std::pair<std::int64_t, std::int64_t>>;  // disjoint, in offset order
struct Span {
  std::size_t start, end;  // lifetime, op indices
  std::int64_t lo, hi;     // [offset, offset + size)
};
/// What the buffers placed so far occupy.
struct Placed {
  Ranges always;    // the union of the spans that overlap every buffer
  Ranges occupied;  // the union of every span placed
  std::vector<std::vector<Span>> edges;
  std::vector<Ranges> covered;
  std::vector<Ranges> startTree;  // node i: children 2i, 2i + 1; leaf b: leaves + b
  std::size_t longLeft = 0;       // long-lived buffers of the order not placed yet
};

/// What a Packer fills and clears, kept per thread from one placement to the next: the planner
/// places thousands of times, and allocating the per-bucket lists anew each time took a few per
/// cent of a placement (6 % of a drag of ResNet-152's budget). Sized by each Packer; the lists
/// keep their capacity.
struct PackerStorage {
  Placed placed;
  Placed saved;  // placed where best and first fit part (placeBoth)
  Ranges gathered;
  std::vector<std::size_t> runEnds;
  std::vector<std::pair<const Ranges::value_type*, const Ranges::value_type*>> runs;
  std::vector<std::size_t> buckets0, buckets1;
  std::vector<char> universal, longLived;
};

// The buffers in one order, each into a gap left by the placed buffers whose lifetimes overlap
// its own: the smallest that holds it (best fit, lowest offset on ties) or the lowest (first
// fit). The gaps are those of the union of the overlapping buffers' byte ranges, so how the
// overlapping buffers are found does not change the answer. Structures that find them without
// looking at every placed buffer, each a union of byte ranges where every buffer in it is
// known to overlap the one being placed, or a short list checked buffer by buffer:
// - a buffer that overlaps every buffer to be placed (the weights and the other persistent
//   buffers, alive from the setup on) joins `always`, the union of such byte ranges kept as
//   disjoint ranges in offset order, so that a thousand weights packed side by side are one
//   range; `occupied` is the union of every buffer placed, all of which such a buffer overlaps;
// - the op indices are cut into time buckets. Any other buffer joins `edges` of the first and
//   the last bucket its lifetime meets (checked one by one), and `covered` of each bucket in
//   between, the union of the buffers alive through all of that bucket (a buffer alive in a
//   bucket overlaps every one alive through all of it). A buffer that meets a few buckets
//   gathers those of its buckets;
// - one that meets more overlaps those alive with it in its first and last bucket and every
//   buffer that starts in a bucket between them (after its start, before its end):
//   `startTree`, a segment tree over the buckets, keeps for each node the union of the buffers
//   that start in its buckets, so that a few unions hold them all.
// The lists a buffer gathers are each in offset order, and the gaps of their union are read off
// in one pass over them all, taking the least start offset first.
class Packer {
 public:
  Packer(std::vector<Instance>& inst, std::size_t allocs, std::size_t ops, PackerStorage& storage)
      : m_inst(inst),
        m_allocs(allocs),
        m_horizon(std::max<std::size_t>(1, ops)),
        m_placed(storage.placed),
        m_saved(storage.saved),
        m_gathered(storage.gathered),
        m_runEnds(storage.runEnds),
        m_runs(storage.runs),
        m_buckets0(storage.buckets0),
        m_buckets1(storage.buckets1),
        m_universal(storage.universal),
        m_longLived(storage.longLived) {
    for (const Instance& in : m_inst) {
      if (in.size == 0) continue;
      m_firstEnd = std::min(m_firstEnd, in.end);
      m_lastStart = std::max(m_lastStart, in.start);
    }
    m_buckets = std::min<std::size_t>(1024, (m_horizon + kOpsPerBucket - 1) / kOpsPerBucket);
    m_width = (m_horizon + m_buckets - 1) / m_buckets;
    while (m_leaves < m_buckets)
      m_leaves *= 2;
    m_placed.edges.resize(m_buckets);
    m_placed.covered.resize(m_buckets);
    m_placed.startTree.resize(2 * m_leaves);
    m_longLived.assign(m_inst.size(), 0);
    m_universal.assign(m_inst.size(), 0);
    m_buckets0.resize(m_inst.size());
    m_buckets1.resize(m_inst.size());
    for (std::size_t i = 0; i < m_inst.size(); ++i) {
      const auto [b0, b1] = bucketRange(m_inst[i]);
      m_buckets0[i] = b0;
      m_buckets1[i] = b1;
      m_universal[i] = overlapsEveryone(m_inst[i]);
      m_longLived[i] = m_inst[i].size > 0 && !m_universal[i] && b1 - b0 >= kFewBuckets;
    }
  }

  /// The instances in `order`, each at the best fit; stops once the extent passes `target` (0:
  /// never). Where that extent is not within `enough`, `first` is the same at the first fit (else
  /// it is left empty, not placed). The two share the buffers they place at the same offsets, up
  /// to the first where best and first fit part: those are placed once.
  Placement placeBoth(const std::vector<std::size_t>& order, std::int64_t target,
                      std::int64_t enough, Placement& first);

 private:
  static constexpr std::size_t kOpsPerBucket = 128;
  static constexpr std::size_t kFewBuckets = 4;

  bool overlapsEveryone(const Instance& in) const {
    return in.start < m_firstEnd && m_lastStart < in.end;
  }
  std::pair<std::size_t, std::size_t> bucketRange(const Instance& in) const {
    const std::size_t last = std::max(in.start, std::min(in.end, m_horizon) - 1);  // alive last
    return {in.start / m_width, last / m_width};
  }
  /// Adds [lo, hi) to `ranges`, joined to the ranges it touches or overlaps.
  static void join(Ranges& ranges, std::int64_t lo, std::int64_t hi) {
    auto it = std::lower_bound(ranges.begin(), ranges.end(), lo,
                               [](const auto& r, std::int64_t v) { return r.second < v; });
    auto last = it;
    while (last != ranges.end() && last->first <= hi) {
      lo = std::min(lo, last->first);
      hi = std::max(hi, last->second);
      ++last;
    }
    if (it == last) {  // touches none: a range of its own
      ranges.insert(it, {lo, hi});
      return;
    }
    *it = {lo, hi};  // the first it touches becomes the joined range, the others go
    ranges.erase(it + 1, last);
  }
  /// The lists of byte ranges that hold what `a` (not universal) overlaps, each in offset order,
  /// as runs into m_runs (the edges' spans alive with `a` copied into m_gathered, the unions
  /// read in place).
  void gather(const Instance& a, std::size_t b0, std::size_t b1);
  /// Records `a`, placed, in the structures.
  void add(const Instance& a, std::size_t b0, std::size_t b1, bool universal, bool keepStarts);

  enum class Fit : std::uint8_t { Best, First, Both };
  /// The best-fit and the first-fit offset of `a` among the placed buffers it overlaps; only the
  /// one `fit` asks for is exact where it asks for one.
  std::pair<std::int64_t, std::int64_t> fits(const Instance& a, std::size_t b0, std::size_t b1,
                                             bool universal, Fit fit);
  /// Places order[from..] at the best or the first fit into `p`; stops once past `target` (0:
  /// never). Fit::Both places at the best fit while it is the first fit too, and returns the
  /// index of the first buffer where they part, not placed; else order.size().
  std::size_t placeFrom(const std::vector<std::size_t>& order, std::size_t from, Fit fit,
                        std::int64_t target, Placement& p);
  /// Puts `a` at `offset` in `p`.
  static void put(Instance& a, std::int64_t offset, Placement& p);
  void reset(const std::vector<std::size_t>& order);

  std::vector<Instance>& m_inst;
  std::size_t m_allocs, m_horizon;
  std::size_t m_firstEnd = std::numeric_limits<std::size_t>::max(), m_lastStart = 0;
  std::size_t m_buckets = 1, m_width = 1, m_leaves = 1;
  Placed& m_placed;
  Placed& m_saved;                      // m_placed where best and first fit part (placeBoth)
  Ranges& m_gathered;                   // the edges' spans one buffer overlaps
  std::vector<std::size_t>& m_runEnds;  // where each of m_gathered's runs in offset order ends
  /// The runs in offset order whose union is what one buffer overlaps: m_gathered's, and lists
  /// of the structures read in place.
  std::vector<std::pair<const Ranges::value_type*, const Ranges::value_type*>>& m_runs;
  // Per instance, the same in every order: its first and last bucket, whether it overlaps every
  // other one, and whether it meets more than a few buckets without.
  std::vector<std::size_t>& m_buckets0;
  std::vector<std::size_t>& m_buckets1;
  std::vector<char>& m_universal;
  std::vector<char>& m_longLived;
};

void Packer::gather(const Instance& a, std::size_t b0, std::size_t b1) {
  // Every list read is in offset order (each bucket's edges too, kept sorted as they are added):
  // each is one run, and fits() reads the runs together, in offset order, without merging them
  // into one list (copying and merging them took 7 % of a placement of ResNet-152).
  m_gathered.clear();
  m_runEnds.clear();
  m_runs.clear();
  // The buckets whose edges and covered unions it reads: each one it meets where it meets a few,
  // else its first and last (the start tree holds those between).
  const bool few = b1 - b0 < kFewBuckets;
  const std::size_t stride = few ? 1 : b1 - b0;
  // The edges' spans alive with `a`, a run per bucket.
  for (std::size_t b = b0; b <= b1; b += stride) {
    const std::size_t before = m_gathered.size();
    for (const Span& s : m_placed.edges[b]) {
      if (a.start < s.end && s.start < a.end) m_gathered.emplace_back(s.lo, s.hi);
    }
    if (m_gathered.size() > before) m_runEnds.push_back(m_gathered.size());
  }
  std::size_t begin = 0;
  for (const std::size_t end : m_runEnds) {  // m_gathered is complete: its storage stays put
    m_runs.emplace_back(m_gathered.data() + begin, m_gathered.data() + end);
    begin = end;
  }
  const auto append = [&](const Ranges& r) {
    if (!r.empty()) m_runs.emplace_back(r.data(), r.data() + r.size());
  };
  for (std::size_t b = b0; b <= b1; b += stride)
    append(m_placed.covered[b]);
  if (!few) {
    // The nodes that cover the buckets b0 + 1 .. b1 - 1, bottom up.
    for (std::size_t l = m_leaves + b0 + 1, r = m_leaves + b1; l < r; l /= 2, r /= 2) {
      if (l & 1) append(m_placed.startTree[l++]);
      if (r & 1) append(m_placed.startTree[--r]);
    }
  }
  append(m_placed.always);
}

void Packer::add(const Instance& a, std::size_t b0, std::size_t b1, bool universal,
                 bool keepStarts) {
  const Span span{a.start, a.end, a.offset, a.offset + a.size};
  join(m_placed.occupied, span.lo, span.hi);
  if (universal) {
    join(m_placed.always, span.lo, span.hi);
    return;
  }
  // Each bucket's edges in offset order (ties: in the order placed).
  const auto edge = [&span](std::vector<Span>& list) {
    list.insert(std::upper_bound(list.begin(), list.end(), span.lo,
                                 [](std::int64_t lo, const Span& x) { return lo < x.lo; }),
                span);
  };
  edge(m_placed.edges[b0]);
  if (b1 != b0) edge(m_placed.edges[b1]);
  for (std::size_t b = b0 + 1; b < b1; ++b)
    join(m_placed.covered[b], span.lo, span.hi);
  if (!keepStarts) return;
  for (std::size_t node = m_leaves + b0; node >= 1; node /= 2)
    join(m_placed.startTree[node], span.lo, span.hi);
}

std::pair<std::int64_t, std::int64_t> Packer::fits(const Instance& a, std::size_t b0,
                                                   std::size_t b1, bool universal, Fit fit) {
  // A buffer that overlaps every other one overlaps every placed one: its gaps are those of
  // `occupied`.
  if (universal) {
    m_runs.clear();
    if (!m_placed.occupied.empty())
      m_runs.emplace_back(m_placed.occupied.data(),
                          m_placed.occupied.data() + m_placed.occupied.size());
  } else {
    gather(a, b0, b1);
  }
  // Alignments are powers of two in practice: a mask then, where a division is the slowest step.
  const std::int64_t mask = (a.align & (a.align - 1)) == 0 ? a.align - 1 : -1;
  const auto aligned = [&a, mask](std::int64_t v) {
    return mask >= 0 ? (v + mask) & ~mask : (v + a.align - 1) / a.align * a.align;
  };
  // The gaps of the union, in offset order: the runs' ranges taken by start offset, the least
  // first (ties in any order: the gaps of a union do not depend on the order of ranges that
  // start together).
  std::int64_t best = -1, bestGap = std::numeric_limits<std::int64_t>::max(), first = -1;
  std::int64_t cursor = 0;
  // The scan stops once the answers asked for are known: the first fit at the first gap that
  // holds `a`, the best fit at a gap of exactly its size (none is smaller; the lowest wins ties).
  bool done = false;
  const auto take = [&](std::int64_t lo, std::int64_t hi) {
    if (lo > cursor) {
      const std::int64_t gap = lo - cursor;
      if (const std::int64_t at = aligned(cursor); at + a.size <= lo) {
        if (first < 0) first = at;
        if (gap < bestGap) {
          best = at;
          bestGap = gap;
        }
        // (The first fit is at or before the best one: an exact best fit ends Fit::Both too.)
        done = fit == Fit::First || bestGap == a.size;
      }
    }
    cursor = std::max(cursor, hi);
  };
  // The run with the least head, and the least head of the others: that run's ranges up to it
  // are taken without looking at the others again.
  std::size_t live = m_runs.size();
  while (live > 1) {
    std::size_t at = 0;
    std::int64_t next = std::numeric_limits<std::int64_t>::max();
    for (std::size_t r = 1; r < live; ++r) {
      const std::int64_t head = m_runs[r].first->first;
      if (head < m_runs[at].first->first) {
        next = m_runs[at].first->first;
        at = r;
      } else if (head < next) {
        next = head;
      }
    }
    auto& [p, end] = m_runs[at];
    do {
      take(p->first, p->second);
    } while (++p != end && p->first <= next && !done);
    if (done) return {best, first};
    if (p == end) m_runs[at] = m_runs[--live];
  }
  if (live == 1) {
    for (auto p = m_runs[0].first; p != m_runs[0].second && !done; ++p)
      take(p->first, p->second);
  }
  if (done) return {best, first};
  return {best >= 0 ? best : aligned(cursor), first >= 0 ? first : aligned(cursor)};
}

void Packer::put(Instance& a, std::int64_t offset, Placement& p) {
  a.offset = offset;
  p.offsets[a.allocIndex] = a.offset;
  p.extent = std::max(p.extent, a.offset + a.size);
}

void Packer::reset(const std::vector<std::size_t>& order) {
  m_placed.always.clear();
  m_placed.occupied.clear();
  for (std::size_t b = 0; b < m_buckets; ++b) {
    m_placed.edges[b].clear();
    m_placed.covered[b].clear();
  }
  for (Ranges& node : m_placed.startTree)
    node.clear();
  // Only long-lived buffers read `startTree`: it is kept up to the last of them in the order.
  m_placed.longLeft = 0;
  for (std::size_t idx : order)
    m_placed.longLeft += m_longLived[idx];
}

std::size_t Packer::placeFrom(const std::vector<std::size_t>& order, std::size_t from, Fit fit,
                              std::int64_t target, Placement& p) {
  for (std::size_t i = from; i < order.size(); ++i) {
    Instance& a = m_inst[order[i]];
    if (a.size == 0) continue;
    const std::size_t b0 = m_buckets0[order[i]], b1 = m_buckets1[order[i]];
    const bool universal = m_universal[order[i]];
    const auto [best, first] = fits(a, b0, b1, universal, fit);
    if (fit == Fit::Both && best != first) return i;
    put(a, fit == Fit::First ? first : best, p);
    if (target > 0 && p.extent > target) break;  // this order cannot fit: stop it here
    m_placed.longLeft -= m_longLived[order[i]];
    add(a, b0, b1, universal, m_placed.longLeft > 0);
  }
  return order.size();
}

Placement Packer::placeBoth(const std::vector<std::size_t>& order, std::int64_t target,
                            std::int64_t enough, Placement& first) {
  Placement p;
  p.offsets.assign(m_allocs, -1);
  reset(order);
  const std::size_t part = placeFrom(order, 0, Fit::Both, target, p);
  if (part == order.size()) {  // never parted: first fit is the same placement
    first = p.extent <= enough ? Placement{} : p;
    return p;
  }
  // Best fit goes on from the buffer where they part, and first fit, where needed, from what
  // was placed before it.
  m_saved = m_placed;
  first = p;
  placeFrom(order, part, Fit::Best, target, p);
  if (p.extent <= enough) {
    first = Placement{};
    return p;
  }
  std::swap(m_placed, m_saved);
  placeFrom(order, part, Fit::First, target, first);
  return p;
}

/// The orders tried, until one fits: largest first (ties: earliest), then longest-lived first,
/// then largest area (bytes x ops alive), then in allocation order, as the run time would, then
/// largest first with ties latest-ending first. `kind` 0..kOrders - 1; remaining ties broken by
/// the instance's index (a stable sort).
///
/// The last order packs schedules the others leave about one FM above their peak: a network's
/// FMs come in a few sizes, so most buffers tie on size, and the prefetched ones form staircases
/// (each allocated before the one before it is released). Placed earliest first among equals,
/// each step of a staircase lands above the last; latest-ending first packs ResNet-50's swap-all
/// iteration at k = 8 into exactly its peak (tests/analysis/placement_test.cpp).
///
/// Each order's key is packed into one unsigned integer that compares as the key's fields in
/// turn (each field mapped so that its order is the unsigned order of its bits): one integer
/// comparison per step of the sort, where comparing the fields one by one took a fifth of a
/// planner's drag. The orders by size key on the size's rank among the distinct sizes (a network
/// has few), so that with op indices and instance counts the key fits 64 bits, which sort faster
/// than 128; else, and for the order by area, 128 bits. Op indices and instance counts fit 32
/// bits (checked).
constexpr int kOrders = 5;

/// The distinct sizes of `inst`, largest first: an instance's index among them (its rank) orders
/// it as its size does.
std::vector<std::int64_t> sizesLargestFirst(const std::vector<Instance>& inst) {
  std::vector<std::int64_t> sizes;
  sizes.reserve(inst.size());
  for (const Instance& in : inst)
    sizes.push_back(in.size);
  std::sort(sizes.begin(), sizes.end(), std::greater<>());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

/// Sorts `keys` (below 2^bits) ascending: least significant digit first, 11 bits a pass. The keys
/// are distinct (an instance index ends each), a few thousand, of 30 to 40 bits: three passes,
/// several times faster than a comparison sort.
void radixSort(std::vector<std::uint64_t>& keys, unsigned bits) {
  constexpr unsigned kDigit = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kDigit;
  thread_local std::vector<std::uint64_t> other;
  other.resize(keys.size());
  std::array<std::size_t, kBuckets> count{};
  for (unsigned shift = 0; shift < bits; shift += kDigit) {
    count.fill(0);
    for (const std::uint64_t k : keys)
      ++count[(k >> shift) & (kBuckets - 1)];
    std::size_t at = 0;
    for (std::size_t& c : count)
      at += std::exchange(c, at);
    for (const std::uint64_t k : keys)
      other[count[(k >> shift) & (kBuckets - 1)]++] = k;
    keys.swap(other);
  }
}

/// The order `kind` by 64-bit keys; false (and `order` untouched) where a key does not fit them.
bool orderBy64BitKeys(int kind, const std::vector<Instance>& inst, std::size_t ops,
                      const std::vector<std::int64_t>& sizes, std::vector<std::size_t>& order) {
  const auto bits = [](std::uint64_t v) { return static_cast<unsigned>(std::bit_width(v)); };
  const unsigned rankBits = bits(sizes.size()), opBits = bits(ops), indexBits = bits(inst.size());
  if (kind == 2 || rankBits + opBits + indexBits > 64) return false;
  std::vector<std::uint64_t> keys(inst.size());
  for (std::size_t i = 0; i < inst.size(); ++i) {
    const auto rank = static_cast<std::uint64_t>(
        std::lower_bound(sizes.begin(), sizes.end(), inst[i].size, std::greater<>()) -
        sizes.begin());
    const auto start = static_cast<std::uint64_t>(inst[i].start);
    const auto end = static_cast<std::uint64_t>(std::min(inst[i].end, ops));
    switch (kind) {
      case 0:  // size, start, index
        keys[i] = (rank << (opBits + indexBits)) | (start << indexBits) | i;
        break;
      case 1:  // life (longest first), size, index
        keys[i] = ((ops - (end - start)) << (rankBits + indexBits)) | (rank << indexBits) | i;
        break;
      default:  // 4: size, end (latest first), index
        keys[i] = (rank << (opBits + indexBits)) | ((ops - end) << indexBits) | i;
        break;
    }
  }
  radixSort(keys, rankBits + opBits + indexBits);
  const std::uint64_t indexMask = (std::uint64_t{1} << indexBits) - 1;
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = static_cast<std::size_t>(keys[i] & indexMask);
  return true;
}

/// The instances in order `kind`; `sizes` is sizesLargestFirst(inst) (or empty for kinds 2 and
/// 3). With `wide`, 128-bit keys even where 64 bits hold them.
std::vector<std::size_t> orderOf(int kind, const std::vector<Instance>& inst, std::size_t ops,
                                 const std::vector<std::int64_t>& sizes, bool wide = false) {
  __extension__ using Key = unsigned __int128;
  std::vector<std::size_t> order(inst.size());
  constexpr std::uint64_t kLow32 = 0xffffffffULL;
  if (ops > kLow32 || inst.size() > kLow32) {
    throw Error(ErrorKind::Runtime, "placement: more than 2^32 ops or buffers to order");
  }
  if (kind == 3) {  // allocation order is the instances' own: they are listed in op order
    for (std::size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    return order;
  }
  if (!wide && orderBy64BitKeys(kind, inst, ops, sizes, order)) return order;
  // Ascending order of a signed value, as unsigned bits.
  const auto ascending = [](std::int64_t v) {
    return static_cast<std::uint64_t>(v) ^ (std::uint64_t{1} << 63);
  };
  std::vector<Key> keys(inst.size());
  for (std::size_t i = 0; i < inst.size(); ++i) {
    const auto start = static_cast<std::uint64_t>(inst[i].start);
    const auto end = static_cast<std::uint64_t>(std::min(inst[i].end, ops));
    const std::uint64_t life = end - start;
    const std::uint64_t size = ascending(-inst[i].size);  // largest first
    switch (kind) {
      case 0:  // size, start, index
        keys[i] = (Key{size} << 64) | (start << 32) | i;
        break;
      case 1:  // life (longest first), size, index
        keys[i] = (Key{kLow32 - life} << 96) | (Key{size} << 32) | i;
        break;
      case 4:  // size, end (latest first), index
        keys[i] = (Key{size} << 64) | ((kLow32 - end) << 32) | i;
        break;
      default: {  // area (largest first: the bits of a non-negative double order as it does),
                  // start, index
        const double area = static_cast<double>(inst[i].size) * static_cast<double>(life);
        std::uint64_t bits = 0;
        std::memcpy(&bits, &area, sizeof bits);
        keys[i] = (Key{~bits} << 64) | (start << 32) | i;
        break;
      }
    }
  }
  std::sort(keys.begin(), keys.end());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = static_cast<std::size_t>(keys[i] & kLow32);
  return order;
}

/// planPlacement, trying the order `firstKind` first (then the others, in turn), each placed up to
/// `target` (0: in full), until one's extent is within `enough` (0: none is). Which order is tried
/// first changes which placement is returned where several are within `enough`, and nothing
/// else: whether one is, and the extent where none is (the least at which an order stopped, or
/// where every order is placed in full, the least). `*fitted` is set to the order within
/// `enough`, where one is.
Placement placeOrders(const Gmap& gmap, const std::vector<GmapOp>& ops, std::int64_t k,
                      std::int64_t alignment, int delay, std::int64_t workspaceAlignment,
                      std::int64_t target, std::int64_t enough, int firstKind, int* fitted) {
  std::size_t allocs = 0;
  std::vector<Instance> inst =
      instancesOf(gmap, ops, k, alignment, delay, workspaceAlignment, allocs);
  thread_local PackerStorage storage;
  Packer packer(inst, allocs, ops.size(), storage);
  Placement p;
  // `firstKind`, then every other kind in turn: the same orders whichever comes first.
  std::array<int, kOrders> kinds{};
  kinds[0] = firstKind;
  std::vector<std::int64_t> sizes;  // sizesLargestFirst(inst), made when first needed
  for (int kind = 0, at = 1; kind < kOrders; ++kind) {
    if (kind != firstKind) kinds[static_cast<std::size_t>(at++)] = kind;
  }
  for (const int kind : kinds) {
    if (sizes.empty() && kind != 2 && kind != 3) sizes = sizesLargestFirst(inst);
    const std::vector<std::size_t> order = orderOf(kind, inst, ops.size(), sizes);
    Placement first;
    // Best fit, then first fit.
    for (Placement* q : {static_cast<Placement*>(nullptr), &first}) {
      if (q && q->offsets.empty()) break;  // best fit was within `enough`: first fit not placed
      Placement made = q ? std::move(*q) : packer.placeBoth(order, target, enough, first);
      if (p.offsets.empty() || made.extent < p.extent) p = std::move(made);
      if (p.extent <= enough) {
        if (fitted) *fitted = kind;
        return p;
      }
    }
  }
  return p;
}

/// Per kind of schedule (reuse delay or not, moved prefetches or not), the order that packed the
/// last placement placeAhead made with a memo on this thread (placeOrders' firstKind).
thread_local std::array<int, 4> lastFitted{};

}  // namespace

std::vector<std::size_t> detail::placementOrder(int kind, const std::vector<std::int64_t>& sizes,
                                                const std::vector<std::size_t>& starts,
                                                const std::vector<std::size_t>& ends,
                                                std::size_t ops, bool wide) {
  if (kind < 0 || kind >= kOrders || starts.size() != sizes.size() || ends.size() != sizes.size()) {
    throw Error(ErrorKind::Runtime, "placementOrder: no such order, or lists of unequal length");
  }
  std::vector<Instance> inst;
  inst.reserve(sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i)
    inst.push_back({sizes[i], 1, starts[i], ends[i], i});
  return orderOf(kind, inst, ops, sizesLargestFirst(inst), wide);
}

Placement planPlacement(const Gmap& gmap, const std::vector<GmapOp>& ops, std::int64_t k,
                        std::int64_t alignment, int delay, std::int64_t workspaceAlignment,
                        std::int64_t target) {
  return placeOrders(gmap, ops, k, alignment, delay, workspaceAlignment, target, target, 0,
                     nullptr);
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
  known.placed += k.placed;
  known.bound = std::max(known.bound, k.bound);
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
  // Whether an outcome from attempt `from` (moved first) on, or one at run time, matters.
  const auto stillMatters = [&](std::size_t from, bool movedFirst) {
    if (matters(0, moves) || matters(0, false)) return true;  // at run time
    for (std::size_t i = from; i < attempts.size(); ++i) {
      for (const bool moved : {true, false}) {
        if ((moved && !moves) || (i == from && moved && !movedFirst)) continue;
        if (matters(attempts[i].delay, moved)) return true;
      }
    }
    return false;
  };
  const auto ops = [&](bool moved) -> const std::vector<GmapOp>& {
    std::vector<GmapOp>& o = orders[moved ? 1 : 0];
    if (o.empty()) o = executionOrder(gmap, moved ? move_to : std::vector<int>{});
    return o;
  };
  // The delayed peak of an attempt at its alignment: no order packs it below (memo only).
  const auto boundOf = [&](const Attempt& a, bool moved) {
    PlacementMemo::Known known = memo->get(a.delay, moved, a.alignment);
    if (known.bound == 0) {
      known.bound = delayedPeak(gmap, ops(moved), k, a.delay, a.alignment);
      memo->put(a.delay, moved, a.alignment, {.bound = known.bound});
    }
    return known.bound;
  };
  // The extent one attempt reaches (at most the budget where it packs), from the memo where it
  // can answer, else placed; the offsets where placed without a memo.
  // None where it must place and `mayPlace` says no outcome still possible matters.
  const auto extentOf = [&](const Attempt& a, bool moved, std::vector<std::int64_t>& offsets,
                            const auto& mayPlace) -> std::optional<std::int64_t> {
    if (!memo) {
      if (!mayPlace()) return std::nullopt;
      Placement p =
          planPlacement(gmap, ops(moved), k, a.alignment, a.delay, workspaceAlignment, budget);
      offsets = std::move(p.offsets);
      return p.extent;
    }
    PlacementMemo::Known known = memo->get(a.delay, moved, a.alignment);
    known.bound = boundOf(a, moved);
    if (known.fitted > 0 && known.fitted <= budget) return known.fitted;
    if (known.least > budget) return known.least;
    if (known.bound > budget) return known.bound;  // no order packs below it: not placed
    if (!mayPlace()) return std::nullopt;
    // The first two times, the orders stop at the first that fits or once past the budget. The
    // budgets of a drag or a sweep meet a key again and again, each just beyond the last: from
    // the third time on, the orders are placed in full until one fits (its first fit is then not
    // placed): where none does, the least extent is exact; where one does, only the orders before
    // it cost more than a placement up to the budget (most often none: the order of the last fit
    // on this thread is tried first).
    const bool full = known.placed > 1;
    // Only whether it fits is asked here, not where: the order that fitted the last placement of
    // the same kind of schedule on this thread is tried first (most placements that fit, fit in
    // the order that the last one did, and the orders before it are placed in vain).
    int& hint = lastFitted[static_cast<std::size_t>((a.delay > 0 ? 2 : 0) + (moved ? 1 : 0))];
    const std::int64_t extent =
        placeOrders(gmap, ops(moved), k, a.alignment, a.delay, workspaceAlignment,
                    full ? 0 : budget, budget, hint, &hint)
            .extent;
    // None fitted: every order stopped beyond the budget, each at an extent its full placement
    // cannot be below (in full: its full placement's); the least of them is returned.
    if (full && extent > budget) {
      known.fitted = known.least = extent;
    } else if (extent <= budget) {
      known.fitted = extent;
    } else {
      known.least = std::max(known.least, extent);
    }
    memo->put(a.delay, moved, a.alignment,
              {.fitted = known.fitted, .least = known.least, .placed = 1});
    return extent;
  };
  const auto missed = [&](const Attempt& a, std::int64_t extent) {
    if (a.delay == 0)
      out.best_extent = out.best_extent == 0 ? extent : std::min(out.best_extent, extent);
  };
  // With a memo (the planner, which needs the schedule only), an attempt whose schedule is that
  // of the first run-time placement (delay 0, with the moves where there are any) can wait where
  // the memo cannot answer it: its outcome matters only where a later attempt with another
  // schedule packs, or where none does and that run-time placement does not fit (it runs the
  // same schedule where either fits). Otherwise it is never placed. It waits where its delayed
  // peak is above 99 % of the budget, where placements that do not pack are found (a refusal
  // places every order up to the budget; a placement that packs usually stops at the first
  // order).
  struct Waiting {
    std::size_t attempt;
    bool moved;
  };
  std::vector<Waiting> waiting;
  for (std::size_t ai = 0; ai < attempts.size(); ++ai) {
    const Attempt& a = attempts[ai];
    for (const bool moved : {true, false}) {
      if (moved && !moves) continue;
      const bool fallback = a.delay == 0 && moved == moves;
      std::vector<std::int64_t> offsets;
      std::optional<std::int64_t> extent;
      if (memo && fallback && boundOf(a, moved) > budget - budget / 100) {
        extent = extentOf(a, moved, offsets, [] { return false; });  // what the memo knows
        if (!extent) {
          waiting.push_back({ai, moved});
          continue;
        }
      } else {
        extent = extentOf(a, moved, offsets, [&] { return !matters || stillMatters(ai, moved); });
      }
      if (!extent) {
        out.undecided = true;
        return out;
      }
      if (*extent > budget) {
        missed(a, *extent);
        continue;
      }
      // It packs: the first waiting attempt before it that packs comes first, unless it runs
      // their schedule itself.
      if (fallback) waiting.clear();
      for (const Waiting& w : waiting) {
        const Attempt& wa = attempts[w.attempt];
        std::vector<std::int64_t> none;
        const std::optional<std::int64_t> e = extentOf(wa, w.moved, none, [&] {
          return !matters || matters(0, moves) || matters(a.delay, moved);
        });
        if (!e) {
          out.undecided = true;
          return out;
        }
        if (*e <= budget) {
          out.placed = PlacedSchedule{wa.delay, w.moved, wa.alignment, {}};
          return out;
        }
        missed(wa, *e);
      }
      out.placed = PlacedSchedule{a.delay, moved, a.alignment, std::move(offsets)};
      return out;
    }
  }
  // None packs ahead: the executor places at run time, with delay 0, the moves first. The
  // attempts that waited run the schedule of the first run-time placement: they are placed only
  // where that does not fit.
  if (matters && !matters(0, moves) && !matters(0, false)) {
    out.undecided = true;
    return out;
  }
  const auto atRunTime = [&](bool moved) {
    out.failure = placeAtRunTime(gmap, ops(moved), k, budget,
                                 alignments.empty() ? 1 : alignments.back(), workspaceAlignment);
    if (!out.failure) out.run_time_moved = moved;
    return !out.failure;
  };
  if (atRunTime(moves)) return out;
  for (const Waiting& w : waiting) {
    const Attempt& wa = attempts[w.attempt];
    std::vector<std::int64_t> none;
    const std::int64_t e = *extentOf(wa, w.moved, none, [] { return true; });
    if (e <= budget) {
      out.failure.reset();
      out.placed = PlacedSchedule{wa.delay, w.moved, wa.alignment, {}};
      return out;
    }
    missed(wa, e);
  }
  if (moves) atRunTime(false);
  return out;
}

std::optional<RunTimeFailure> placeAtRunTime(const Gmap& gmap, const std::vector<GmapOp>& ops,
                                             std::int64_t k, std::int64_t budget,
                                             std::int64_t alignment,
                                             std::int64_t workspaceAlignment) {
  rt::PoolAllocator alloc(budget, alignment);
  std::vector<std::optional<rt::PoolBlock>> blocks(gmap.buffers.size());
  for (const GmapOp& op : ops) {
    if (op.kind != GmapOpKind::Allocate && op.kind != GmapOpKind::Release) continue;
    auto& block = blocks[static_cast<std::size_t>(op.buffer)];
    if (op.kind == GmapOpKind::Allocate) {
      const GmapBuffer& buf = gmap.buffers[static_cast<std::size_t>(op.buffer)];
      const std::int64_t bytes = buf.size.at(k);
      if (bytes == 0) continue;
      block = alloc.allocate(bytes, buf.kind == BufferKind::Workspace ? workspaceAlignment : 0);
      if (!block) {
        return RunTimeFailure{.step = op.step,
                              .buffer = op.buffer,
                              .bytes = bytes,
                              .largest_free = alloc.largestFree()};
      }
    } else {
      if (block) alloc.release(*block, rt::Fence{});
      block.reset();
    }
  }
  return std::nullopt;
}

}  // namespace swapscope
