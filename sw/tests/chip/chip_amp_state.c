/* Matrix-unit state kept across syncs (docs/checkpoint.md, "The matrix unit's state"): the state
 * a checkpoint at any of this program's syncs must hold for the run to continue.
 *
 * The supervisor loads both weight banks once, before the first sync. Every context (the
 * supervisor and each worker) sets its row strides and the row limit LIMIT (AMP.STRIDE,
 * AMP.ROWS), loads its accumulator rows (AMP.LA, one pointer) and seeds its stochastic-rounding
 * generator (AMP.SEED) before the first sync, then in each of PHASES supersteps runs one AMP.S
 * on every accumulator row (one pointer, the row stride placing each row's inputs; the rows at
 * and past LIMIT are skipped) and CONVS AMP.CVTHS.SR conversions; a sync follows each superstep,
 * so at every sync the weights, every context's accumulators, generator and row addressing are
 * live. After the last superstep each context stores its rows (AMP.SA). The supervisor checks
 * the rows against the chain of FMADD.S (__builtin_fmaf, the unit's bit-exact definition) and
 * each context's conversions against a replay of its seed on the supervisor's generator. The
 * values depend on the tile, so a state restored into the wrong tile shows too.
 * Exit codes: 10 + context a wrong accumulator row, 20 + context a stochastic rounding that does
 * not replay. */
#include "chip_test.h"
#include "tessera/amp.h"

#define PHASES 3 /* supersteps, each followed by a sync */
#define CONVS 3  /* AMP.CVTHS.SR per context and superstep */
#define ROWS 8   /* accumulator rows */
#define LIMIT 7  /* the row limit: row 7 is skipped (its out row stays +0) */

struct job {
  /* The unit's operands first: 16-byte aligned (the unit's loads and stores). */
  float acc0[ROWS][4];            /* the rows each context starts from (AMP.LA) */
  float x[PHASES][ROWS][4];       /* the inputs of the AMP.S of superstep p, row r */
  float out[ROWS][4];             /* the rows after the last superstep (AMP.SA) */
  uint32_t src[PHASES][CONVS][2]; /* binary32 bit patterns converted in superstep p */
  uint32_t sr[PHASES][CONVS];     /* the halves AMP.CVTHS.SR gave */
  uint32_t seed;
  uint32_t phase;
} __attribute__((aligned(16)));

static float weights[2][4][4] __attribute__((aligned(16)));
static struct job jobs[TESSERA_CONTEXTS];

static uint32_t bits_of(float f) {
  const union {
    float f;
    uint32_t u;
  } v = {f};
  return v.u;
}

static float value(uint32_t a, uint32_t b, uint32_t i) {
  /* Inexact values of both signs and several magnitudes, never 0 (a live weight is not +0). */
  int32_t n = (int32_t)(chip_hash(a, b, i) % 28u) - 14;
  if (n >= 0) n += 1;
  return (i & 1u) ? (float)n / 3.0f : (float)n / 7.0f;
}

/* The weight bank context c uses in superstep p. */
static uint32_t bank_of(uint32_t p, uint32_t c) {
  return (p + c) % 2u;
}

static void superstep(struct job* j) {
  const uint32_t p = j->phase;
  const uint32_t c = tessera_context_id();
  if (p == 0) {
    TESSERA_AMP_STRIDE(16u, 16u);
    TESSERA_AMP_ROWS(LIMIT);
    const float* a = &j->acc0[0][0];
    TESSERA_AMP_EIGHT_ROWS(TESS_AMP_F3_LA, 0, 0, a);
    TESSERA_AMP_SEED(j->seed);
  }
  const float* x = &j->x[p][0][0];
  if (bank_of(p, c) == 0) {
    TESSERA_AMP_EIGHT_ROWS(TESS_AMP_F3_S, 0, 0, x);
  } else {
    TESSERA_AMP_EIGHT_ROWS(TESS_AMP_F3_S, 0, 1, x);
  }
  for (uint32_t i = 0; i < CONVS; ++i) {
    TESSERA_AMP_CVTHS_SR(j->sr[p][i], j->src[p][i][0], j->src[p][i][1]);
  }
  if (p + 1 == PHASES) {
    float* o = &j->out[0][0];
    TESSERA_AMP_EIGHT_ROWS(TESS_AMP_F3_SA, 0, 0, o);
  }
}

static void worker(void* arg) {
  superstep((struct job*)arg);
}

static uint32_t check(const struct job* j, uint32_t c) {
  float acc[ROWS][4];
  for (uint32_t i = 0; i < ROWS * 4; ++i)
    acc[i / 4][i % 4] = i / 4 < LIMIT ? j->acc0[i / 4][i % 4] : 0.0f;
  for (uint32_t p = 0; p < PHASES; ++p) {
    const uint32_t b = bank_of(p, c);
    for (uint32_t r = 0; r < LIMIT; ++r) {
      for (uint32_t col = 0; col < 4; ++col) {
        float sum = acc[r][col];
        for (uint32_t k = 0; k < 4; ++k)
          sum = __builtin_fmaf(j->x[p][r][k], weights[b][k][col], sum);
        acc[r][col] = sum;
      }
    }
  }
  for (uint32_t i = 0; i < ROWS * 4; ++i) {
    if (bits_of(acc[i / 4][i % 4]) != bits_of(j->out[i / 4][i % 4])) return 10u + c;
  }
  /* The same seed gives the same bits: replay every conversion of context c in order. */
  TESSERA_AMP_SEED(j->seed);
  for (uint32_t p = 0; p < PHASES; ++p) {
    for (uint32_t i = 0; i < CONVS; ++i) {
      uint32_t h;
      TESSERA_AMP_CVTHS_SR(h, j->src[p][i][0], j->src[p][i][1]);
      if (h != j->sr[p][i]) return 20u + c;
    }
  }
  return 0;
}

int main(void) {
  const uint32_t t = tessera_tile_id();
  for (uint32_t i = 0; i < 32; ++i) weights[i / 16][i / 4 % 4][i % 4] = value(t, 90u, i);
  for (uint32_t c = 0; c < TESSERA_CONTEXTS; ++c) {
    struct job* j = &jobs[c];
    for (uint32_t i = 0; i < ROWS * 4; ++i) j->acc0[i / 4][i % 4] = value(t, c + 40u, i);
    for (uint32_t i = 0; i < PHASES * ROWS * 4; ++i) {
      j->x[i / (ROWS * 4)][i / 4 % ROWS][i % 4] = value(t, c, i);
    }
    for (uint32_t i = 0; i < PHASES * CONVS * 2; ++i) {
      /* Values between binary16 neighbours, so that stochastic rounding goes either way. */
      j->src[i / (CONVS * 2)][i / 2 % CONVS][i % 2] = bits_of(value(t, c + 70u, i)) ^ (i & 0xfffu);
    }
    j->seed = chip_hash(t, c, 5u) | 1u;
  }
  const float* w = &weights[0][0][0];
  TESSERA_AMP_LW_BANKS(w);
  for (uint32_t p = 0; p < PHASES; ++p) {
    for (uint32_t c = 0; c < TESSERA_CONTEXTS; ++c) jobs[c].phase = p;
    for (uint32_t c = 1; c < TESSERA_CONTEXTS; ++c) tessera_run_worker(c, worker, &jobs[c]);
    superstep(&jobs[0]);
    tessera_sync(p + 1);
  }
  for (uint32_t c = 0; c < TESSERA_CONTEXTS; ++c) {
    const uint32_t fail = check(&jobs[c], c);
    CHIP_CHECK(fail == 0, fail);
  }
  chip_pass();
}
