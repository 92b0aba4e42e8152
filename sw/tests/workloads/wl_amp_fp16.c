/* Lockstep workload: the matrix unit's fp16 inputs and conversions (docs/tile.md, "fp16 inputs
 * and conversions") from all six contexts at once. The supervisor loads both weight banks with
 * binary16 weights (AMP.LW of a row-major 8 x 4 half matrix per bank); then each context, the
 * supervisor included, loads its accumulator rows (AMP.LA), runs AMP.H steps on both banks and
 * every row, stores the rows (AMP.SA), narrows values with AMP.CVTHS and, seeded twice with its own
 * seed (AMP.SEED), with AMP.CVTHS.SR, and widens the halves back (AMP.CVTSH.LO/HI).
 * Checks: each row against the scalar FMADD.S chain of the widened halves (__builtin_fmaf, RNE,
 * the unit's definition); the same seed gives the same stochastic bits; the widening against a C
 * widening; nearest-even is nearest; stochastic rounding lands on a neighbour of nearest-even.
 * The exit code names the first failed check: 10 + context for a wrong row, 50 + context for a
 * seed that did not repeat its bits, 60 + context for a wrong widening, 70 + context for a
 * narrowing that is not nearest, 80 + context for a stochastic result off its neighbours. */
#include <stdint.h>

#include "tessera/amp.h"
#include "tessera/tile.h"

#define STEPS 6  /* AMP.H steps per context: rows 0..3, banks alternating */
#define VALUES 8 /* values narrowed per context, two per conversion */

struct job {
  uint16_t x[STEPS][8]; /* the halves of each AMP.H (16 bytes each) */
  float acc0[4][4];     /* the accumulators each row starts from (AMP.LA) */
  float out[4][4];      /* the rows after the steps (AMP.SA) */
  float src[VALUES];    /* binary32 values to narrow */
  uint32_t rne[VALUES / 2], sr[VALUES / 2], sr2[VALUES / 2];
  float wide[VALUES]; /* the halves of rne widened back */
} __attribute__((aligned(16)));

static uint16_t weights[2][8][4] __attribute__((aligned(16)));
static struct job jobs[TESSERA_CONTEXTS];

static uint32_t bits_of(float f) {
  const union {
    float f;
    uint32_t u;
  } x = {f};
  return x.u;
}

static float float_of(uint32_t u) {
  const union {
    uint32_t u;
    float f;
  } x = {u};
  return x.f;
}

/* binary16 -> binary32, written again here (IEEE 754's exact widening). */
static float widen(uint32_t h) {
  uint32_t s = (h >> 15 & 1u) << 31, e = h >> 10 & 31u, m = h & 0x3ffu, u;
  if (e == 31u) {
    u = m ? 0x7fc00000u : s | 0x7f800000u;
  } else if (e) {
    u = s | (e + 112u) << 23 | m << 13;
  } else if (!m) {
    u = s;
  } else {
    e = 113u;
    while (!(m & 0x400u)) {
      m <<= 1;
      --e;
    }
    u = s | e << 23 | (m & 0x3ffu) << 13;
  }
  return float_of(u);
}

/* Normal halves of both signs between 2^-3 and 2^3. */
static uint16_t half_of(uint32_t seed, uint32_t i) {
  const uint32_t m = (seed * 37u + i * 101u) % 1024u, e = 12u + (seed + i) % 6u;
  return (uint16_t)((i & 1u) << 15 | e << 10 | m);
}

/* Inexact binary32 values of both signs and several magnitudes. */
static float value(uint32_t seed, uint32_t i) {
  const float n = (float)((seed * 7u + i * 13u) % 29u) - 14.0f;
  return (i & 1u) ? n / 3.0f : n / 7.0f;
}

static uint32_t row_of(uint32_t s) {
  return s % 4u;
}
static uint32_t bank_of(uint32_t s, uint32_t c) {
  return (s + c) % 2u;
}

/* The unit's instructions take their fields as constants: one case per (bank, row). */
static void amp_step(const uint16_t** p, uint32_t bank, uint32_t row) {
  const uint16_t* q = *p;
  switch (bank * 4u + row) {
    case 0:
      TESSERA_AMP_H(q, 0, 0);
      break;
    case 1:
      TESSERA_AMP_H(q, 0, 1);
      break;
    case 2:
      TESSERA_AMP_H(q, 0, 2);
      break;
    case 3:
      TESSERA_AMP_H(q, 0, 3);
      break;
    case 4:
      TESSERA_AMP_H(q, 1, 0);
      break;
    case 5:
      TESSERA_AMP_H(q, 1, 1);
      break;
    case 6:
      TESSERA_AMP_H(q, 1, 2);
      break;
    default:
      TESSERA_AMP_H(q, 1, 3);
      break;
  }
  *p = q;
}

static void run_job(struct job* j) {
  const uint32_t c = tessera_context_id();
  const float* a = &j->acc0[0][0];
  TESSERA_AMP_LA(a, 0);
  TESSERA_AMP_LA(a, 1);
  TESSERA_AMP_LA(a, 2);
  TESSERA_AMP_LA(a, 3);
  const uint16_t* x = &j->x[0][0];
  for (uint32_t s = 0; s < STEPS; ++s) amp_step(&x, bank_of(s, c), row_of(s));
  float* o = &j->out[0][0];
  TESSERA_AMP_SA(o, 0, 1);
  TESSERA_AMP_SA(o, 1, 1);
  TESSERA_AMP_SA(o, 2, 1);
  TESSERA_AMP_SA(o, 3, 1);
  const uint32_t seed = 0x1000u + c * 0x51u;
  for (uint32_t i = 0; i < VALUES / 2; ++i) {
    TESSERA_AMP_CVTHS(j->rne[i], bits_of(j->src[2 * i]), bits_of(j->src[2 * i + 1]));
  }
  TESSERA_AMP_SEED(seed);
  for (uint32_t i = 0; i < VALUES / 2; ++i) {
    TESSERA_AMP_CVTHS_SR(j->sr[i], bits_of(j->src[2 * i]), bits_of(j->src[2 * i + 1]));
  }
  TESSERA_AMP_SEED(seed);
  for (uint32_t i = 0; i < VALUES / 2; ++i) {
    TESSERA_AMP_CVTHS_SR(j->sr2[i], bits_of(j->src[2 * i]), bits_of(j->src[2 * i + 1]));
  }
  for (uint32_t i = 0; i < VALUES / 2; ++i) {
    TESSERA_AMP_CVTSH_LO(j->wide[2 * i], j->rne[i]);
    TESSERA_AMP_CVTSH_HI(j->wide[2 * i + 1], j->rne[i]);
  }
}

static void worker(void* arg) {
  run_job((struct job*)arg);
}

static float distance(float a, float b) {
  return __builtin_fabsf(a - b);
}

static uint32_t check(const struct job* j, uint32_t c) {
  float acc[4][4];
  for (uint32_t i = 0; i < 16; ++i) acc[i / 4][i % 4] = j->acc0[i / 4][i % 4];
  for (uint32_t s = 0; s < STEPS; ++s) {
    const uint32_t r = row_of(s), b = bank_of(s, c);
    for (uint32_t col = 0; col < 4; ++col) {
      float sum = acc[r][col];
      for (uint32_t k = 0; k < 8; ++k) {
        sum = __builtin_fmaf(widen(j->x[s][k]), widen(weights[b][k][col]), sum);
      }
      acc[r][col] = sum;
    }
  }
  for (uint32_t i = 0; i < 16; ++i) {
    if (bits_of(acc[i / 4][i % 4]) != bits_of(j->out[i / 4][i % 4])) return 10u + c;
  }
  for (uint32_t i = 0; i < VALUES / 2; ++i) {
    if (j->sr[i] != j->sr2[i]) return 50u + c;
  }
  for (uint32_t i = 0; i < VALUES; ++i) {
    const uint32_t h = j->rne[i / 2] >> (16 * (i % 2)) & 0xffffu;
    if (bits_of(j->wide[i]) != bits_of(widen(h))) return 60u + c;
    /* Nearest: no neighbour of the result's magnitude is closer to the value. */
    const float v = __builtin_fabsf(j->src[i]);
    const uint32_t m = h & 0x7fffu;
    if ((h >> 15) != (bits_of(j->src[i]) >> 31)) return 70u + c;
    if (distance(widen(m), v) > distance(widen(m + 1u), v) ||
        (m && distance(widen(m), v) > distance(widen(m - 1u), v))) {
      return 70u + c;
    }
    const uint32_t s = j->sr[i / 2] >> (16 * (i % 2)) & 0xffffu;
    if ((s >> 15) != (h >> 15) || (s & 0x7fffu) + 1u < m || (s & 0x7fffu) > m + 1u) return 80u + c;
  }
  return 0;
}

int main(void) {
  for (uint32_t b = 0; b < 2; ++b) {
    for (uint32_t k = 0; k < 8; ++k) {
      for (uint32_t col = 0; col < 4; ++col) weights[b][k][col] = half_of(b + 90u, k * 4u + col);
    }
  }
  for (uint32_t c = 0; c < TESSERA_CONTEXTS; ++c) {
    struct job* j = &jobs[c];
    for (uint32_t i = 0; i < 16; ++i) j->acc0[i / 4][i % 4] = value(c + 40u, i);
    for (uint32_t s = 0; s < STEPS; ++s) {
      for (uint32_t k = 0; k < 8; ++k) j->x[s][k] = half_of(c, s * 8u + k);
    }
    for (uint32_t i = 0; i < VALUES; ++i) j->src[i] = value(c + 7u, i) * (float)(1u << (i % 5u));
  }
  const uint16_t* w = &weights[0][0][0];
  TESSERA_AMP_LW_BANKS(w);
  for (uint32_t c = 1; c < TESSERA_CONTEXTS; ++c) tessera_run_worker(c, worker, &jobs[c]);
  run_job(&jobs[0]);
  tessera_wait_workers();

  uint32_t fail = 0;
  for (uint32_t c = 0; c < TESSERA_CONTEXTS && fail == 0; ++c) fail = check(&jobs[c], c);
  tessera_puts(fail ? "wl_amp_fp16 FAIL\n" : "wl_amp_fp16 ok\n");
  return (int)fail;
}
