// The column sums of ReduceSumStrided and ReduceSumStridedOwn: N neighbouring outputs (8 in the
// bulk, then 4, then 1 to 3) summed over the parts in part order, their sums in registers while
// one pointer walks down the parts to an end pointer (N loads and N adds a part, plus the
// pointer's step and the loop's test). Nothing is indexed, so no address is rebuilt from j or p:
// on four parts an indexed loop of four outputs took 14 to 15 instructions an output, this one
// about 10.
#pragma once

#include <stdint.h>

namespace tessera_strided {

// s[0..N) += the N floats at q.
template <int N>
__attribute__((always_inline)) inline void add(float (&s)[N], const float* q) {
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) s[i] += q[i];
}

template <int N>
__attribute__((always_inline)) inline void load(float (&s)[N], const float* q) {
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) s[i] = q[i];
}

template <int N>
__attribute__((always_inline)) inline void store(float* o, const float (&s)[N]) {
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) o[i] = s[i];
}

// s += the rows from q (w floats apart) up to qe (exclusive, a whole number of rows on), in
// order: the first alone when their number is odd, then two a loop trip (one pointer step and
// one test for two rows).
template <int N>
__attribute__((always_inline)) inline void addRows(float (&s)[N], const float* q, const float* qe,
                                                   uint32_t w, bool odd) {
  if (odd) add(s, q), q += w;
  const uint32_t w2 = 2 * w;
  for (; q != qe; q += w2) {
    add(s, q);
    add(s, q + w);
  }
}

// o[0..N) = the sum of the rows (w floats apart) from q up to q + span, in row order (span >= w;
// odd: the number of rows after the first is odd).
template <int N>
__attribute__((always_inline)) inline void sumColumns(const float* q, uint32_t span, uint32_t w,
                                                      bool odd, float* o) {
  float s[N];
  load(s, q);
  addRows(s, q + w, q + span, w, odd);
  store(o, s);
}

// o[0..N) = the sum in part order of the rows from q up to q + before (a span in floats), then
// m's N floats, then the rows from there up to q + before + after (oddAfter: their number is
// odd).
template <int N>
__attribute__((always_inline)) inline void sumColumnsOwn(const float* q, const float* m,
                                                         uint32_t before, uint32_t after,
                                                         uint32_t w, bool oddAfter, float* o) {
  float s[N];
  const float* const qm = q + before;  // in's row after the own part's place
  if (before == 0) {
    load(s, m);
  } else {
    // The rows before m, one a trip (a matmul's own part is mostly first or second: few).
    load(s, q);
    for (const float* r = q + w; r != qm; r += w) add(s, r);
    add(s, m);
  }
  addRows(s, qm, qm + after, w, oddAfter);
  store(o, s);
}

}  // namespace tessera_strided
