// SPDX-License-Identifier: MIT
/// @brief The AccUDNN paper's Algorithm 1 (t_ready) and constraint (6) (AccUDNN §3.4), to be
/// compared with the event simulator on the same inputs. Time comes from a stall-free compute
/// timeline (G10), as in the paper. Two points the pseudo-code leaves out are taken from the
/// paper's own remarks on it:
/// - Time starts when layer 1 can start. "The involved data of the first layer can be prefetched
///   directly at the beginning of the iteration", and t_ready[1] is by definition the moment
///   layer 1 can run, so the stall-free timeline starts there: step j-1 finishes at
///   t_ready[1] + Σ_{r<j} t_r, and that is the right-hand side of (6) and the clock of the
///   else-branch. With pre-cached inputs (the paper's single-GPU setting, where Δ holds the load)
///   t_ready[1] = 0 and this is the pseudo-code to the letter. A minibatch load delays every step
///   alike; it is no violation of (6), and no pin could remove it (AccUDNN §3.4, eq. 6 at j = 1).
/// - Memory in use falls with releases: "memory release operation conducted by stream_swap-out
///   also decrease[s] M_used_present, we just don't depict it explicitly here". When the swap-in
///   stream reaches step j, the steps that have finished on the timeline have released their
///   bytes; only a shortfall waits, for the releases of the steps from j_current on (AccUDNN §3.4, Algorithm 1's else-branch).
///   Without this the memory in use grows past any budget within a few steps, and from then on
///   every step "waits" for releases that have already happened: (6) fails at forward steps that
///   prefetch nothing, for every k, and pinning cannot help.
#pragma once

#include <cstdint>
#include <vector>

namespace swapscope::perf {

struct PaperInput {
  std::vector<std::int64_t> allocate;  ///< per step 1..2N (index 0 unused): Seq_allocate^j bytes
  std::vector<std::int64_t> release;   ///< per step: bytes released after it (Seq_release^j)
  std::vector<double> prefetch;        ///< per step: Σ t_pre of its prefetches
  std::vector<double> compute;         ///< per step: t_compute
  std::int64_t budget = 0;
  std::int64_t resident = 0;  ///< bytes in use before step 1 (parameters, gradients, momentum)
};

struct PaperResult {
  std::vector<double> t_ready;  ///< per step 1..2N, from the start of the iteration
  /// Per step: 0 when its allocation fitted beside the memory in use, else j_satisfied, the step
  /// whose end releases enough memory for it (the else-branch).
  std::vector<int> waited_for;
  double compute_start = 0;     ///< t_ready[1]: where the stall-free compute timeline starts
  std::vector<double> finish;   ///< per step: compute_start + Σ_{r<=j} t_r
  std::vector<int> violations;  ///< steps j >= 2 with t_ready[j] > finish[j-1] (eq. 6)
};

PaperResult algorithm1(const PaperInput& in);

}  // namespace swapscope::perf
