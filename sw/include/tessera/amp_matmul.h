/* The timing of the matrix-unit matmul codelets (MatMulAmp and MatMulAmpH, whose instructions are
 * in sw/codelets/linalg/amp_matmul_rows.hpp), shared with the library's planner, which models
 * their cycles (sw/library/matmul.cpp, docs/library.md). */
#ifndef TESSERA_AMP_MATMUL_H
#define TESSERA_AMP_MATMUL_H

/** Rounds from the supervisor's publishing of the start cycle to the lock-step stretch: room for
 * the workers to set up their pointers and see it. The worst case is a second product on the tile
 * in one compute set, whose workers start their setup when the supervisor does (no head start):
 * the unit's tests pass with 96 and trap with 88 (a worker late at the meet; the pairs' entry,
 * computed before the meet, takes some 6 of them); 24 rounds more are the margin (the setup took
 * 136 before its rows went backwards, and the start was 160). */
#define TESSERA_AMP_MATMUL_START_ROUNDS 120u
/** Rows of a a worker streams in one pass (its accumulator rows). */
#define TESSERA_AMP_MATMUL_ROWS 4u
/** Workers in a row block (every context but the supervisor, which loads the weights). */
#define TESSERA_AMP_MATMUL_WORKERS 5u
/** Rounds at the stretch's start: bank 0's first fill (the workers clear their accumulators). */
#define TESSERA_AMP_MATMUL_FILL_ROUNDS 4u
/** Rounds between two row blocks: the counters' test and the pointers' steps back 20 rows (rows
 * 1 to 3 from row 0, which the first quad may have clamped). */
#define TESSERA_AMP_MATMUL_ROW_BLOCK_ROUNDS 17u
/** The same where c is in column groups of whole quads of rows (one pointer of c, no clamp). */
#define TESSERA_AMP_MATMUL_ROW_BLOCK_ROUNDS_NEIGHBOURS 12u

/** Rounds of a group's pairs of blocks (pairs >= 1): the first pair (8) and the jump into the
 * loop over the others, which does two pairs a trip (17) and enters at its second half when
 * their number is odd (8 and the loop's test). */
static inline unsigned tessera_amp_matmul_pair_rounds(unsigned pairs) {
  const unsigned rest = pairs - 1u;
  return 9u + 17u * (rest / 2u) + ((rest & 1u) ? 9u : 0u);
}

/** Rounds of one column group of a row block over `blocks` blocks of k (4 k with fp32 inputs, 8
 * with fp16; blocks >= 2): the head (its test and, when accumulating, AMP.LA of four rows), the
 * pairs of blocks, the odd block's test and, with an odd block, its rounds and a jump, the four
 * AMP.SA, the step of c to the next group (one round, and four more where c is in column groups
 * of a number of rows that is not a multiple of 4) and the group loop's two. */
static inline unsigned tessera_amp_matmul_group_rounds(unsigned blocks, int accumulate,
                                                       int cStepAdds) {
  return (accumulate ? 5u : 1u) + tessera_amp_matmul_pair_rounds(blocks / 2u) + 1u +
         ((blocks & 1u) ? 9u : 4u) + 3u + (cStepAdds ? 4u : 0u);
}

/** Rounds of a whole MatMulAmp (or MatMulAmpH) vertex set on a tile from the supervisor's start
 * to its end: rows of a, groups of 4 columns, blocks of k; cgroups when c is stored in column
 * groups. */
static inline unsigned tessera_amp_matmul_rounds(unsigned rows, unsigned groups, unsigned blocks,
                                                 int accumulate, int cgroups) {
  const unsigned rowGroups = (rows + TESSERA_AMP_MATMUL_ROWS - 1u) / TESSERA_AMP_MATMUL_ROWS;
  const unsigned rowBlocks =
      (rowGroups + TESSERA_AMP_MATMUL_WORKERS - 1u) / TESSERA_AMP_MATMUL_WORKERS;
  const int cStepAdds = cgroups && rows > 1u && rows % TESSERA_AMP_MATMUL_ROWS != 0u;
  return TESSERA_AMP_MATMUL_START_ROUNDS + TESSERA_AMP_MATMUL_FILL_ROUNDS +
         rowBlocks * groups * tessera_amp_matmul_group_rounds(blocks, accumulate, cStepAdds) +
         (rowBlocks - 1u) * (cgroups && rows % TESSERA_AMP_MATMUL_ROWS == 0u
                                 ? TESSERA_AMP_MATMUL_ROW_BLOCK_ROUNDS_NEIGHBOURS
                                 : TESSERA_AMP_MATMUL_ROW_BLOCK_ROUNDS);
}

#endif
