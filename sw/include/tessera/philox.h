/* Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011): a
 * counter-based generator, so element i of a random tensor depends only on (key, counter) and
 * not on which tile or worker computes it. The tiles and the host include this same file, so a
 * dropout mask is the same on every backend and in host references (docs/library.md, "dropout"). */
#ifndef TESSERA_PHILOX_H
#define TESSERA_PHILOX_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Four random words of counter (c0, c1, c2, c3) under key (k0, k1), ten rounds. */
static inline void tessera_philox4x32(const uint32_t ctr[4], uint32_t k0, uint32_t k1,
                                      uint32_t out[4]) {
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = (uint64_t)0xD2511F53u * c0;
    const uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
    const uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c1 = (uint32_t)p1;
    c3 = (uint32_t)p0;
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

/** The random word of element `index` of stream `stream` under the key (seed, step): word
 * index % 4 of the block with counter (index / 4, stream, 0, 0). */
static inline uint32_t tessera_random_word(uint32_t seed, uint32_t step, uint32_t stream,
                                           uint32_t index) {
  const uint32_t ctr[4] = {index >> 2, stream, 0u, 0u};
  uint32_t w[4];
  tessera_philox4x32(ctr, seed, step, w);
  return w[index & 3u];
}

#ifdef __cplusplus
}
#endif

#endif
