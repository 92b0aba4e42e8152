/* The timing of the matrix-unit matmul codelets (MatMulAmp and MatMulAmpH, whose instructions are
 * in sw/codelets/linalg/amp_matmul_rows.hpp), shared with the library's planner, which models
 * their cycles and picks the rows a context streams (sw/library/matmul.cpp, docs/library.md). */
#ifndef TESSERA_AMP_MATMUL_H
#define TESSERA_AMP_MATMUL_H

/** Rounds from the supervisor's publishing of the start cycle (its first act) to the lock-step
 * stretch: room for every context to set up its pointers, strides and row limit and see it. The
 * worst case is a second product on the tile in one compute set, whose workers start their setup
 * when the supervisor does (no head start): the unit's tests pass with 120 and trap with 112 (a
 * context late at the meet); 24 rounds more are the margin. */
#define TESSERA_AMP_MATMUL_START_ROUNDS 144u
/** Workers (every context but the supervisor, which also loads the weights). */
#define TESSERA_AMP_MATMUL_WORKERS 5u
/** Where the flags field holds R, the rows a worker streams in a row block (4 or 6; the
 * supervisor streams R - 4 while it loads the weights); any other value stops the codelet. The
 * unit has eight accumulator rows; R = 8 (44-row blocks, 92% of the slots in the loop) would add
 * about 1.1 KB of code to every tile that runs the codelet, and the smallest test chips do not
 * have it to spare. */
#define TESSERA_AMP_MATMUL_ROWS_SHIFT 4u
/** Rounds at the stretch's start: bank 0's first fill (the workers clear their accumulators). */
#define TESSERA_AMP_MATMUL_FILL_ROUNDS 4u
/** Rounds between two row blocks: the counters' test, the pointers' steps, the row limit and the
 * refill of bank 0 with b's first block. */
#define TESSERA_AMP_MATMUL_ROW_BLOCK_ROUNDS 18u

/** Rows of a row block at R rows a worker: five workers' R and the supervisor's R - 4. */
static inline unsigned tessera_amp_matmul_block_rows(unsigned r) {
  return 6u * r - 4u;
}

/** Rounds of a group's pairs of blocks (pairs >= 1) at R rows: the first pair (2R) and the jump
 * into the loop over the others, which does two pairs a trip (4R and its test) and enters at its
 * second half when their number is odd (2R and the test). */
static inline unsigned tessera_amp_matmul_pair_rounds(unsigned pairs, unsigned r) {
  const unsigned rest = pairs - 1u;
  return 2u * r + 1u + (4u * r + 1u) * (rest / 2u) + ((rest & 1u) ? 2u * r + 1u : 0u);
}

/** Rounds of one column group of a row block over `blocks` blocks of k (4 k with fp32 inputs, 8
 * with fp16; blocks >= 2) at R rows: the head (its test and, when accumulating, R rounds of
 * AMP.LA), the pairs of blocks, the odd block's test and, with an odd block, its R rounds and a
 * jump, the R AMP.SA, and the group's three rounds of pointer steps and loop. */
static inline unsigned tessera_amp_matmul_group_rounds(unsigned blocks, int accumulate,
                                                       unsigned r) {
  return 1u + (accumulate ? r : 0u) + tessera_amp_matmul_pair_rounds(blocks / 2u, r) + 1u +
         ((blocks & 1u) ? r + 1u : 0u) + r + 3u;
}

/** Rounds of a whole MatMulAmp (or MatMulAmpH) vertex set on a tile from the supervisor's start
 * to its end at R rows: rows of a, groups of 4 columns, blocks of k. */
static inline unsigned tessera_amp_matmul_rounds(unsigned rows, unsigned groups, unsigned blocks,
                                                 int accumulate, unsigned r) {
  const unsigned per = tessera_amp_matmul_block_rows(r);
  const unsigned rowBlocks = (rows + per - 1u) / per;
  return TESSERA_AMP_MATMUL_START_ROUNDS + TESSERA_AMP_MATMUL_FILL_ROUNDS +
         rowBlocks * groups * tessera_amp_matmul_group_rounds(blocks, accumulate, r) +
         (rowBlocks - 1u) * TESSERA_AMP_MATMUL_ROW_BLOCK_ROUNDS;
}

/** The R (4 or 6) that takes the fewest rounds; 4 on a tie. */
static inline unsigned tessera_amp_matmul_best_rows(unsigned rows, unsigned groups, unsigned blocks,
                                                    int accumulate) {
  return tessera_amp_matmul_rounds(rows, groups, blocks, accumulate, 6u) <
                 tessera_amp_matmul_rounds(rows, groups, blocks, accumulate, 4u)
             ? 6u
             : 4u;
}

#endif
