/* Lockstep workload: the matrix unit's eight accumulator rows, row strides and row limit
 * (docs/tile.md, "Row strides and the row limit") from all six contexts at once. The supervisor
 * loads both weight banks; then each context c sets its own strides and the row limit c + 3
 * (3..8), loads its rows (AMP.LA, one pointer, row r at base + r * strideC), runs STEPS blocks of
 * eight AMP.S (row r's inputs at p + r * strideS; only row 7 steps p) and one of eight AMP.H,
 * reads acc[7][1] (AMP.RD), stores the rows with clear (AMP.SA) and restores the reset addressing.
 * Rows at or past the limit must be skipped: not loaded, not computed, not stored (their places
 * keep a sentinel), while row 7's post-increment still steps the pointers. Context 4 uses a
 * negative accumulator stride (rows downwards, modulo 2^32). Every result is checked against the
 * scalar FMADD.S chain (__builtin_fmaf; AMP.H's halves widened by AMP.CVTSH, which the unit's
 * own tests check). The exit code names the first failed check: 10 + context for a wrong row, 20 +
 * context for a wrong AMP.RD, 30 + context for a skipped row that was written, 40 + context for a
 * wrong post-increment. */
#include <stdint.h>

#include "tessera/amp.h"
#include "tessera/tile.h"

#define ROWS 8
#define STEPS 3     /* blocks of AMP.S; then one of AMP.H */
#define ACC_GAP 32u /* bytes between two rows of acc0 and out (strideC, but context 4's) */
#define SENTINEL (-1234.5f)

struct job {
  /* Row r of the inputs: STEPS blocks of 4 floats, one block of 8 halves, padding per context. */
  float in[ROWS][(STEPS + 1) * 4 + 4 * TESSERA_CONTEXTS] __attribute__((aligned(16)));
  float acc0[ROWS][ACC_GAP / 4] __attribute__((aligned(16))); /* AMP.LA's rows */
  float out[ROWS][ACC_GAP / 4] __attribute__((aligned(16)));  /* AMP.SA's rows */
  float rd;                                                   /* AMP.RD of acc[7][1] */
  uint32_t bump;                                              /* bytes the pointers stepped */
} __attribute__((aligned(16)));

static float weights[2][4][4] __attribute__((aligned(16)));
static struct job jobs[TESSERA_CONTEXTS];

static uint32_t bits_of(float f) {
  const union {
    float f;
    uint32_t u;
  } x = {f};
  return x.u;
}

static float value(uint32_t seed, uint32_t i) {
  /* Inexact values of both signs and several magnitudes. */
  const float n = (float)((seed * 7u + i * 13u) % 29u) - 14.0f;
  return (i & 1u) ? n / 3.0f : n / 7.0f;
}

static uint32_t limit_of(uint32_t c) {
  return c + 3u;
}
/* The input stride: rows of one context are this far apart (a multiple of 16). */
static uint32_t stride_s_of(uint32_t c) {
  return (uint32_t)sizeof jobs[0].in[0] - 16u * (TESSERA_CONTEXTS - 1u - c);
}
/* The accumulator stride: ACC_GAP, or its negative for context 4 (rows from the last upwards). */
static uint32_t stride_c_of(uint32_t c) {
  return c == 4u ? 0u - ACC_GAP : ACC_GAP;
}
/* The byte offset of row r's accumulator place in acc0 and out. */
static uint32_t acc_row(uint32_t c, uint32_t r) {
  return c == 4u ? (ROWS - 1u - r) : r;
}

static void run_job(struct job* j) {
  const uint32_t c = tessera_context_id();
  TESSERA_AMP_CLR();
  TESSERA_AMP_STRIDE(stride_s_of(c), stride_c_of(c));
  TESSERA_AMP_ROWS(limit_of(c));
  const char* a = (const char*)&j->acc0[acc_row(c, 0)][0];
  const char* const a0 = a;
  TESSERA_AMP_EIGHT_ROWS(TESS_AMP_F3_LA, 0, 0, a);
  j->bump = (uint32_t)(a - a0);
  const char* x = (const char*)&j->in[0][0];
  const char* const x0 = x;
  TESSERA_AMP_EIGHT_ROWS(TESS_AMP_F3_S, 0, 0, x);
  TESSERA_AMP_EIGHT_ROWS(TESS_AMP_F3_S, 0, 1, x);
  TESSERA_AMP_EIGHT_ROWS(TESS_AMP_F3_S, 0, 0, x);
  TESSERA_AMP_EIGHT_ROWS(TESS_AMP_F3_H, 0, 1, x);
  j->bump += (uint32_t)(x - x0);
  TESSERA_AMP_RD(j->rd, 7, 1);
  char* o = (char*)&j->out[acc_row(c, 0)][0];
  char* const o0 = o;
  TESSERA_AMP_EIGHT_ROWS(TESS_AMP_F3_SA, 1, 0, o); /* with clear */
  j->bump += (uint32_t)(o - o0);
  TESSERA_AMP_STRIDE(0u, 0u);
  TESSERA_AMP_ROWS(8u);
}

static void worker(void* arg) {
  run_job((struct job*)arg);
}

static float widen(uint32_t h) {
  float f;
  TESSERA_AMP_CVTSH_LO(f, h);
  return f;
}

static uint32_t check(const struct job* j, uint32_t c) {
  const uint32_t n = limit_of(c);
  float acc[ROWS][4];
  for (uint32_t r = 0; r < ROWS; ++r) {
    for (uint32_t col = 0; col < 4; ++col) acc[r][col] = r < n ? j->acc0[acc_row(c, r)][col] : 0.0f;
  }
  /* Row r's inputs start stride_s_of(c) * r bytes into in[][]. */
  const char* base = (const char*)&j->in[0][0];
  for (uint32_t s = 0; s <= STEPS; ++s) {
    const uint32_t bank = (s == 1u || s == STEPS) ? 1u : 0u;
    for (uint32_t r = 0; r < n; ++r) {
      const char* row = base + stride_s_of(c) * r + 16u * s;
      for (uint32_t col = 0; col < 4; ++col) {
        float sum = acc[r][col];
        if (s < STEPS) {
          const float* xf = (const float*)row;
          for (uint32_t k = 0; k < 4; ++k) sum = __builtin_fmaf(xf[k], weights[bank][k][col], sum);
        } else {
          /* AMP.H: eight halves against the bank's 64 bytes as a row-major 8 x 4 half matrix. */
          const uint16_t* xh = (const uint16_t*)row;
          const uint16_t* wh = (const uint16_t*)&weights[bank][0][0];
          for (uint32_t k = 0; k < 8; ++k) {
            sum = __builtin_fmaf(widen(xh[k]), widen(wh[k * 4u + col]), sum);
          }
        }
        acc[r][col] = sum;
      }
    }
  }
  for (uint32_t r = 0; r < ROWS; ++r) {
    for (uint32_t col = 0; col < 4; ++col) {
      const uint32_t got = bits_of(j->out[acc_row(c, r)][col]);
      if (r < n && got != bits_of(acc[r][col])) return 10u + c;
      if (r >= n && got != bits_of(SENTINEL)) return 30u + c;
    }
  }
  if (bits_of(j->rd) != bits_of(acc[7][1])) return 20u + c;
  if (j->bump != 16u * (2u + STEPS + 1u)) return 40u + c;
  return 0;
}

int main(void) {
  for (uint32_t b = 0; b < 2; ++b) {
    for (uint32_t k = 0; k < 4; ++k) {
      for (uint32_t col = 0; col < 4; ++col) weights[b][k][col] = value(b + 90u, k * 4u + col);
    }
  }
  for (uint32_t c = 0; c < TESSERA_CONTEXTS; ++c) {
    struct job* j = &jobs[c];
    float* in = &j->in[0][0];
    for (uint32_t i = 0; i < sizeof j->in / 4; ++i) in[i] = value(c, i);
    /* AMP.H's block: halves of 1/3-ish values (binary16 0x3555 = 0.333) of both signs. */
    for (uint32_t r = 0; r < ROWS; ++r) {
      uint16_t* h = (uint16_t*)((char*)in + stride_s_of(c) * r + 16u * STEPS);
      for (uint32_t k = 0; k < 8; ++k)
        h[k] = (uint16_t)(0x3555u + 97u * (r + k + c) + ((k & 1u) << 15));
    }
    for (uint32_t r = 0; r < ROWS; ++r) {
      for (uint32_t col = 0; col < ACC_GAP / 4; ++col) {
        j->acc0[r][col] = value(c + 40u, r * 8u + col);
        j->out[r][col] = SENTINEL;
      }
    }
  }
  const float* w = &weights[0][0][0];
  TESSERA_AMP_LW_BANKS(w);
  for (uint32_t c = 1; c < TESSERA_CONTEXTS; ++c) tessera_run_worker(c, worker, &jobs[c]);
  run_job(&jobs[0]);
  tessera_wait_workers();

  uint32_t fail = 0;
  for (uint32_t c = 0; c < TESSERA_CONTEXTS && fail == 0; ++c) fail = check(&jobs[c], c);
  tessera_puts(fail ? "wl_amp_rows FAIL\n" : "wl_amp_rows ok\n");
  return (int)fail;
}
