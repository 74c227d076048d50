// SPDX-License-Identifier: MIT
/// @brief Counter-based random numbers: every value is a pure function of (seed, index), so
/// initialisation, dropout masks and synthetic data are identical on every platform and library,
/// and never depend on the order in which threads ask for them.
#pragma once

#include <cmath>
#include <cstdint>

// The CUDA backend's dropout kernel draws the same masks as the CPU backend.
#if defined(__CUDACC__)
#define SWAPSCOPE_HOST_DEVICE __host__ __device__
#else
#define SWAPSCOPE_HOST_DEVICE
#endif

namespace swapscope::rt {

/// SplitMix64's finaliser: a bijective 64-bit mix.
SWAPSCOPE_HOST_DEVICE constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// A seed for a sub-stream: (seed, a, b) -> independent-looking 64-bit seed.
constexpr std::uint64_t deriveSeed(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0) {
  return mix64(mix64(seed ^ mix64(a)) ^ mix64(b + 0x632BE59BD9B4E019ull));
}

/// Uniform in [0, 1) with 53 random bits.
SWAPSCOPE_HOST_DEVICE inline double uniform01(std::uint64_t seed, std::uint64_t index) {
  return static_cast<double>(mix64(seed ^ mix64(index)) >> 11) * 0x1.0p-53;
}

/// Standard normal by Box-Muller over two uniforms of the stream.
inline double normal01(std::uint64_t seed, std::uint64_t index) {
  const double u1 = 1.0 - uniform01(seed, 2 * index);  // (0, 1]
  const double u2 = uniform01(seed, 2 * index + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace swapscope::rt
