// The lock-step row blocks of the matrix-unit matmul codelets, shared by MatMulAmp (fp32 inputs,
// AMP.S, 4 k a block) and MatMulAmpH (fp16 inputs, AMP.H, 8 k a block): the same instructions,
// rounds and pointer steps (16 bytes of a and 64 bytes of b a block either way), so the planner's
// model (tessera/amp_matmul.h) and everything MatMulAmp.cpp says hold for both; only the
// multiply's funct3 and the element size differ.
//
// MatMulAmp: MatMulBlocked's product on the matrix unit (docs/tile.md, "Matrix unit";
// docs/library.md, "matmul on the matrix unit"): the same result bit for bit (each element is a
// chain of fused multiply-adds over k in increasing order, from +0 or from c: AMP.S's order),
// compared with the scalar vertices in sw/library/tests.
//
// One vertex per context of the tile, all on the same fields. The weights are one set per tile,
// so the contexts work in lock step: the supervisor (context 0) loads 4x4 blocks of b into one
// weight bank while the five workers each stream four rows of a through the other bank, as
// docs/tile.md "Timing" describes (5 of 6 slots compute). Lock step needs no handshake in the
// loop: every context issues once per round and every instruction here takes one round, so
// contexts that start the loop in the same round stay together. They meet at an agreed cycle
// once per row block (20 rows, four a worker): the supervisor publishes T0 in `sync`; row block s
// starts at T0 + s * (the row block's cycles) for everyone, and each waits for it with a delay
// loop counted from its cycle CSR (meet below). A context that would arrive late (a broken
// invariant, not a data case) stops at EBREAK instead of computing a wrong product.
//
// A row block's column groups run in one lock-step stretch: the supervisor's last loads of a group
// leave the next group's first block in bank 0, and between two groups every context runs the
// same number of rounds (the tail, TESSERA_AMP_MATMUL_GROUP_TAIL_ROUNDS, and before a further
// group the head): a worker stores its four accumulator rows, steps its c and a pointers and
// loads (accumulate) or clears its accumulators, while the supervisor waits in nops (and, for an
// odd number of k blocks, loads the next group's first block). Rows past the end repeat the last
// row and store its identical sums to the last row's own place, so every worker runs the same
// instructions.
//
// Layouts (the library gives them): a is op(a) row-major [rows, k]; b is op(b) in column groups
// [cols / 4][k][4] (a weight row per 16 bytes); c is [rows, cols] row-major, or with flags bit 3
// in column groups [cols / 4][rows][4] like b (a weight variable in the unit's layout, updated in
// place); k and cols multiples of 4, k >= 8, every field 16-byte aligned.
#pragma once

#include "tessera/amp.h"
#include "tessera/amp_matmul.h"
#include "tessera/tile.h"
#include "tessera/vertex.hpp"

namespace tessera_amp_matmul {

constexpr uint32_t kWorkers = TESSERA_NUM_WORKERS;
constexpr uint32_t kRows = TESSERA_AMP_MATMUL_ROWS;
// Rounds from the supervisor's publishing of T0 to the first row block: room for the workers to
// see it and set up their first rows.
constexpr uint32_t kStartRounds = TESSERA_AMP_MATMUL_START_ROUNDS;
// Rounds between the end of one row block's lock-step stretch and the start of the next: a
// worker's set-up of its next rows and the meet's head.
constexpr uint32_t kBlockGapRounds = TESSERA_AMP_MATMUL_BLOCK_GAP_ROUNDS;

// Wait until the round that holds cycle t (a cycle of the supervisor's slot); the instruction
// after this block issues in that round. The cycle CSR is read at its issue cycle c0 = 6 r0 + ctx
// (+ the same offset as t), so (t - c0 + ctx) / 6 rounds remain (negative: too late, EBREAK);
// the block takes 12 + D rounds for D >= 0 whatever the parity of D. Written into each role's
// asm statement so that the compiler puts nothing between the wait and the lock-step stretch.
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

// funct7 of bank b, row r (docs/tile.md, "Encoding"), as immediate asm operands w<b><r>; AMP.LA
// and AMP.SA (C = 0) of row r use w0<r>.
#define TESSERA_AMP_F7_OPERANDS                                                             \
  [w00] "i"(TESSERA_AMP_FUNCT7(0, 0, 0, 0)), [w01] "i"(TESSERA_AMP_FUNCT7(0, 0, 0, 1)),     \
      [w02] "i"(TESSERA_AMP_FUNCT7(0, 0, 0, 2)), [w03] "i"(TESSERA_AMP_FUNCT7(0, 0, 0, 3)), \
      [w10] "i"(TESSERA_AMP_FUNCT7(0, 0, 1, 0)), [w11] "i"(TESSERA_AMP_FUNCT7(0, 0, 1, 1)), \
      [w12] "i"(TESSERA_AMP_FUNCT7(0, 0, 1, 2)), [w13] "i"(TESSERA_AMP_FUNCT7(0, 0, 1, 3)), \
      [op] "i"(TESS_AMP_OPCODE)

#define TESSERA_AMP_NOPS_4 "nop\nnop\nnop\nnop\n"

constexpr uint32_t kSixth = 0xAAAAAAABu;

// Rounds of a row block's lock-step stretch (both roles below): bank 0's first fill, per group the
// pairs, the odd block's test and rounds, the tail, and before each further group the head.
inline uint32_t rowBlockRounds(uint32_t groups, uint32_t pairs, bool odd, bool accumulate) {
  const uint32_t head =
      accumulate ? TESSERA_AMP_MATMUL_GROUP_HEAD_ACC_ROUNDS : TESSERA_AMP_MATMUL_GROUP_HEAD_ROUNDS;
  return 4 + groups * (9 * pairs + 1 + (odd ? 4 : 0) + TESSERA_AMP_MATMUL_GROUP_TAIL_ROUNDS) +
         (groups - 1) * head;
}

// The supervisor's row block from cycle t: block 0 into bank 0, then per group and pair of blocks
// the next two (bank 1 while the workers use bank 0, bank 0 while they use bank 1). A group's
// last pair leaves the next group's block 0 in bank 0, or with an odd number of blocks the odd
// one, and the tail then loads the next group's block 0 once the workers are done with it. The
// last group's last loads read at most 64 bytes past b (still SRAM: the stacks lie above every
// buffer) into a bank no worker then uses.
// ElemBytes: 4 (fp32 b, 4 k a block) or 2 (fp16, 8 k); pb points at b's bytes either way (a
// block is 64 bytes, 16 floats).
template <uint32_t ElemBytes>
inline void supervisorRowBlock(uint32_t t, const float* pb, uint32_t pairs, bool odd,
                               uint32_t groups, uint32_t kk, bool accumulate) {
  const float* end = pb + 16 + 32 * pairs;
  const uint32_t step = 4 * ElemBytes * kk;  // bytes of a column group of b
  __asm__ volatile(
      TESSERA_AMP_MEET
      // rounds 0..3: block 0 into bank 0
      TESSERA_AMP_STEP(lw, w00, p) TESSERA_AMP_STEP(lw, w01, p) TESSERA_AMP_STEP(lw, w02, p)
          TESSERA_AMP_STEP(lw, w03, p)
      "1:\n"
      // block 2i+1 into bank 1, block 2i+2 into bank 0
      TESSERA_AMP_STEP(lw, w10, p) TESSERA_AMP_STEP(lw, w11, p) TESSERA_AMP_STEP(lw, w12, p)
          TESSERA_AMP_STEP(lw, w13, p) TESSERA_AMP_STEP(lw, w00, p) TESSERA_AMP_STEP(lw, w01, p)
              TESSERA_AMP_STEP(lw, w02, p) TESSERA_AMP_STEP(lw, w03, p)
      "bne %[p], %[end], 1b\n"
      // the workers' odd block (1 + 4 rounds, or 1)
      "beqz %[odd], 4f\n" TESSERA_AMP_NOPS_4
      "4:\n"
      // the tail (14 rounds): the next group's block 0 into bank 0 after an odd block
      "add %[end], %[end], %[step]\n"
      "bnez %[odd], 5f\n" TESSERA_AMP_NOPS_4
      "j 6f\n"
      "5:\n" TESSERA_AMP_STEP(lw, w00, p) TESSERA_AMP_STEP(lw, w01, p)
          TESSERA_AMP_STEP(lw, w02, p) TESSERA_AMP_STEP(lw, w03, p) "nop\n"
      "6:\n"
      "nop\nnop\nnop\nnop\nnop\n"
      "addi %[g], %[g], -1\n"
      "beqz %[g], 3f\n"
      // the head: 10 rounds when accumulating, else 2
      "beqz %[acc], 7f\n" TESSERA_AMP_NOPS_4 TESSERA_AMP_NOPS_4
      "j 1b\n"
      "7: nop\n"
      "j 1b\n"
      "3:\n"
      "j 91f\n"
      "90: ebreak\n"
      "91:\n"
      : [p] "+r"(pb), [end] "+r"(end), [g] "+r"(groups)
      : [t] "r"(t), [ctx] "r"(0u), [sixth] "r"(kSixth), [step] "r"(step),
        [odd] "r"(static_cast<uint32_t>(odd)), [acc] "r"(static_cast<uint32_t>(accumulate)),
        [lw] "i"(TESS_AMP_F3_LW), TESSERA_AMP_F7_OPERANDS
      : "t0", "t1", "t2", "memory");
}

// A worker's row block from cycle t: four rounds while bank 0 fills, then per group its four rows
// through bank 0 and bank 1 per pair of blocks and an odd last block through bank 0; the tail
// stores the four rows (c0..c3 step to the next group) and steps a back to the group's start; the
// head loads the next group's c (AMP.LA, each pointer stepped back) or clears the accumulators.
// MulF3: AMP.S's funct3 (fp32 a, 4 k a block) or AMP.H's (fp16, 8 k), ElemBytes 4 or 2; p0..p3
// point at a's bytes either way (a block is 16 bytes, 4 floats).
template <uint32_t MulF3, uint32_t ElemBytes>
inline void workerRowBlock(uint32_t t, uint32_t ctx, const float* p0, const float* p1,
                           const float* p2, const float* p3, float* c0, float* c1, float* c2,
                           float* c3, int32_t skip, uint32_t pairs, bool odd, uint32_t groups,
                           uint32_t kk, bool accumulate) {
  const float* end = p0 + 8 * pairs;
  const int32_t back = -static_cast<int32_t>(ElemBytes * kk);  // bytes: a's pointers back
  __asm__ volatile(
      TESSERA_AMP_MEET TESSERA_AMP_NOPS_4
      "1:\n" TESSERA_AMP_STEP(s, w00, p0) TESSERA_AMP_STEP(s, w01, p1) TESSERA_AMP_STEP(s, w02, p2)
          TESSERA_AMP_STEP(s, w03, p3) TESSERA_AMP_STEP(s, w10, p0) TESSERA_AMP_STEP(s, w11, p1)
              TESSERA_AMP_STEP(s, w12, p2) TESSERA_AMP_STEP(s, w13, p3)
      "bne %[p0], %[end], 1b\n"
      "beqz %[odd], 4f\n" TESSERA_AMP_STEP(s, w00, p0) TESSERA_AMP_STEP(s, w01, p1)
          TESSERA_AMP_STEP(s, w02, p2) TESSERA_AMP_STEP(s, w03, p3)
      "4:\n"
      // the tail (14 rounds)
      TESSERA_AMP_STEP(sa, w00, c0) "add %[c0], %[c0], %[skip]\n" TESSERA_AMP_STEP(sa, w01, c1)
      "add %[c1], %[c1], %[skip]\n" TESSERA_AMP_STEP(sa, w02, c2)
      "add %[c2], %[c2], %[skip]\n" TESSERA_AMP_STEP(sa, w03, c3)
      "add %[c3], %[c3], %[skip]\n"
      "add %[p0], %[p0], %[back]\n"
      "add %[p1], %[p1], %[back]\n"
      "add %[p2], %[p2], %[back]\n"
      "add %[p3], %[p3], %[back]\n"
      "addi %[g], %[g], -1\n"
      "beqz %[g], 3f\n"
      // the head: 10 rounds when accumulating, else 2
      "beqz %[acc], 7f\n" TESSERA_AMP_STEP(la, w00, c0) "addi %[c0], %[c0], -16\n" TESSERA_AMP_STEP(
          la, w01, c1) "addi %[c1], %[c1], -16\n" TESSERA_AMP_STEP(la, w02, c2)
          "addi %[c2], %[c2], -16\n" TESSERA_AMP_STEP(la, w03, c3) "addi %[c3], %[c3], -16\n"
      "j 1b\n"
      "7: .insn r %[op], %[clr], 0, x0, x0, x0\n"
      "j 1b\n"
      "3:\n"
      "j 91f\n"
      "90: ebreak\n"
      "91:\n"
      : [p0] "+r"(p0), [p1] "+r"(p1), [p2] "+r"(p2), [p3] "+r"(p3), [c0] "+r"(c0),
        [c1] "+r"(c1), [c2] "+r"(c2), [c3] "+r"(c3), [g] "+r"(groups)
      : [t] "r"(t), [ctx] "r"(ctx), [sixth] "r"(kSixth), [end] "r"(end), [skip] "r"(skip),
        [back] "r"(back), [odd] "r"(static_cast<uint32_t>(odd)),
        [acc] "r"(static_cast<uint32_t>(accumulate)), [s] "i"(MulF3),
        [sa] "i"(TESS_AMP_F3_SA), [la] "i"(TESS_AMP_F3_LA), [clr] "i"(TESS_AMP_F3_CLR),
        TESSERA_AMP_F7_OPERANDS
      : "t0", "t1", "t2", "memory");
}

/// The vertex body of MatMulAmp (In = float, MulF3 = AMP.S) and MatMulAmpH (In = uint16_t, binary16
/// bit patterns, MulF3 = AMP.H) on the vertex's fields v.a, v.b, v.c, v.sync, v.k, v.flags: c (+)=
/// a b with a [rows, k] row-major, b in column groups [cols / 4][k][4], c row-major or (flags bit
/// 3) in column groups; accumulate with flags bit 2. Inlined into each vertex, so MatMulAmp's code
/// is what it was before MatMulAmpH shared it.
template <typename In, uint32_t MulF3, typename Vertex>
__attribute__((always_inline)) inline void product(const Vertex& v) {
  const auto& a = v.a;
  const auto& b = v.b;
  const auto& c = v.c;
  const auto& sync = v.sync;
  const uint32_t k = v.k, flags = v.flags;
  constexpr uint32_t kElemBytes = sizeof(In);
  const uint32_t kk = k;
  const uint32_t rows = a.size() / kk, cols = b.size() / kk;
  const uint32_t blocks = kk / (16 / kElemBytes), pairs = blocks / 2;
  const bool odd = (blocks & 1u) != 0;
  const bool accumulate = (flags & 4u) != 0;
  const bool cGroups = (flags & 8u) != 0;
  const uint32_t groups = cols / 4, rowGroups = (rows + kRows - 1) / kRows;
  const uint32_t rowBlocks = (rowGroups + kWorkers - 1) / kWorkers;
  // Row block s (20 rows: 20 s + 4 w for worker w) starts at t0 + s * blockCycles.
  const uint32_t blockCycles =
      6 * (rowBlockRounds(groups, pairs, odd, accumulate) + kBlockGapRounds);
  const uint32_t ctx = tessera_context_id();
  volatile int32_t* const flag = sync.data();
  if (ctx == 0) {
    uint32_t t0 = tessera_cycle() + 6 * kStartRounds;
    if (t0 == 0) t0 = 6;  // 0 means "not yet published"
    *flag = static_cast<int32_t>(t0);
    for (uint32_t s = 0, t = t0; s < rowBlocks; ++s, t += blockCycles)
      supervisorRowBlock<kElemBytes>(t, reinterpret_cast<const float*>(b.data()), pairs, odd,
                                     groups, kk, accumulate);
    // Every worker with rows read T0 before the first row block began.
    *flag = 0;
    return;
  }
  const uint32_t w = ctx - 1;
  if (w >= rowGroups) return;  // no rows for this worker in any row block
  uint32_t t0;
  while ((t0 = static_cast<uint32_t>(*flag)) == 0) {
  }
  // c's rows as the unit stores them: row-major (AMP.SA's step is the next group) or in column
  // groups (the worker's four rows are 16-byte neighbours; skip to the next group).
  const uint32_t rowWords = cGroups ? 4 : cols;
  const int32_t skip = cGroups ? static_cast<int32_t>(rows * 16) - 16 : 0;
  for (uint32_t r0 = w * kRows, t = t0; r0 < rows; r0 += kWorkers * kRows, t += blockCycles) {
    // Rows past the end repeat the last row (offsets from r0, clamped).
    const uint32_t last = rows - 1 - r0;
    const uint32_t o1 = last < 1 ? last : 1, o2 = last < 2 ? last : 2, o3 = last < 3 ? last : 3;
    const In* const a0 = a.data() + r0 * kk;
    float* const c0 = c.data() + r0 * rowWords;
    float* const c1 = c0 + o1 * rowWords;
    float* const c2 = c0 + o2 * rowWords;
    float* const c3 = c0 + o3 * rowWords;
    if (accumulate) {
      const float *l0 = c0, *l1 = c1, *l2 = c2, *l3 = c3;
      TESSERA_AMP_LA(l0, 0);
      TESSERA_AMP_LA(l1, 1);
      TESSERA_AMP_LA(l2, 2);
      TESSERA_AMP_LA(l3, 3);
    } else {
      TESSERA_AMP_CLR();
    }
    workerRowBlock<MulF3, kElemBytes>(
        t, ctx, reinterpret_cast<const float*>(a0), reinterpret_cast<const float*>(a0 + o1 * kk),
        reinterpret_cast<const float*>(a0 + o2 * kk), reinterpret_cast<const float*>(a0 + o3 * kk),
        c0, c1, c2, c3, skip, pairs, odd, groups, kk, accumulate);
  }
}

}  // namespace tessera_amp_matmul
