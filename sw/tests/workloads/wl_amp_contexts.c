/* Lockstep workload: the matrix unit (docs/tile.md, "Matrix unit") from all six contexts at once.
 * The supervisor loads both weight banks (AMP.LW, shared by every context); then each context,
 * the supervisor included, loads its four accumulator rows (AMP.LA), runs AMP.S steps on both
 * banks and every row, stores the rows (AMP.SA, once with clear), reads single accumulators
 * (AMP.RD), clears (AMP.CLR) and steps with rd = x0. Every result is checked against the scalar
 * chain of FMADD.S (__builtin_fmaf, RNE), which is the unit's bit-exact definition; the inputs are
 * inexact thirds and sevenths so that a wrong order of the chain changes bits. Each context's
 * accumulators must hold only its own work (accumulators per context, weights per tile). The
 * exit code names the first failed check: 10 + context for a wrong row, 20 + context for a wrong
 * AMP.RD, 30 + context for a row not cleared, 40 + context for a wrong post-increment. */
#include <stdint.h>

#include "tessera/amp.h"
#include "tessera/tile.h"

#define STEPS 6 /* AMP.S steps per context: rows 0..3, banks alternating */

struct job {
  float acc0[4][4];  /* the accumulators each row starts from (AMP.LA) */
  float x[STEPS][4]; /* the inputs of each AMP.S */
  float out[4][4];   /* the rows after the steps (AMP.SA) */
  float again[4][4]; /* the rows after AMP.SA with clear and AMP.CLR: all +0 */
  float rd[4];       /* AMP.RD of acc[r][r] */
  uint32_t bump;     /* pointer bytes the post-increments stepped */
  uint32_t fail;     /* 0, or the first failed check's code */
} __attribute__((aligned(16)));

static float weights[2][4][4] __attribute__((aligned(16)));
static struct job jobs[TESSERA_CONTEXTS];

/* Bit patterns, so that -0 and +0 differ (the freestanding build has no string.h). */
static int same_bits(const float* a, const float* b, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    const union {
      float f;
      uint32_t u;
    } x = {a[i]}, y = {b[i]};
    if (x.u != y.u) return 0;
  }
  return 1;
}

static float value(uint32_t seed, uint32_t i) {
  /* Inexact values of both signs and several magnitudes. */
  const float n = (float)((seed * 7u + i * 13u) % 29u) - 14.0f;
  return (i & 1u) ? n / 3.0f : n / 7.0f;
}

static void fill(struct job* j, uint32_t c) {
  for (uint32_t r = 0; r < 4; ++r) {
    for (uint32_t k = 0; k < 4; ++k) j->acc0[r][k] = value(c + 40u, r * 4u + k);
  }
  for (uint32_t s = 0; s < STEPS; ++s) {
    for (uint32_t k = 0; k < 4; ++k) j->x[s][k] = value(c, s * 4u + k);
  }
}

/* The row and bank of step s. */
static uint32_t row_of(uint32_t s) {
  return s % 4u;
}
static uint32_t bank_of(uint32_t s, uint32_t c) {
  return (s + c) % 2u;
}

/* The unit's instructions take their fields as constants: one case per (bank, row). */
static void amp_step(const float** p, uint32_t bank, uint32_t row) {
  const float* q = *p;
  switch (bank * 4u + row) {
    case 0:
      TESSERA_AMP_S(q, 0, 0);
      break;
    case 1:
      TESSERA_AMP_S(q, 0, 1);
      break;
    case 2:
      TESSERA_AMP_S(q, 0, 2);
      break;
    case 3:
      TESSERA_AMP_S(q, 0, 3);
      break;
    case 4:
      TESSERA_AMP_S(q, 1, 0);
      break;
    case 5:
      TESSERA_AMP_S(q, 1, 1);
      break;
    case 6:
      TESSERA_AMP_S(q, 1, 2);
      break;
    default:
      TESSERA_AMP_S(q, 1, 3);
      break;
  }
  *p = q;
}

static void run_job(struct job* j) {
  const float* a = &j->acc0[0][0];
  const float* start = a;
  TESSERA_AMP_LA(a, 0);
  TESSERA_AMP_LA(a, 1);
  TESSERA_AMP_LA(a, 2);
  TESSERA_AMP_LA(a, 3);
  j->bump = (uint32_t)(a - start) * 4u;
  const float* x = &j->x[0][0];
  const uint32_t c = tessera_context_id();
  for (uint32_t s = 0; s < STEPS; ++s) amp_step(&x, bank_of(s, c), row_of(s));
  j->bump += (uint32_t)(x - &j->x[0][0]) * 4u;
  /* rd = x0: AMP.SA stores row 0 at `same`; no register is written. */
  const float* same = &j->x[0][0];
  __asm__ volatile(".insn r %[op], %[f3], %[f7], x0, %[p], x0"
                   :
                   : [op] "i"(TESS_AMP_OPCODE), [f3] "i"(TESS_AMP_F3_SA),
                     [f7] "i"(TESSERA_AMP_FUNCT7(0, 0, 0, 0)), [p] "r"(same)
                   : "memory");
  /* That stored row 0 over x[0]: check() uses main's copy of the step-0 inputs. */
  TESSERA_AMP_RD(j->rd[0], 0, 0);
  TESSERA_AMP_RD(j->rd[1], 1, 1);
  TESSERA_AMP_RD(j->rd[2], 2, 2);
  TESSERA_AMP_RD(j->rd[3], 3, 3);
  float* o = &j->out[0][0];
  TESSERA_AMP_SA(o, 0, 1); /* with clear */
  TESSERA_AMP_SA(o, 1, 0);
  TESSERA_AMP_SA(o, 2, 0);
  TESSERA_AMP_SA(o, 3, 0);
  j->bump += (uint32_t)(o - &j->out[0][0]) * 4u;
  TESSERA_AMP_CLR();
  float* g = &j->again[0][0];
  TESSERA_AMP_SA(g, 0, 0);
  TESSERA_AMP_SA(g, 1, 0);
  TESSERA_AMP_SA(g, 2, 0);
  TESSERA_AMP_SA(g, 3, 0);
}

static void worker(void* arg) {
  run_job((struct job*)arg);
}

/* The expected rows: per step, acc[r][col] = fma chain over k from the accumulator. */
static uint32_t check(struct job* j, uint32_t c, const float x0[4]) {
  float acc[4][4];
  for (uint32_t i = 0; i < 16; ++i) acc[i / 4][i % 4] = j->acc0[i / 4][i % 4];
  for (uint32_t s = 0; s < STEPS; ++s) {
    const float* x = s == 0 ? x0 : j->x[s];
    const uint32_t r = row_of(s), b = bank_of(s, c);
    for (uint32_t col = 0; col < 4; ++col) {
      float sum = acc[r][col];
      for (uint32_t k = 0; k < 4; ++k) sum = __builtin_fmaf(x[k], weights[b][k][col], sum);
      acc[r][col] = sum;
    }
  }
  if (!same_bits(&acc[0][0], &j->out[0][0], 16)) return 10u + c;
  for (uint32_t r = 0; r < 4; ++r) {
    if (!same_bits(&j->rd[r], &acc[r][r], 1)) return 20u + c;
  }
  const float zero[4][4] = {{0}};
  if (!same_bits(&j->again[0][0], &zero[0][0], 16)) return 30u + c;
  if (j->bump != 4u * 16u + STEPS * 16u + 4u * 16u) return 40u + c;
  return 0;
}

int main(void) {
  for (uint32_t b = 0; b < 2; ++b) {
    for (uint32_t k = 0; k < 4; ++k) {
      for (uint32_t col = 0; col < 4; ++col) weights[b][k][col] = value(b + 90u, k * 4u + col);
    }
  }
  float x0[TESSERA_CONTEXTS][4];
  for (uint32_t c = 0; c < TESSERA_CONTEXTS; ++c) {
    fill(&jobs[c], c);
    for (uint32_t k = 0; k < 4; ++k) x0[c][k] = jobs[c].x[0][k];
  }
  const float* w = &weights[0][0][0];
  TESSERA_AMP_LW_BANKS(w);
  for (uint32_t c = 1; c < TESSERA_CONTEXTS; ++c) tessera_run_worker(c, worker, &jobs[c]);
  run_job(&jobs[0]);
  tessera_wait_workers();

  uint32_t fail = 0;
  for (uint32_t c = 0; c < TESSERA_CONTEXTS && fail == 0; ++c) fail = check(&jobs[c], c, x0[c]);
  tessera_puts(fail ? "wl_amp_contexts FAIL\n" : "wl_amp_contexts ok\n");
  return (int)fail;
}
