// SPDX-License-Identifier: MIT
/// @brief What the streams view draws, computed from a plan without any Qt: the simulated
/// iteration (perf::SimResult of the plan's best evaluation) as three lanes, compute, swap-out
/// and swap-in, with one bar per step and per transfer, and a marker for every step that waits
/// (its t_ready stall, AccUDNN section 4.2 eq. 6).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/network.h"
#include "perfmodel/planner.h"

namespace swapscope::store {
struct RunData;
}

namespace swapscope {

enum class StreamLane { Compute = 0, SwapOut = 1, SwapIn = 2 };

enum class StreamBarKind {
  Forward,   ///< a forward step on the compute stream
  Backward,  ///< a backward step
  Update,    ///< the SGD update after the last backward step (one bar)
  Offload,   ///< a swapped FM copied to the host (swap-out stream)
  Prefetch,  ///< a swapped FM copied back for its backward step (swap-in stream)
  Load,      ///< the minibatch and its labels, loaded before step 1 (not part of the swap set)
  /// A backward step that first re-makes recomputed FMs (its layer's forward kernels run again
  /// before its own backward work; the bar spans both)
  Remake,
};
const char* streamBarKindName(StreamBarKind kind);  ///< "fwd", "bwd", "update", "offload", ...

struct StreamBar {
  StreamLane lane = StreamLane::Compute;
  StreamBarKind kind = StreamBarKind::Forward;
  int step = 0;    ///< compute: the step 1..2N (0 for the update); transfer: the step it opens at
  int layer = -1;  ///< the step's layer, or the transferred buffer's layer; -1: none
  std::string label;       ///< the layer name, or the buffer name of a transfer
  double start = 0;        ///< seconds from the start of the iteration
  double finish = 0;       ///< seconds
  double stall = 0;        ///< compute: the wait before this step; 0 for transfers
  std::int64_t bytes = 0;  ///< transfers: bytes moved at the plan's k
};

/// A step that waits: compute is idle from `start` to `end` (the step's start): the stall and
/// the hand-off before the step, as the plan file's stalls count it.
struct StallMarker {
  int step = 0;
  int layer = -1;
  std::string label;
  double start = 0, end = 0;  ///< seconds
  double seconds() const { return end - start; }
};

struct StreamsData {
  std::string title;
  /// Identifies the network (name and structure hash): a view keeps its zoom while this stays.
  std::string network_key;
  bool trainable = false;
  std::string reason;  ///< why not, when the plan is untrainable
  std::int64_t k = 0;
  double t_iter = 0;            ///< seconds
  double total_stall = 0;       ///< seconds: the compute stream's idle time, hand-offs included
  std::vector<StreamBar> bars;  ///< compute bars in step order, then swap-out, then swap-in
  /// One per step whose stall is above zero, in step order; a measured step that first runs
  /// recomputes has one per idle gap before them and its kernels (store::stallSpans).
  std::vector<StallMarker> stalls;
  int swapTransfers() const;  ///< offload and prefetch bars (loads excluded)
  /// The steps `stalls` marks (a measured step that runs recomputes may have several markers).
  int stalledSteps() const { return stepsMarked(stalls); }
  static int stepsMarked(const std::vector<StallMarker>& markers);
  /// The bar in `lane` that covers time `t` (seconds), or nullptr. Bars of one lane never
  /// overlap, so at most one does; `slack` widens every bar by that many seconds on each side
  /// (for hovering very short bars).
  const StreamBar* barAt(StreamLane lane, double t, double slack = 0) const;

  /// A measured iteration of a run of this plan, drawn beside the simulated one (no bars: none):
  /// one bar per compute sample (steps and the layers' SGD updates) and per transfer, times from
  /// the iteration's start; a stall marker per step the CLI counts as stalled (its idle time
  /// before the step above `measured_threshold` x the iteration's t_iter, perf::compareStalls).
  std::string measured_title;
  int measured_iteration = -1;  ///< 0-based among the run's recorded iterations at k
  double measured_t_iter = 0, measured_stall = 0;  ///< seconds
  double measured_threshold = 0.01;
  std::vector<StreamBar> measured_bars;
  std::vector<StallMarker> measured_stalls;
  bool hasMeasured() const { return !measured_bars.empty(); }
  /// As barAt, among the measured bars.
  const StreamBar* measuredBarAt(StreamLane lane, double t, double slack = 0) const;
};

/// The lanes of `plan` (planned for `net`). An untrainable plan gives no bars and its reason.
/// With `model` and `costs` (perf::Planner::costs()) the SGD update after the last backward step
/// is drawn too (the simulator keeps only where the compute stream ends, not the update's length).
StreamsData makeStreamsData(const Network& net, const perf::PlanResult& plan,
                            const perf::PerfModel* model = nullptr,
                            const std::vector<LayerCost>* costs = nullptr);

/// Adds to `d` the measured iteration of `run` at minibatch `k` whose t_iter is the median of
/// the recorded ones (the lower middle one of an even count), for a run of the plan `d` shows:
/// the Timeline's lanes of that iteration (makeTimelineData), with the CLI's stalled steps.
/// Returns false, adding nothing, when the run recorded no iteration at k or its steps are not
/// those of `d` (another network).
bool addMeasuredStreams(StreamsData& d, const store::RunData& run, std::int64_t k,
                        double threshold = 0.01);

/// Key identifying a network across plans (a view keeps its zoom while it stays the same).
std::string networkKey(const Network& net);

}  // namespace swapscope
