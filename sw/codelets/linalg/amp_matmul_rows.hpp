// The lock-step row blocks of the matrix-unit matmul codelets, shared by MatMulAmp (fp32 inputs,
// AMP.S, 4 k a block) and MatMulAmpH (fp16 inputs, AMP.H, 8 k a block): the same instructions,
// rounds and pointer steps (16 bytes of a row of a and 64 bytes of b a block either way), so the
// planner's model (tessera/amp_matmul.h) holds for both; only the multiply's funct3 and the
// element size differ.
//
// MatMulAmp: MatMulBlocked's product on the matrix unit (docs/tile.md, "Matrix unit";
// docs/library.md, "matmul on the matrix unit"): the same result bit for bit (each element is a
// chain of fused multiply-adds over k in increasing order, from +0 or from c: AMP.S's order),
// compared with the scalar vertices in sw/library/tests.
//
// One vertex per context of the tile, all on the same fields. The weights are one set per tile,
// so the contexts work in lock step. A weight block lasts R rounds (R = 4 or 6, the flags'
// field TESSERA_AMP_MATMUL_ROWS_SHIFT, chosen by the planner): each of the five workers streams R
// rows of a through the bank in use (R AMP.S), and the supervisor, in the same R rounds, loads the
// next block into the other bank (4 AMP.LW) and streams R - 4 rows of its own. So a row block is
// 6R - 4 rows and 5R + R - 4 of the 6R slots compute (docs/tile.md, "Timing"). Every context
// addresses its rows through the unit's row strides (AMP.STRIDE: row r of a at p + r aRow, of c
// at q + r cRow), so it needs one pointer of a and one of c whatever R is; the last row's AMP.S
// steps p by 16, the last AMP.SA q. Lock step needs no handshake: every context issues once per
// round and every instruction here takes one round, so contexts that start the stretch in the
// same round stay together. They meet once, at an agreed cycle: the supervisor publishes T0 in
// `sync` and every context waits for it with a delay loop counted from its cycle CSR (meet
// below). A context that would arrive late (a broken invariant, not a data case) stops at EBREAK
// instead of computing a wrong product.
//
// The whole product is one lock-step stretch. Row block 0 holds the rows that do not fill a whole
// block (1 .. 6R - 4 of them, at the start of a); every later one is whole. In a row block the
// supervisor has its first R - 4 rows and worker w the R after the supervisor's and the first w -
// 1 workers'; in block 0 each context's row limit (AMP.ROWS) is the number of its rows that exist
// (0 for a context past the end), so every context runs the same instructions and a row that does
// not exist is skipped by the unit (no access, no change; its pointer still steps). Within a row
// block the column groups of 4 follow each other, and within a group the blocks of k. Per group a
// worker runs: the head (AMP.LA of its R rows of c when accumulating), block 0 and block 1, the
// loop over the further pairs (bank 0, bank 1, bank 0, bank 1: two pairs a trip, entered by one
// JR at its top, at its second half for an odd number or past it for none:
// TESSERA_AMP_PAIRS_ENTRY), an odd last block through bank 0, the R AMP.SA with clear (the next
// group starts from zero; c steps to the next group: by AMP.SA's 16 bytes, and `skip` more in
// column groups), the step of p back to its rows' start and the group loop. The supervisor runs
// the same rounds, loading each block one block ahead (block j + 1 while the workers use block j,
// into the bank they do not use); a group's last loads leave the next group's block 0 in bank 0,
// after an odd block in the tail. Between row blocks every context runs 18 rounds: the pointers
// step to the next block's rows, the limits become whole, the supervisor refills bank 0 with b's
// first block. tessera/amp_matmul.h counts the rounds for the planner.
//
// Layouts (the library gives them): a is op(a) row-major [rows, k]; b is op(b) in column groups
// [cols / 4][k][4] (a weight row per 16 bytes); c is [rows, cols] row-major, or with flags bit 3
// in column groups [cols / 4][rows][4] like b (a weight variable in the unit's layout, updated in
// place); k and cols multiples of 4, k >= 8, every field 16-byte aligned. A codelet that changes
// the unit's row addressing restores its reset values before it returns (docs/tile.md).
#pragma once

#include "tessera/amp.h"
#include "tessera/amp_matmul.h"
#include "tessera/tile.h"
#include "tessera/vertex.hpp"

namespace tessera_amp_matmul {

constexpr uint32_t kWorkers = TESSERA_NUM_WORKERS;
static_assert(kWorkers == TESSERA_AMP_MATMUL_WORKERS, "the unit's matmul needs six contexts");
static_assert(TESS_AMP_ACC_ROWS >= 6, "a worker streams up to six accumulator rows");

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

// funct7 of row r (docs/tile.md, "Encoding": r[1:0] and r[2] in their fields), as an expression
// of the immediate operands lo (row bit 0) and hi (row bit 2) that the assembler evaluates; a bank
// adds %[bk], the clear bit %[cl].
// clang-format off
#define TESSERA_AMP_R0 "0"
#define TESSERA_AMP_R1 "%[lo]"
#define TESSERA_AMP_R2 "%[lo]*2"
#define TESSERA_AMP_R3 "%[lo]*3"
#define TESSERA_AMP_R4 "%[hi]"
#define TESSERA_AMP_R5 "%[hi]+%[lo]"

// The multiply (AMP.S or AMP.H) of row r through bank b at %[pa]; the last row's steps %[pa].
#define TESSERA_AMP_MUL(b, r) \
  ".insn r %[op], %[mul], " TESSERA_AMP_R##r "+%[bk]*" #b ", x0, %[pa], x0\n"
#define TESSERA_AMP_MUL_STEP(b, r) \
  ".insn r %[op], %[mul], " TESSERA_AMP_R##r "+%[bk]*" #b ", %[pa], %[pa], x0\n"
// AMP.LA of row r at %[pc] (nothing steps), AMP.SA with clear of row r (the last steps %[pc]).
#define TESSERA_AMP_ROW_LA(r) ".insn r %[op], %[la], " TESSERA_AMP_R##r ", x0, %[pc], x0\n"
#define TESSERA_AMP_ROW_SA(r) ".insn r %[op], %[sa], " TESSERA_AMP_R##r "+%[cl], x0, %[pc], x0\n"
#define TESSERA_AMP_ROW_SA_STEP(r) \
  ".insn r %[op], %[sa], " TESSERA_AMP_R##r "+%[cl], %[pc], %[pc], x0\n"
// The supervisor's AMP.LW of weight row k into bank b from %[pb], stepping it.
#define TESSERA_AMP_WLOAD(b, k) \
  ".insn r %[op], %[lw], " TESSERA_AMP_R##k "+%[bk]*" #b ", %[pb], %[pb], x0\n"

// A worker's block: rows 0 .. R - 1 through bank b.
#define TESSERA_AMP_WBLOCK_4(b) \
  TESSERA_AMP_MUL(b, 0) TESSERA_AMP_MUL(b, 1) TESSERA_AMP_MUL(b, 2) TESSERA_AMP_MUL_STEP(b, 3)
#define TESSERA_AMP_WBLOCK_6(b) \
  TESSERA_AMP_MUL(b, 0) TESSERA_AMP_MUL(b, 1) TESSERA_AMP_MUL(b, 2) TESSERA_AMP_MUL(b, 3) \
  TESSERA_AMP_MUL(b, 4) TESSERA_AMP_MUL_STEP(b, 5)
// A worker's head (AMP.LA of its rows) and stores (AMP.SA with clear).
#define TESSERA_AMP_WLA_4 \
  TESSERA_AMP_ROW_LA(0) TESSERA_AMP_ROW_LA(1) TESSERA_AMP_ROW_LA(2) TESSERA_AMP_ROW_LA(3)
#define TESSERA_AMP_WLA_6 TESSERA_AMP_WLA_4 TESSERA_AMP_ROW_LA(4) TESSERA_AMP_ROW_LA(5)
#define TESSERA_AMP_WSA_4 \
  TESSERA_AMP_ROW_SA(0) TESSERA_AMP_ROW_SA(1) TESSERA_AMP_ROW_SA(2) TESSERA_AMP_ROW_SA_STEP(3)
#define TESSERA_AMP_WSA_6 \
  TESSERA_AMP_ROW_SA(0) TESSERA_AMP_ROW_SA(1) TESSERA_AMP_ROW_SA(2) TESSERA_AMP_ROW_SA(3) \
  TESSERA_AMP_ROW_SA(4) TESSERA_AMP_ROW_SA_STEP(5)

// The supervisor's block with the workers on bank b: the next block into bank 1 - b (4 AMP.LW)
// and its own R - 4 rows through bank b, interleaved (distinct banks: the order is free).
#define TESSERA_AMP_SBLOCK_4(b, nb) \
  TESSERA_AMP_WLOAD(nb, 0) TESSERA_AMP_WLOAD(nb, 1) TESSERA_AMP_WLOAD(nb, 2) \
  TESSERA_AMP_WLOAD(nb, 3)
// b's next block into bank 0.
#define TESSERA_AMP_FILL_BANK0 TESSERA_AMP_SBLOCK_4(1, 0)
#define TESSERA_AMP_SBLOCK_6(b, nb) \
  TESSERA_AMP_WLOAD(nb, 0) TESSERA_AMP_MUL(b, 0) TESSERA_AMP_WLOAD(nb, 1) \
  TESSERA_AMP_MUL_STEP(b, 1) TESSERA_AMP_WLOAD(nb, 2) TESSERA_AMP_WLOAD(nb, 3)
// Its odd block (bank 0 in use, nothing to load: the next group's block 0 goes to bank 0 in the
// tail) and its rows' AMP.LA and AMP.SA, each padded to R rounds with nops where it does less.
#define TESSERA_AMP_NOPS_2 "nop\nnop\n"
#define TESSERA_AMP_NOPS_4 TESSERA_AMP_NOPS_2 TESSERA_AMP_NOPS_2
// Each path past the pairs steps endb to the next group's in one of its idle rounds.
#define TESSERA_AMP_NEXT_ENDB "add %[endb], %[endb], %[step]\n"
#define TESSERA_AMP_SODD_4 TESSERA_AMP_NEXT_ENDB "nop\nnop\nnop\n"
#define TESSERA_AMP_SODD_6 \
  TESSERA_AMP_MUL(0, 0) TESSERA_AMP_MUL_STEP(0, 1) TESSERA_AMP_NEXT_ENDB "nop\nnop\nnop\n"
#define TESSERA_AMP_SLA_4 TESSERA_AMP_NOPS_4
#define TESSERA_AMP_SLA_6 TESSERA_AMP_ROW_LA(0) TESSERA_AMP_ROW_LA(1) TESSERA_AMP_NOPS_4
#define TESSERA_AMP_SSA_4 ""
#define TESSERA_AMP_SSA_6 TESSERA_AMP_ROW_SA(0) TESSERA_AMP_ROW_SA_STEP(1)
// The supervisor's tail: its rows' stores (R - 4 rounds) and the next group's block 0 into bank 0
// after an odd block (TAIL_ODD), or 4 idle rounds (TAIL_EVEN). Its group loop counts b's blocks,
// not c's (with R = 4 it has no rows, and its pointer of c does not move).
#define TESSERA_AMP_STAIL_ODD(R) TESSERA_AMP_FILL_BANK0 TESSERA_AMP_SSA_##R
#define TESSERA_AMP_STAIL_EVEN(R) TESSERA_AMP_NEXT_ENDB "nop\nnop\nnop\n" TESSERA_AMP_SSA_##R
// clang-format on

constexpr uint32_t kSixth = 0xAAAAAAABu;

// What the stretch reads between row blocks: the steps to every later row block's rows (the
// first step, from row block 0, is in registers), the row limit of a whole block, c's advance
// over a row block's groups, and (the supervisor) b and the bytes of a group's pairs.
struct Table {
  uint32_t aStep;   // bytes from a whole row block's first row of a to the next's
  uint32_t cStep;   // bytes from c's pointer after a row block's groups to the next block's start
  uint32_t rows;    // the context's rows in a whole block: R, or R - 4 for the supervisor
  uint32_t cAdv;    // bytes c's pointer advances over a row block's groups
  uint32_t b;       // b (the supervisor)
  uint32_t pairsB;  // 128 bytes a pair of blocks: b's pointer after a group's first block to its
                    // pairs' end (the supervisor)
  uint32_t bAdv;    // bytes of b: the supervisor's endb advances this over a row block's groups
};

// The operands both roles' asm statements share (tab, the funct3s, the row fields).
#define TESSERA_AMP_COMMON_IN                                                              \
  [t] "r"(t), [ctx] "r"(ctx), [sixth] "i"(kSixth), [odd] "r"(odd), [acc] "r"(acc),         \
      [skip] "r"(skip), [back] "r"(back), [tab] "r"(tab), [op] "i"(TESS_AMP_OPCODE),       \
      [mul] "i"(MulF3), [la] "i"(TESS_AMP_F3_LA), [sa] "i"(TESS_AMP_F3_SA),                \
      [lo] "i"(1u << (TESS_AMP_ROW_LSB - 25)), [hi] "i"(1u << (TESS_AMP_ROW_HI_BIT - 25)), \
      [bk] "i"(1u << (TESS_AMP_BANK_BIT - 25)), [cl] "i"(1u << (TESS_AMP_CLEAR_BIT - 25))

// A worker's stretch from cycle t (the rounds docs above and tessera/amp_matmul.h count): pa its
// first row of a in row block 0, pc of c, end pa's value after a group's pairs of blocks, cend
// pc's after a row block's groups; aStep and cStep the first steps between row blocks.
#define TESSERA_AMP_WORKER_ASM(R) \
  __asm__ volatile(                                                                              \
      TESSERA_AMP_PAIRS_ENTRY TESSERA_AMP_MEET TESSERA_AMP_NOPS_4                                \
      "1: beqz %[acc], 3f\n" TESSERA_AMP_WLA_##R                                                 \
      "3:\n" TESSERA_AMP_WBLOCK_##R(0) TESSERA_AMP_WBLOCK_##R(1)                                 \
      "jr %[entry]\n"                                                                            \
      "4:\n" TESSERA_AMP_WBLOCK_##R(0) TESSERA_AMP_WBLOCK_##R(1)                                 \
      "44:\n" TESSERA_AMP_WBLOCK_##R(0) TESSERA_AMP_WBLOCK_##R(1)                                \
      "bne %[pa], %[end], 4b\n"                                                                  \
      "5: beqz %[odd], 6f\n" TESSERA_AMP_WBLOCK_##R(0) TESSERA_AMP_WSA_##R "j 7f\n"              \
      "6:\n" TESSERA_AMP_WSA_##R                                                                 \
      "7: add %[pc], %[pc], %[skip]\n"                                                           \
      "add %[pa], %[pa], %[back]\n"                                                              \
      "bne %[pc], %[cend], 1b\n" /* between row blocks (18 rounds) */                            \
      "addi %[nrb], %[nrb], -1\n"                                                                \
      "beqz %[nrb], 9f\n"                                                                        \
      "add %[pa], %[pa], %[aStep]\n"                                                             \
      "add %[end], %[end], %[aStep]\n"                                                           \
      "add %[pc], %[pc], %[cStep]\n"                                                             \
      "lw %[aStep], 0(%[tab])\n"                                                                 \
      "lw %[cStep], 4(%[tab])\n"                                                                 \
      "lw t1, 8(%[tab])\n"                                                                       \
      ".insn r %[op], %[cvt], %[rows], x0, t1, x0\n"                                             \
      "lw t1, 12(%[tab])\n"                                                                      \
      "add %[cend], %[pc], t1\n" TESSERA_AMP_NOPS_4 TESSERA_AMP_NOPS_2                          \
      "j 1b\n"                                                                                   \
      "9: j 91f\n"                                                                               \
      "90: ebreak\n"                                                                             \
      "91:\n"                                                                                    \
      : [pa] "+&r"(pa), [pc] "+&r"(pc), [end] "+&r"(end), [cend] "+&r"(cend), [nrb] "+&r"(nrb), \
        [entry] "+&r"(entry), [aStep] "+&r"(aStep), [cStep] "+&r"(cStep)                         \
      : TESSERA_AMP_COMMON_IN, [cvt] "i"(TESS_AMP_F3_CVT), [rows] "i"(TESS_AMP_CVT_ROWS)         \
      : "t0", "t1", "t2", "memory")

// The supervisor's stretch: pb walks b (a group's blocks, then the next group's: column groups
// follow each other in b), endb is pb after a group's pairs' loads; its own rows as a worker's.
// The last group's last loads read at most 64 bytes past b (still SRAM: the stacks lie above
// every buffer) into bank 0, which the gap refills before any AMP.S reads it.
#define TESSERA_AMP_SUPERVISOR_ASM(R) \
  __asm__ volatile(                                                                              \
      TESSERA_AMP_PAIRS_ENTRY TESSERA_AMP_MEET TESSERA_AMP_FILL_BANK0                            \
      "1: beqz %[acc], 3f\n" TESSERA_AMP_SLA_##R                                                 \
      "3:\n" TESSERA_AMP_SBLOCK_##R(0, 1) TESSERA_AMP_SBLOCK_##R(1, 0)                           \
      "jr %[entry]\n"                                                                            \
      "4:\n" TESSERA_AMP_SBLOCK_##R(0, 1) TESSERA_AMP_SBLOCK_##R(1, 0)                           \
      "44:\n" TESSERA_AMP_SBLOCK_##R(0, 1) TESSERA_AMP_SBLOCK_##R(1, 0)                          \
      "bne %[pb], %[endb], 4b\n"                                                                 \
      "5: beqz %[odd], 6f\n" TESSERA_AMP_SODD_##R TESSERA_AMP_STAIL_ODD(R) "j 7f\n"             \
      "6:\n" TESSERA_AMP_STAIL_EVEN(R)                                                           \
      "7: add %[pc], %[pc], %[skip]\n"                                                           \
      "add %[pa], %[pa], %[back]\n"                                                              \
      "bne %[endb], %[ebend], 1b\n" /* between row blocks (18 rounds): b's block 0, bank 0 */  \
      "addi %[nrb], %[nrb], -1\n"                                                                \
      "beqz %[nrb], 9f\n"                                                                        \
      "lw %[pb], 16(%[tab])\n" TESSERA_AMP_FILL_BANK0 "lw t1, 20(%[tab])\n"                     \
      "add %[endb], %[pb], t1\n"                                                                 \
      "add %[pa], %[pa], %[aStep]\n"                                                             \
      "add %[pc], %[pc], %[cStep]\n"                                                             \
      "lw %[aStep], 0(%[tab])\n"                                                                 \
      "lw %[cStep], 4(%[tab])\n"                                                                 \
      "lw t1, 8(%[tab])\n"                                                                       \
      ".insn r %[op], %[cvt], %[rows], x0, t1, x0\n"                                             \
      "lw t1, 24(%[tab])\n"                                                                      \
      "add %[ebend], %[endb], t1\n"                                                              \
      "j 1b\n"                                                                                   \
      "9: j 91f\n"                                                                               \
      "90: ebreak\n"                                                                             \
      "91:\n"                                                                                    \
      : [pa] "+&r"(pa), [pc] "+&r"(pc), [pb] "+&r"(pb), [endb] "+&r"(endb), [ebend] "+&r"(ebend), \
        [nrb] "+&r"(nrb), [entry] "+&r"(entry), [aStep] "+&r"(aStep), [cStep] "+&r"(cStep)       \
      : TESSERA_AMP_COMMON_IN, [lw] "i"(TESS_AMP_F3_LW), [step] "r"(step),                      \
        [cvt] "i"(TESS_AMP_F3_CVT), [rows] "i"(TESS_AMP_CVT_ROWS)                                \
      : "t0", "t1", "t2", "memory")

/// The vertex body of MatMulAmp (In = float, MulF3 = AMP.S) and MatMulAmpH (In = uint16_t, binary16
/// bit patterns, MulF3 = AMP.H) on the vertex's fields v.a, v.b, v.c, v.sync, v.k, v.rows,
/// v.cols, v.flags: c (+)= a b with a [rows, k] row-major, b in column groups [cols / 4][k][4], c
/// row-major or (flags bit 3) in column groups; accumulate with flags bit 2; R in the field
/// TESSERA_AMP_MATMUL_ROWS_SHIFT. Inlined into each vertex. Every context sets up its pointers
/// before the meet (TESSERA_AMP_MATMUL_START_ROUNDS).
template <typename In, uint32_t MulF3, typename Vertex>
__attribute__((always_inline)) inline void product(const Vertex& v) {
  const uint32_t ctx = tessera_context_id();
  volatile int32_t* const flag = v.sync.data();
  uint32_t t = 0;
  if (ctx == 0) {
    // The start, published first: the supervisor's setup below runs inside the start's rounds
    // as every worker's does.
    t = tessera_cycle() + 6 * TESSERA_AMP_MATMUL_START_ROUNDS;
    if (t == 0) t = 6;  // 0 means "not yet published"
    *flag = static_cast<int32_t>(t);
  }
  constexpr uint32_t kElemBytes = sizeof(In);
  const uint32_t kk = v.k, flags = v.flags, rows = v.rows, groups = v.cols / 4;
  const uint32_t blocks = kk / (16 / kElemBytes), pairs = blocks / 2;
  const uint32_t odd = blocks & 1u, acc = (flags >> 2) & 1u;
  const bool cGroups = (flags & 8u) != 0;
  const uint32_t R = (flags >> TESSERA_AMP_MATMUL_ROWS_SHIFT) & 15u;
  if (R != 4u && R != 6u) __builtin_trap();  // the planner gives 4 or 6
  const uint32_t blockRows = tessera_amp_matmul_block_rows(R);
  // Row blocks, by constants (a division by a variable is a long op of 8 rounds).
  const uint32_t nrbAll = R == 4u ? (rows + 19u) / 20u : (rows + 31u) / 32u;
  const uint32_t first = rows - (nrbAll - 1) * blockRows;  // rows of row block 0
  // This context's rows in a whole block and their offset in it.
  const uint32_t mine = ctx == 0 ? R - 4 : R;
  const uint32_t off = ctx == 0 ? 0 : R - 4 + (ctx - 1) * R;
  const uint32_t have = first > off ? first - off : 0;
  const uint32_t n0 = have < mine ? have : mine;
  const uint32_t aRow = kk * kElemBytes;             // bytes from a row of a to the next
  const uint32_t cRow = cGroups ? 16 : 16 * groups;  // and of c
  const uint32_t skip = cGroups ? rows * 16 - 16 : 0;
  const uint32_t cAdv = groups * (16 + skip);
  const char* pa = reinterpret_cast<const char*>(v.a.data()) + off * aRow;
  char* pc = reinterpret_cast<char*>(v.c.data()) + off * cRow;
  const char* end = pa + 32 * pairs;
  char* cend = pc + cAdv;
  const uint32_t back = 0u - 16 * blocks;
  uint32_t aStep = first * aRow, cStep = first * cRow - cAdv, nrb = nrbAll;
  uintptr_t entry = pairs - 1;  // the further pairs; TESSERA_AMP_PAIRS_ENTRY makes it an address
  Table table;
  table.aStep = blockRows * aRow;
  table.cStep = blockRows * cRow - cAdv;
  table.rows = mine;
  table.cAdv = cAdv;
  const Table* const tab = &table;
  TESSERA_AMP_STRIDE(aRow, cRow);
  TESSERA_AMP_ROWS(n0);
  TESSERA_AMP_CLR();  // no AMP.SA has cleared this context's rows before the first group
  if (ctx != 0) {
    // Everything the stretch takes is computed before the wait (the compiler would otherwise move
    // some of it after, between the start cycle's arrival and the meet).
    __asm__ volatile("" ::"r"(pa), "r"(pc), "r"(end), "r"(cend), "r"(back), "r"(aStep), "r"(cStep),
                     "r"(nrb), "r"(entry), "r"(skip), "r"(tab), "r"(odd), "r"(acc)
                     : "memory");
    while ((t = static_cast<uint32_t>(*flag)) == 0) {
    }
  }
  if (ctx == 0) {
    // What only the supervisor reads, set after the workers' share (they read the start sooner).
    table.b = reinterpret_cast<uint32_t>(v.b.data());
    table.pairsB = 128 * pairs;
    table.bAdv = groups * 64 * blocks;
    const char* pb = reinterpret_cast<const char*>(v.b.data());
    // endb: pb after a group's pairs' loads (pb = the group's start + 64 when they begin).
    const char* endb = pb + 64 + 128 * pairs;
    const char* ebend = endb + table.bAdv;  // endb after a row block's groups
    const uint32_t step = 64 * blocks;      // bytes of a column group of b
    if (R == 4)
      TESSERA_AMP_SUPERVISOR_ASM(4);
    else
      TESSERA_AMP_SUPERVISOR_ASM(6);
    // Every worker read T0 before the stretch began.
    *flag = 0;
  } else {
    if (R == 4)
      TESSERA_AMP_WORKER_ASM(4);
    else
      TESSERA_AMP_WORKER_ASM(6);
  }
  // The unit's reset addressing for whatever runs next on this context.
  TESSERA_AMP_STRIDE(0u, 0u);
  TESSERA_AMP_ROWS(TESS_AMP_ACC_ROWS);
}

}  // namespace tessera_amp_matmul
