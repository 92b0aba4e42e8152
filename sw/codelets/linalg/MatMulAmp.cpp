// MatMulBlocked's product on the matrix unit (docs/tile.md, "Matrix unit"; docs/library.md,
// "matmul on the matrix unit"): the same result bit for bit (each element is a chain of fused
// multiply-adds over k in increasing order, from +0 or from c: AMP.S's order), compared with the
// scalar vertices in sw/library/tests.
//
// One vertex per context of the tile, all on the same fields. The weights are one set per tile,
// so the contexts work in lock step: the supervisor (context 0) loads 4x4 blocks of b into one
// weight bank while the five workers each stream four rows of a through the other bank, as
// docs/tile.md "Timing" describes (5 of 6 slots compute). Lock step needs no handshake in the
// loop: every context issues once per round and every instruction here takes one round, so
// contexts that start the loop in the same round stay together. They meet at an agreed cycle:
// the supervisor publishes T0 in `sync`; pass p starts at T0 + 6 * p * period for everyone, and
// each context waits for it with a delay loop counted from its cycle CSR (meet below). A context
// that would arrive late (a broken invariant, not a data case) stops at EBREAK instead of
// computing a wrong product.
//
// Layouts (the library gives them): a is op(a) row-major [rows, k]; b is op(b) in column groups
// [cols / 4][k][4] (a weight row per 16 bytes); c is [rows, cols] row-major, or with flags bit 3
// in column groups [cols / 4][rows][4] like b (a weight variable in the unit's layout, updated in
// place); k and cols multiples of 4, k >= 8, every field 16-byte aligned. A pass computes one
// column group for up to 20 rows (four a worker, its accumulators).
#include "tessera/amp.h"
#include "tessera/amp_matmul.h"
#include "tessera/tile.h"
#include "tessera/vertex.hpp"

namespace {

constexpr uint32_t kWorkers = TESSERA_NUM_WORKERS;
constexpr uint32_t kRows = TESSERA_AMP_MATMUL_ROWS;
// Rounds from the supervisor's publishing of T0 to the first pass: room for the workers to see it
// and set up their first pass.
constexpr uint32_t kStartRounds = TESSERA_AMP_MATMUL_START_ROUNDS;
// Rounds between the end of one pass's lock-step loop and the start of the next: a worker's
// stores, its next pass's set-up and the wait's head.
constexpr uint32_t kGapRounds = TESSERA_AMP_MATMUL_GAP_ROUNDS;
constexpr uint32_t kBlockGapRounds = TESSERA_AMP_MATMUL_BLOCK_GAP_ROUNDS;

// Wait until the round that holds cycle t (a cycle of the supervisor's slot); the instruction
// after this block issues in that round. The cycle CSR is read at its issue cycle c0 = 6 r0 + ctx
// (+ the same offset as t), so (t - c0 + ctx) / 6 rounds remain (negative: too late, EBREAK);
// the block takes 12 + D rounds for D >= 0 whatever the parity of D. Written into each role's
// pass so that the compiler puts nothing between the wait and the lock-step loop.
#define TESSERA_AMP_MEET                                                                \
  "csrr t0, cycle\n"                                                                    \
  "sub t1, %[t], t0\n"                                                                  \
  "add t1, t1, %[ctx]\n"                                                                \
  "bltz t1, 90f\n"                                                                      \
  "mulhu t1, t1, %[sixth]\n" /* x / 6 = mulhu(x, 0xAAAAAAAB) >> 2, x a multiple of 6 */ \
  "srli t1, t1, 2\n"                                                                    \
  "addi t1, t1, -12\n"                                                                  \
  "bltz t1, 90f\n"                                                                      \
  "andi t2, t1, 1\n"                                                                    \
  "beqz t2, 81f\n"                                                                      \
  "nop\n"                                                                               \
  "81: srli t1, t1, 1\n"                                                                \
  "beqz t1, 83f\n"                                                                      \
  "82: addi t1, t1, -1\n"                                                               \
  "bnez t1, 82b\n"                                                                      \
  "83:\n"

// One unit instruction stepping register operand `reg` by 16 bytes: funct3 and funct7 name
// immediate operands of the asm statement (op, and the f7 table below).
#define TESSERA_AMP_STEP(f3, f7, reg) \
  ".insn r %[op], %[" #f3 "], %[" #f7 "], %[" #reg "], %[" #reg "], x0\n"

// funct7 of bank b, row r (docs/tile.md, "Encoding"), as immediate asm operands w<b><r>.
#define TESSERA_AMP_F7_OPERANDS                                                             \
  [w00] "i"(TESSERA_AMP_FUNCT7(0, 0, 0, 0)), [w01] "i"(TESSERA_AMP_FUNCT7(0, 0, 0, 1)),     \
      [w02] "i"(TESSERA_AMP_FUNCT7(0, 0, 0, 2)), [w03] "i"(TESSERA_AMP_FUNCT7(0, 0, 0, 3)), \
      [w10] "i"(TESSERA_AMP_FUNCT7(0, 0, 1, 0)), [w11] "i"(TESSERA_AMP_FUNCT7(0, 0, 1, 1)), \
      [w12] "i"(TESSERA_AMP_FUNCT7(0, 0, 1, 2)), [w13] "i"(TESSERA_AMP_FUNCT7(0, 0, 1, 3)), \
      [op] "i"(TESS_AMP_OPCODE), [lw] "i"(TESS_AMP_F3_LW), [s] "i"(TESS_AMP_F3_S)

constexpr uint32_t kSixth = 0xAAAAAAABu;

// The supervisor's part of a pass from cycle t: block 0 into bank 0, then per pair of blocks the
// next two (bank 1 while the workers use bank 0, bank 0 while they use bank 1). The last pair's
// second load reads the block after the group (the next group, or at most 64 bytes past b: still
// SRAM, the stacks lie above every buffer) into bank 0, which no worker then uses.
void supervisorPass(uint32_t t, const float* pb, uint32_t pairs) {
  const float* end = pb + 16 + 32 * pairs;
  __asm__ volatile(TESSERA_AMP_MEET
                   // rounds 0..3: block 0 into bank 0
                   TESSERA_AMP_STEP(lw, w00, p) TESSERA_AMP_STEP(lw, w01, p)
                   TESSERA_AMP_STEP(lw, w02, p) TESSERA_AMP_STEP(lw, w03, p)
                   "1:\n"
                   // block 2i+1 into bank 1, block 2i+2 into bank 0
                   TESSERA_AMP_STEP(lw, w10, p) TESSERA_AMP_STEP(lw, w11, p)
                   TESSERA_AMP_STEP(lw, w12, p) TESSERA_AMP_STEP(lw, w13, p)
                   TESSERA_AMP_STEP(lw, w00, p) TESSERA_AMP_STEP(lw, w01, p)
                   TESSERA_AMP_STEP(lw, w02, p) TESSERA_AMP_STEP(lw, w03, p)
                   "bne %[p], %[end], 1b\n"
                   "j 91f\n"
                   "90: ebreak\n"
                   "91:\n"
                   : [p] "+r"(pb)
                   : [t] "r"(t), [ctx] "r"(0u), [sixth] "r"(kSixth), [end] "r"(end),
                     TESSERA_AMP_F7_OPERANDS
                   : "t0", "t1", "t2", "memory");
}

// A worker's part of a pass from cycle t: four rounds while bank 0 fills, then per pair of blocks
// its four rows through bank 0 and through bank 1, then an odd last block through bank 0.
void workerPass(uint32_t t, uint32_t ctx, const float* p0, const float* p1, const float* p2,
                const float* p3, uint32_t pairs, bool odd) {
  const float* end = p0 + 8 * pairs;
  __asm__ volatile(TESSERA_AMP_MEET
                   "nop\nnop\nnop\nnop\n"
                   "1:\n"
                   TESSERA_AMP_STEP(s, w00, p0) TESSERA_AMP_STEP(s, w01, p1)
                   TESSERA_AMP_STEP(s, w02, p2) TESSERA_AMP_STEP(s, w03, p3)
                   TESSERA_AMP_STEP(s, w10, p0) TESSERA_AMP_STEP(s, w11, p1)
                   TESSERA_AMP_STEP(s, w12, p2) TESSERA_AMP_STEP(s, w13, p3)
                   "bne %[p0], %[end], 1b\n"
                   "beqz %[odd], 91f\n"
                   TESSERA_AMP_STEP(s, w00, p0) TESSERA_AMP_STEP(s, w01, p1)
                   TESSERA_AMP_STEP(s, w02, p2) TESSERA_AMP_STEP(s, w03, p3)
                   "j 91f\n"
                   "90: ebreak\n"
                   "91:\n"
                   : [p0] "+r"(p0), [p1] "+r"(p1), [p2] "+r"(p2), [p3] "+r"(p3)
                   : [t] "r"(t), [ctx] "r"(ctx), [sixth] "r"(kSixth), [end] "r"(end),
                     [odd] "r"(static_cast<uint32_t>(odd)), TESSERA_AMP_F7_OPERANDS
                   : "t0", "t1", "t2", "memory");
}

}  // namespace

TESSERA_VERTEX(MatMulAmp, (Input, float, a), (Input, float, b), (InOut, float, c),
               (InOut, int32_t, sync), (Param, uint32_t, k), (Param, uint32_t, flags)) {
  const uint32_t kk = k;
  const uint32_t rows = a.size() / kk, cols = b.size() / kk;
  const uint32_t blocks = kk / 4, pairs = blocks / 2;
  const bool odd = (blocks & 1u) != 0;
  // Rounds of a pass: the lock-step part (4 + 9 a pair + 4 for an odd block) and the gap.
  const uint32_t period = 4 + 9 * pairs + (odd ? 4 : 0) + kGapRounds;
  const uint32_t groups = cols / 4, rowGroups = (rows + kRows - 1) / kRows;
  const uint32_t passesPerGroup = (rowGroups + kWorkers - 1) / kWorkers;
  const uint32_t ctx = tessera_context_id();
  volatile int32_t* const flag = sync.data();
  // Passes go row block by row block (s: the 20 rows of the five workers), column group by
  // column group within one (g): pass p = s * groups + g starts at t0 + 6 * (period * p +
  // kBlockGapRounds * s). A worker's
  // rows stay the same across a row block's passes, and AMP.SA steps its row pointers to the next
  // group, so the code between passes is short (the gap).
  const uint32_t passCycles = 6 * period;
  // A row block's first pass comes later by kBlockGapRounds: the workers set up new rows.
  const uint32_t blockCycles = 6 * kBlockGapRounds;
  if (ctx == 0) {
    uint32_t t0 = tessera_cycle() + 6 * kStartRounds;
    if (t0 == 0) t0 = 6;  // 0 means "not yet published"
    *flag = static_cast<int32_t>(t0);
    uint32_t t = t0;
    for (uint32_t s = 0; s < passesPerGroup; ++s, t += blockCycles) {
      const float* pb = b.data();
      for (uint32_t g = 0; g < groups; ++g, pb += kk * 4, t += passCycles)
        supervisorPass(t, pb, pairs);
    }
    // Every worker with a pass read T0 before the first pass began.
    *flag = 0;
    return;
  }
  const uint32_t w = ctx - 1;
  if (w >= rowGroups) return;  // no rows for this worker in any pass
  uint32_t t0;
  while ((t0 = static_cast<uint32_t>(*flag)) == 0) {
  }
  const bool accumulate = (flags & 4u) != 0;
  const bool cGroups = (flags & 8u) != 0;
  const uint32_t rowStep = kWorkers * kRows;
  // The worker's rows lie in row block s = 0, 1, ...: r0 = 20 s + 4 w.
  for (uint32_t r0 = w * kRows, tBlock = t0; r0 < rows;
       r0 += rowStep, tBlock += passCycles * groups + blockCycles) {
    // Rows past the end repeat the last row: computed, never stored.
    const uint32_t last = rows - 1 - r0;  // the last row as an offset from r0
    const uint32_t o1 = last < 1 ? last : 1, o2 = last < 2 ? last : 2, o3 = last < 3 ? last : 3;
    const float* const a0 = a.data() + r0 * kk;
    const float* const a1 = a0 + o1 * kk;
    const float* const a2 = a0 + o2 * kk;
    const float* const a3 = a0 + o3 * kk;
    if (cGroups) {
      // c in column groups: the worker's rows of a group are 16-byte neighbours, so one pointer
      // walks them (AMP.LA/AMP.SA step it) and one add takes it to the next group. The rows past
      // the end load what follows (at most 48 bytes past c: SRAM) into accumulators never stored.
      const float* l = c.data() + r0 * 4;
      float* p = c.data() + r0 * 4;
      const uint32_t stored = last < 3 ? last + 1 : 4;
      const int32_t lSkip = static_cast<int32_t>(rows * 4) - 16;
      const int32_t pSkip = static_cast<int32_t>(rows * 4 - 4 * stored);
      for (uint32_t g = 0, t = tBlock; g < groups; ++g, t += passCycles) {
        if (accumulate) {
          TESSERA_AMP_LA(l, 0);
          TESSERA_AMP_LA(l, 1);
          TESSERA_AMP_LA(l, 2);
          TESSERA_AMP_LA(l, 3);
          l += lSkip;
        } else {
          TESSERA_AMP_CLR();
        }
        workerPass(t, ctx, a0, a1, a2, a3, pairs, odd);
        TESSERA_AMP_SA(p, 0, 0);
        if (last >= 1) TESSERA_AMP_SA(p, 1, 0);
        if (last >= 2) TESSERA_AMP_SA(p, 2, 0);
        if (last >= 3) TESSERA_AMP_SA(p, 3, 0);
        p += pSkip;
      }
      continue;
    }
    float* c0 = c.data() + r0 * cols;
    float* c1 = c0 + o1 * cols;
    float* c2 = c0 + o2 * cols;
    float* c3 = c0 + o3 * cols;
    float *l0 = c0, *l1 = c1, *l2 = c2, *l3 = c3;  // AMP.LA's pointers
    for (uint32_t g = 0, t = tBlock; g < groups; ++g, t += passCycles) {
      if (accumulate) {
        TESSERA_AMP_LA(l0, 0);
        TESSERA_AMP_LA(l1, 1);
        TESSERA_AMP_LA(l2, 2);
        TESSERA_AMP_LA(l3, 3);
      } else {
        TESSERA_AMP_CLR();
      }
      workerPass(t, ctx, a0, a1, a2, a3, pairs, odd);
      TESSERA_AMP_SA(c0, 0, 0);
      if (last >= 1) TESSERA_AMP_SA(c1, 1, 0);
      if (last >= 2) TESSERA_AMP_SA(c2, 2, 0);
      if (last >= 3) TESSERA_AMP_SA(c3, 3, 0);
    }
  }
}
