// What the library's op tests share: random inputs, the bit-for-bit comparison with a host
// reference, and small shape helpers.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tessera::libtest {

/// n values uniform in [lo, hi) from a generator seeded with seed.
inline std::vector<float> randomFloats(size_t n, uint32_t seed, float lo = -2.0f, float hi = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

/// Every element of got equals want's, bit for bit.
inline void expectBitEqual(const std::vector<float>& got, const std::vector<float>& want,
                           const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
        << what << " element " << i << ": got " << got[i] << ", want " << want[i];
  }
}

/// The values in double, for a double-precision reference.
inline std::vector<double> toDouble(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}

/// The number of elements of a shape.
inline size_t count(const std::vector<size_t>& shape) {
  size_t n = 1;
  for (size_t d : shape) n *= d;
  return n;
}

}  // namespace tessera::libtest
