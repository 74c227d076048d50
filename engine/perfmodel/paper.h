// SPDX-License-Identifier: MIT
/// @brief The AccUDNN paper's Algorithm 1 (t_ready) and constraint (6), implemented as written
/// (digest 1.6), to be compared with the event simulator on the same inputs. As written, the
/// memory in use only grows (G9) and time comes from a stall-free compute timeline (G10).
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
};

struct PaperResult {
  std::vector<double> t_ready;  ///< per step 1..2N
  std::vector<int> violations;  ///< steps j >= 2 with t_ready[j] > Σ_{r<j} t_r (eq. 6)
};

PaperResult algorithm1(const PaperInput& in);

}  // namespace swapscope::perf
