/* The row-block timing of the matrix-unit matmul codelets (MatMulAmp and MatMulAmpH, whose rounds
 * are in sw/codelets/linalg/amp_matmul_rows.hpp), shared with the library's planner, which models
 * their cycles (sw/library/matmul.cpp, docs/library.md). */
#ifndef TESSERA_AMP_MATMUL_H
#define TESSERA_AMP_MATMUL_H

/** Rounds from the supervisor's publishing of the start cycle to the first row block. */
#define TESSERA_AMP_MATMUL_START_ROUNDS 160u
/** Rounds between the end of one row block's lock-step stretch and the start of the next: a
 * worker's set-up of its next four rows and the meet. */
#define TESSERA_AMP_MATMUL_BLOCK_GAP_ROUNDS 96u
/** Rounds after each column group's lock-step loop (and odd block) in a row block: the workers'
 * stores and pointer steps, the supervisor's next first block after an odd one, the loop's test. */
#define TESSERA_AMP_MATMUL_GROUP_TAIL_ROUNDS 14u
/** Rounds more before each further group: the test, AMP.CLR and the jump back. */
#define TESSERA_AMP_MATMUL_GROUP_HEAD_ROUNDS 3u
/** The same when accumulating: the test, four AMP.LA, four pointer steps back, the jump. */
#define TESSERA_AMP_MATMUL_GROUP_HEAD_ACC_ROUNDS 10u
/** Rows of a a worker streams in one pass (its accumulator rows). */
#define TESSERA_AMP_MATMUL_ROWS 4u

#endif
