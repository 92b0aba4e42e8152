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
// docs/tile.md "Timing" describes (5 of 6 slots compute). Lock step needs no handshake: every
// context issues once per round and every instruction here takes one round, so contexts that
// start the stretch in the same round stay together. They meet once, at an agreed cycle: the
// supervisor publishes T0 in `sync` and every context waits for it with a delay loop counted from
// its cycle CSR (meet below). A context that would arrive late (a broken invariant, not a data
// case) stops at EBREAK instead of computing a wrong product.
//
// The whole product is one lock-step stretch. The rows go in quads, q = 0 .. Q - 1 (the last may
// be partial), and the row blocks go backwards: row block s holds quad Q - 1 - w - 5 s for worker
// w (while it is >= 0). So the one partial quad is worker 0's first, whose pointers its setup
// clamps, and every later row block is whole and 20 rows before the previous one: a worker's
// setup is a few pointers (no table of its last row block's), and the last worker to start
// reaches the meet sooner; between row blocks rows 1..3 follow from row 0. Within a row block the
// column groups of 4 follow each other, and within a group the blocks of k (4 k, or 8 with fp16
// inputs). Per group a worker runs: the head (AMP.LA of its four rows of c when accumulating),
// block 0 from its rows' starts P0..P3 (AMP.S writes the walking pointers p0..p3 = P + 16, so a
// needs no step back between groups), block 1, the loop over the further pairs (bank 0, bank 1,
// bank 0, bank 1: two pairs a trip, 17 rounds, entered by one JR at its top, at its second half
// for an odd number or past it for none: TESSERA_AMP_PAIRS_ENTRY), an odd last block through bank
// 0, the four AMP.SA with clear (the next group starts from zero; they step c to the next group
// when c is row-major, and in column groups adds follow, or one add where the worker's four rows
// are 16-byte neighbours: the Neighbours variant) and the group loop. The supervisor runs the same
// rounds, loading each block one block ahead of the workers (block j + 1 while they use block j,
// into the bank they do not use); a group's last loads leave the next group's block 0 in bank 0,
// after an odd block in the tail. Between row blocks every context runs 17 rounds (12 in the
// Neighbours variant, whose quads are all whole): the workers step their pointers back by 20 rows,
// the supervisor refills bank 0 with b's first block. A worker with no rows left stops; the partial
// quad's rows past the end repeat the last row and store its identical sums to its own place, so
// every worker runs the same instructions. tessera/amp_matmul.h counts the rounds for the planner.
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
static_assert(kWorkers == TESSERA_AMP_MATMUL_WORKERS, "the unit's matmul needs six contexts");
constexpr uint32_t kRows = TESSERA_AMP_MATMUL_ROWS;
constexpr uint32_t kBlockRows = kWorkers * kRows;  // rows of a row block

// Wait until the round that holds cycle t (a cycle of the supervisor's slot); the instruction
// after this block issues in that round. The cycle CSR is read at its issue cycle c0 = 6 r0 + ctx
// (+ the same offset as t), so (t - c0 + ctx) / 6 rounds remain (negative: too late, EBREAK);
// the block takes 12 + D rounds for D >= 0 whatever the parity of D. Written into each role's
// asm statement so that the compiler puts nothing between the wait and the lock-step stretch.
#define TESSERA_AMP_MEET                                                          \
  "li t2, %[sixth]\n"                                                             \
  "csrr t0, cycle\n"                                                              \
  "sub t1, %[t], t0\n"                                                            \
  "add t1, t1, %[ctx]\n"                                                          \
  "bltz t1, 90f\n"                                                                \
  "mulhu t1, t1, t2\n" /* x / 6 = mulhu(x, 0xAAAAAAAB) >> 2, x a multiple of 6 */ \
  "srli t1, t1, 2\n"                                                              \
  "addi t1, t1, -12\n"                                                            \
  "bltz t1, 90f\n"                                                                \
  "andi t2, t1, 1\n"                                                              \
  "beqz t2, 81f\n"                                                                \
  "nop\n"                                                                         \
  "81: srli t1, t1, 1\n"                                                          \
  "beqz t1, 83f\n"                                                                \
  "82: addi t1, t1, -1\n"                                                         \
  "bnez t1, 82b\n"                                                                \
  "83:\n"

// Before the meet: the address at which the further pairs of blocks start, from the number of
// them in %[entry] (which it replaces): none, label 5 (past the loop); an even number, label 4
// (the loop's top, two pairs a trip); an odd number, label 44 (the loop's second half, so that
// the first trip does one pair). One JR a group then enters the loop (the round a test took).
#define TESSERA_AMP_PAIRS_ENTRY \
  "beqz %[entry], 46f\n"        \
  "andi t0, %[entry], 1\n"      \
  "bnez t0, 47f\n"              \
  "lla %[entry], 4f\n"          \
  "j 48f\n"                     \
  "46: lla %[entry], 5f\n"      \
  "j 48f\n"                     \
  "47: lla %[entry], 44f\n"     \
  "48:\n"

// One unit instruction stepping register operand `reg` by 16 bytes: funct3 and funct7 name
// immediate operands of the asm statement (op, and the f7 table below).
#define TESSERA_AMP_STEP(f3, f7, reg) \
  ".insn r %[op], %[" #f3 "], %[" #f7 "], %[" #reg "], %[" #reg "], x0\n"
// The same from `from`, writing from + 16 into `to`.
#define TESSERA_AMP_FROM(f3, f7, to, from) \
  ".insn r %[op], %[" #f3 "], %[" #f7 "], %[" #to "], %[" #from "], x0\n"
// The same at `reg`, which does not step.
#define TESSERA_AMP_AT(f3, f7, reg) ".insn r %[op], %[" #f3 "], %[" #f7 "], x0, %[" #reg "], x0\n"

// funct7 of bank b, row r (docs/tile.md, "Encoding"), as immediate asm operands w<b><r>; AMP.LA
// of row r uses w0<r>, AMP.SA of row r with clear (C = 1) x0<r>.
#define TESSERA_AMP_F7_OPERANDS                                                             \
  [w00] "i"(TESSERA_AMP_FUNCT7(0, 0, 0, 0)), [w01] "i"(TESSERA_AMP_FUNCT7(0, 0, 0, 1)),     \
      [w02] "i"(TESSERA_AMP_FUNCT7(0, 0, 0, 2)), [w03] "i"(TESSERA_AMP_FUNCT7(0, 0, 0, 3)), \
      [w10] "i"(TESSERA_AMP_FUNCT7(0, 0, 1, 0)), [w11] "i"(TESSERA_AMP_FUNCT7(0, 0, 1, 1)), \
      [w12] "i"(TESSERA_AMP_FUNCT7(0, 0, 1, 2)), [w13] "i"(TESSERA_AMP_FUNCT7(0, 0, 1, 3)), \
      [x00] "i"(TESSERA_AMP_FUNCT7(1, 0, 0, 0)), [x01] "i"(TESSERA_AMP_FUNCT7(1, 0, 0, 1)), \
      [x02] "i"(TESSERA_AMP_FUNCT7(1, 0, 0, 2)), [x03] "i"(TESSERA_AMP_FUNCT7(1, 0, 0, 3)), \
      [op] "i"(TESS_AMP_OPCODE)

#define TESSERA_AMP_NOPS_4 "nop\nnop\nnop\nnop\n"
// The supervisor's four loads of one block into bank 0 or bank 1.
#define TESSERA_AMP_LOAD_BANK0 \
  TESSERA_AMP_STEP(lw, w00, p) \
  TESSERA_AMP_STEP(lw, w01, p) TESSERA_AMP_STEP(lw, w02, p) TESSERA_AMP_STEP(lw, w03, p)
#define TESSERA_AMP_LOAD_BANK1 \
  TESSERA_AMP_STEP(lw, w10, p) \
  TESSERA_AMP_STEP(lw, w11, p) TESSERA_AMP_STEP(lw, w12, p) TESSERA_AMP_STEP(lw, w13, p)

constexpr uint32_t kSixth = 0xAAAAAAABu;

// The steps between a worker's row blocks, read by the stretch at each row block's end: the row
// blocks go back 20 rows at a time (negative steps), and rows 1..3 of a block are recomputed from
// its row 0 (only the first row block's may be clamped).
struct WorkerTable {
  uint32_t aStep;  // bytes from a row block's first row of a to the next's
  uint32_t cStep;  // bytes from c's first pointer after a row block to the next row block's group 0
  uint32_t groups;
  uint32_t aRow;  // bytes from a row of a to the next
  uint32_t cRow;  // and of c
};

// The supervisor's stretch from cycle t over rowBlocks row blocks: bank 0 filled with block 0,
// then per group (the rounds of the workers' group, instruction for instruction) the next block
// into the other bank while the workers use one; after an odd block the next group's block 0 in
// the tail; between row blocks b's block 0 again. The last group's last loads read at most 64
// bytes past b (still SRAM: the stacks lie above every buffer) into a bank no worker then uses.
// ElemBytes: 4 (fp32 b, 4 k a block) or 2 (fp16, 8 k); a block is 64 bytes either way.
// Neighbours: the workers' variant for c in column groups with whole quads of rows (one pointer,
// one add a group; workerStretch).
template <uint32_t ElemBytes, bool Neighbours>
inline void supervisorStretch(uint32_t t, const void* b, uint32_t rowBlocks, uint32_t pairs,
                              bool odd, uint32_t groups, uint32_t kk, bool accumulate,
                              uint32_t skip) {
  const uint32_t step = 4 * ElemBytes * kk;  // bytes of a column group of b
  // endb: a group's start + 64 + 128 pairs (pb after its pairs' loads).
  const uint32_t endOff = 64 + 128 * pairs;
  const char* pb = static_cast<const char*>(b);
  const char* endb = pb + endOff;
  uint32_t g = groups, s = rowBlocks;
  uintptr_t entry = pairs - 1;  // the further pairs; TESSERA_AMP_PAIRS_ENTRY makes it an address
#define TESSERA_AMP_SUPERVISOR_ASM(TAIL, GAP)                                                     \
  __asm__ volatile(                                                                               \
      TESSERA_AMP_PAIRS_ENTRY                                                                     \
          TESSERA_AMP_MEET /* block 0 into bank 0 (the workers clear and wait) */                 \
              TESSERA_AMP_LOAD_BANK0                                                              \
      "1:\n" /* the head: 5 rounds when accumulating, else 1 */                                   \
      "beqz %[acc], 3f\n" TESSERA_AMP_NOPS_4                                                      \
      "3:\n" /* the workers' blocks 0 and 1: blocks 1 and 2 into banks 1 and 0 */                 \
      TESSERA_AMP_LOAD_BANK1 TESSERA_AMP_LOAD_BANK0                                               \
      "jr %[entry]\n" /* the further pairs, two a trip */                                         \
      "4:\n" TESSERA_AMP_LOAD_BANK1 TESSERA_AMP_LOAD_BANK0                                        \
      "44:\n" TESSERA_AMP_LOAD_BANK1 TESSERA_AMP_LOAD_BANK0                                       \
      "bne %[p], %[endb], 4b\n"                                                                   \
      "5: beqz %[odd], 6f\n" /* the odd block, then the next group's block 0 into bank 0 */       \
      "add %[endb], %[endb], %[step]\nnop\nnop\nnop\n" TESSERA_AMP_LOAD_BANK0                     \
      "j 7f\n"                                                                                    \
      "6: add %[endb], %[endb], %[step]\nnop\nnop\nnop\n"                                         \
      "7:\n" TAIL                                                                                 \
      "8: addi %[g], %[g], -1\n"                                                                  \
      "bnez %[g], 1b\n" /* between row blocks (GAP): b's block 0 into bank 0 */                   \
      "addi %[nrb], %[nrb], -1\n"                                                                 \
      "beqz %[nrb], 9f\n"                                                                         \
      "mv %[g], %[groups]\n"                                                                      \
      "mv %[p], %[b]\n"                                                                           \
      "add %[endb], %[b], %[endOff]\n" TESSERA_AMP_LOAD_BANK0 GAP                                 \
      "j 1b\n"                                                                                    \
      "9:\n"                                                                                      \
      "j 91f\n"                                                                                   \
      "90: ebreak\n"                                                                              \
      "91:\n"                                                                                     \
      : [p] "+&r"(pb), [endb] "+&r"(endb), [g] "+&r"(g), [nrb] "+&r"(s), [entry] "+&r"(entry)     \
      : [t] "r"(t), [ctx] "r"(0u), [sixth] "i"(kSixth), [step] "r"(step), [b] "r"(b),             \
        [endOff] "r"(endOff), [groups] "r"(groups), [odd] "r"(static_cast<uint32_t>(odd)),        \
        [acc] "r"(static_cast<uint32_t>(accumulate)), [skip] "r"(skip), [lw] "i"(TESS_AMP_F3_LW), \
        TESSERA_AMP_F7_OPERANDS                                                                   \
      : "t0", "t1", "t2", "memory")
  if (Neighbours) {
    // The workers' one add of c; between row blocks their 12 rounds (the loads, then 2 nops).
    TESSERA_AMP_SUPERVISOR_ASM("nop\n", "nop\nnop\n");
  } else {
    // The workers' test of c's layout and, in column groups, their four adds.
    // Between row blocks their 17 rounds (the loads, then 7 nops).
    TESSERA_AMP_SUPERVISOR_ASM("beqz %[skip], 8f\n" TESSERA_AMP_NOPS_4,
                               TESSERA_AMP_NOPS_4 "nop\nnop\nnop\n");
  }
#undef TESSERA_AMP_SUPERVISOR_ASM
}

// A worker's stretch from cycle t over its row blocks (rowBlocks >= 1) from rows P0..P3 of a and
// c0..c3 of c: per group the head (AMP.LA of its four rows when accumulating; AMP.SA clears the
// accumulators otherwise), block 0 from P (p = P + 16), block 1, the further pairs, the odd
// block, the stores (AMP.SA with clear; c steps to the next group: by AMP.SA's 16 bytes, and skip
// more in column groups) and the group loop; between row blocks the steps of tab (back 20 rows).
// MulF3: AMP.S's funct3 (fp32 a, 4 k a block) or AMP.H's (fp16, 8
// k); a block is 16 bytes of a row either way.
// Neighbours (c in column groups, the worker's four rows whole, so 16-byte neighbours): the
// loads and stores chain one pointer from c0 (rd = the next row's address) and one add steps c0
// to the next group (skip + 16 bytes); c1..c3 follow c0 without being used.
template <uint32_t MulF3, bool Neighbours>
inline void workerStretch(uint32_t t, uint32_t ctx, const void* P0, const void* P1, const void* P2,
                          const void* P3, float* c0, float* c1, float* c2, float* c3,
                          const void* end, uint32_t rowBlocks, uint32_t pairs, bool odd,
                          uint32_t groups, bool accumulate, uint32_t skip, const WorkerTable* tab) {
  const void *p0, *p1, *p2, *p3;
  uint32_t g = groups, s = rowBlocks;
  const uint32_t gstep = skip + 16;  // Neighbours: bytes from a group's rows to the next's
  uintptr_t entry = pairs - 1;  // the further pairs; TESSERA_AMP_PAIRS_ENTRY makes it an address
#define TESSERA_AMP_WORKER_ASM(HEAD, STORE, TAIL, STEPS) \
  __asm__ volatile(                                                                             \
      TESSERA_AMP_PAIRS_ENTRY                                                                   \
      TESSERA_AMP_MEET ".insn r %[op], %[clr], 0, x0, x0, x0\nnop\nnop\nnop\n"                  \
      "1:\n" /* the head: four rows of c (5 rounds) or nothing (1) */                           \
      "beqz %[acc], 3f\n" HEAD                                                                  \
      "3:\n" /* block 0 through bank 0 from the rows' starts, block 1 through bank 1 */         \
      TESSERA_AMP_FROM(s, w00, p0, P0) TESSERA_AMP_FROM(s, w01, p1, P1)                         \
          TESSERA_AMP_FROM(s, w02, p2, P2) TESSERA_AMP_FROM(s, w03, p3, P3)                     \
              TESSERA_AMP_STEP(s, w10, p0) TESSERA_AMP_STEP(s, w11, p1)                         \
                  TESSERA_AMP_STEP(s, w12, p2) TESSERA_AMP_STEP(s, w13, p3)                     \
      "jr %[entry]\n" /* the further pairs, two a trip */                                       \
      "4:\n" TESSERA_AMP_STEP(s, w00, p0) TESSERA_AMP_STEP(s, w01, p1)                          \
          TESSERA_AMP_STEP(s, w02, p2) TESSERA_AMP_STEP(s, w03, p3)                             \
              TESSERA_AMP_STEP(s, w10, p0) TESSERA_AMP_STEP(s, w11, p1)                         \
                  TESSERA_AMP_STEP(s, w12, p2) TESSERA_AMP_STEP(s, w13, p3)                     \
      "44:\n" TESSERA_AMP_STEP(s, w00, p0) TESSERA_AMP_STEP(s, w01, p1)                         \
          TESSERA_AMP_STEP(s, w02, p2) TESSERA_AMP_STEP(s, w03, p3)                             \
              TESSERA_AMP_STEP(s, w10, p0) TESSERA_AMP_STEP(s, w11, p1)                         \
                  TESSERA_AMP_STEP(s, w12, p2) TESSERA_AMP_STEP(s, w13, p3)                     \
      "bne %[p0], %[end], 4b\n"                                                                 \
      "5: beqz %[odd], 6f\n" TESSERA_AMP_STEP(s, w00, p0) TESSERA_AMP_STEP(s, w01, p1)          \
          TESSERA_AMP_STEP(s, w02, p2) TESSERA_AMP_STEP(s, w03, p3) STORE                       \
      "j 7f\n"                                                                                  \
      "6:\n" STORE "7:\n" TAIL                                                                  \
      "8: addi %[g], %[g], -1\n"                                                                \
      "bnez %[g], 1b\n" /* between row blocks: the steps back 20 rows */                         \
      "addi %[nrb], %[nrb], -1\n"                                                               \
      "beqz %[nrb], 9f\n"                                                                       \
      "lw %[g], 8(%[tab])\n"                                                                    \
      "lw t1, 0(%[tab])\n" STEPS                                                                \
      "j 1b\n"                                                                                  \
      "9:\n"                                                                                    \
      "j 91f\n"                                                                                 \
      "90: ebreak\n"                                                                            \
      "91:\n"                                                                                   \
      : [P0] "+&r"(P0), [P1] "+&r"(P1), [P2] "+&r"(P2), [P3] "+&r"(P3), [c0] "+&r"(c0),         \
        [c1] "+&r"(c1), [c2] "+&r"(c2), [c3] "+&r"(c3), [end] "+&r"(end), [g] "+&r"(g),         \
        [nrb] "+&r"(s), [p0] "=&r"(p0), [p1] "=&r"(p1), [p2] "=&r"(p2), [p3] "=&r"(p3),         \
        [entry] "+&r"(entry)                                                                    \
      : [t] "r"(t), [ctx] "r"(ctx), [sixth] "i"(kSixth),                                        \
        [odd] "r"(static_cast<uint32_t>(odd)), [acc] "r"(static_cast<uint32_t>(accumulate)),    \
        [skip] "r"(skip), [gstep] "r"(gstep), [tab] "r"(tab), [s] "i"(MulF3),                   \
        [sa] "i"(TESS_AMP_F3_SA), [la] "i"(TESS_AMP_F3_LA), [clr] "i"(TESS_AMP_F3_CLR),         \
        TESSERA_AMP_F7_OPERANDS                                                                 \
      : "t0", "t1", "t2", "memory")
  if (Neighbours) {
    TESSERA_AMP_WORKER_ASM(
        // c0's four rows, one pointer chained through rd (t2)
        ".insn r %[op], %[la], %[w00], t2, %[c0], x0\n"
        ".insn r %[op], %[la], %[w01], t2, t2, x0\n"
        ".insn r %[op], %[la], %[w02], t2, t2, x0\n"
        ".insn r %[op], %[la], %[w03], x0, t2, x0\n",
        ".insn r %[op], %[sa], %[x00], t2, %[c0], x0\n"
        ".insn r %[op], %[sa], %[x01], t2, t2, x0\n"
        ".insn r %[op], %[sa], %[x02], t2, t2, x0\n"
        ".insn r %[op], %[sa], %[x03], x0, t2, x0\n",
        "add %[c0], %[c0], %[gstep]\n",
        // Between row blocks (12 rounds): whole quads, so every row steps back 20 rows as row 0
        // does; c1..c3 are not used.
        "add %[P0], %[P0], t1\n"
        "add %[P1], %[P1], t1\n"
        "add %[P2], %[P2], t1\n"
        "add %[P3], %[P3], t1\n"
        "add %[end], %[end], t1\n"
        "lw t1, 4(%[tab])\n"
        "add %[c0], %[c0], t1\n");
  } else {
    TESSERA_AMP_WORKER_ASM(TESSERA_AMP_AT(la, w00, c0) TESSERA_AMP_AT(la, w01, c1)
                               TESSERA_AMP_AT(la, w02, c2) TESSERA_AMP_AT(la, w03, c3),
                           TESSERA_AMP_STEP(sa, x00, c0) TESSERA_AMP_STEP(sa, x01, c1)
                               TESSERA_AMP_STEP(sa, x02, c2) TESSERA_AMP_STEP(sa, x03, c3),
                           "beqz %[skip], 8f\n"
                           "add %[c0], %[c0], %[skip]\n"
                           "add %[c1], %[c1], %[skip]\n"
                           "add %[c2], %[c2], %[skip]\n"
                           "add %[c3], %[c3], %[skip]\n",
                           // Between row blocks (17 rounds): rows 1..3 from row 0 (the first
                           // quad's may have been clamped).
                           "add %[P0], %[P0], t1\n"
                           "add %[end], %[end], t1\n"
                           "lw t1, 12(%[tab])\n"
                           "add %[P1], %[P0], t1\n"
                           "add %[P2], %[P1], t1\n"
                           "add %[P3], %[P2], t1\n"
                           "lw t1, 4(%[tab])\n"
                           "add %[c0], %[c0], t1\n"
                           "lw t1, 16(%[tab])\n"
                           "add %[c1], %[c0], t1\n"
                           "add %[c2], %[c1], t1\n"
                           "add %[c3], %[c2], t1\n");
  }
#undef TESSERA_AMP_WORKER_ASM
}

/// The vertex body of MatMulAmp (In = float, MulF3 = AMP.S) and MatMulAmpH (In = uint16_t, binary16
/// bit patterns, MulF3 = AMP.H) on the vertex's fields v.a, v.b, v.c, v.sync, v.k, v.rows,
/// v.cols, v.flags: c (+)= a b with a [rows, k] row-major, b in column groups [cols / 4][k][4], c
/// row-major or (flags bit 3) in column groups; accumulate with flags bit 2. Inlined into each
/// vertex. rows and cols come from the host (no division on the tile), and a worker's setup before
/// the meet is a few pointers, since the last worker to be started sets the meet's earliest round
/// (TESSERA_AMP_MATMUL_START_ROUNDS).
template <typename In, uint32_t MulF3, typename Vertex>
__attribute__((always_inline)) inline void product(const Vertex& v) {
  const uint32_t ctx = tessera_context_id();
  constexpr uint32_t kElemBytes = sizeof(In);
  const uint32_t kk = v.k, flags = v.flags, rows = v.rows, groups = v.cols / 4;
  const uint32_t blocks = kk / (16 / kElemBytes), pairs = blocks / 2;
  const bool odd = (blocks & 1u) != 0;
  const bool accumulate = (flags & 4u) != 0;
  const bool cGroups = (flags & 8u) != 0;
  const uint32_t rowGroups = (rows + kRows - 1) / kRows;
  // c's rows as the unit stores them: row-major (AMP.SA's step is the next group) or in column
  // groups (the worker's four rows are 16-byte neighbours; skip to the next group).
  const uint32_t cRow = cGroups ? 16 : 16 * groups;  // bytes from a row of c to the next
  const uint32_t skip = cGroups ? rows * 16 - 16 : 0;
  // c in column groups with whole quads of rows: a worker's four rows are 16-byte neighbours.
  const bool neighbours = cGroups && rows % kRows == 0;
  volatile int32_t* const flag = v.sync.data();
  if (ctx == 0) {
    const uint32_t rowBlocks = (rowGroups + kWorkers - 1) / kWorkers;
    uint32_t t0 = tessera_cycle() + 6 * TESSERA_AMP_MATMUL_START_ROUNDS;
    if (t0 == 0) t0 = 6;  // 0 means "not yet published"
    *flag = static_cast<int32_t>(t0);
    if (neighbours)
      supervisorStretch<kElemBytes, true>(t0, v.b.data(), rowBlocks, pairs, odd, groups, kk,
                                          accumulate, skip);
    else
      supervisorStretch<kElemBytes, false>(t0, v.b.data(), rowBlocks, pairs, odd, groups, kk,
                                           accumulate, skip);
    // Every worker with rows read T0 before the stretch began.
    *flag = 0;
    return;
  }
  const uint32_t w = ctx - 1;
  if (w >= rowGroups) return;  // no rows for this worker in any row block
  // This worker's row blocks: quads q0, q0 - 5, ... >= 0 (rows 4 q .. 4 q + 3).
  const uint32_t q0 = rowGroups - 1 - w;
  const uint32_t rowBlocks = q0 / kWorkers + 1;
  const uint32_t row0 = q0 * kRows;
  const uint32_t aRow = kk * kElemBytes;  // bytes from a row of a to the next
  const char* const P = reinterpret_cast<const char*>(v.a.data()) + row0 * aRow;
  char* const C = reinterpret_cast<char*>(v.c.data()) + row0 * cRow;
  // Rows past the end (worker 0's first quad only) repeat the last row: their steps are 0.
  const uint32_t more = rows - 1 - row0;  // rows of the quad after its first, if fewer than 3
  const uint32_t a1 = more >= 1 ? aRow : 0, a2 = more >= 2 ? aRow : 0, a3 = more >= 3 ? aRow : 0;
  const uint32_t c1 = more >= 1 ? cRow : 0, c2 = more >= 2 ? cRow : 0, c3 = more >= 3 ? cRow : 0;
  const char* const P1 = P + a1;
  const char* const P2 = P1 + a2;
  const char* const P3 = P2 + a3;
  char* const C1 = C + c1;
  char* const C2 = C1 + c2;
  char* const C3 = C2 + c3;
  const void* const end = P + 32 * pairs;  // p0's value after the pairs of blocks
  WorkerTable tab;
  tab.aStep = 0u - kBlockRows * aRow;
  tab.cStep = 0u - kBlockRows * cRow - groups * (16 + skip);
  tab.groups = groups;
  tab.aRow = aRow;
  tab.cRow = cRow;
  // Everything the stretch takes is computed before the wait (the compiler would otherwise move
  // some of it after, between the start cycle's arrival and the meet).
  __asm__ volatile("" ::"r"(P), "r"(P1), "r"(P2), "r"(P3), "r"(C), "r"(C1), "r"(C2), "r"(C3),
                   "r"(end), "r"(rowBlocks), "r"(pairs), "r"(odd), "r"(groups), "r"(accumulate),
                   "r"(skip), "r"(&tab)
                   : "memory");
  uint32_t t0;
  while ((t0 = static_cast<uint32_t>(*flag)) == 0) {
  }
  if (neighbours)
    workerStretch<MulF3, true>(t0, ctx, P, P1, P2, P3, reinterpret_cast<float*>(C),
                               reinterpret_cast<float*>(C1), reinterpret_cast<float*>(C2),
                               reinterpret_cast<float*>(C3), end, rowBlocks, pairs, odd, groups,
                               accumulate, skip, &tab);
  else
    workerStretch<MulF3, false>(t0, ctx, P, P1, P2, P3, reinterpret_cast<float*>(C),
                                reinterpret_cast<float*>(C1), reinterpret_cast<float*>(C2),
                                reinterpret_cast<float*>(C3), end, rowBlocks, pairs, odd, groups,
                                accumulate, skip, &tab);
}

}  // namespace tessera_amp_matmul
