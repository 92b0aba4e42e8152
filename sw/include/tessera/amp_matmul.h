/* The pass timing of the matrix-unit matmul codelet (sw/codelets/linalg/MatMulAmp.cpp), shared with
 * the library's planner, which models its cycles (sw/library/matmul.cpp, docs/library.md). */
#ifndef TESSERA_AMP_MATMUL_H
#define TESSERA_AMP_MATMUL_H

/** Rounds from the supervisor's publishing of the start cycle to the first pass. */
#define TESSERA_AMP_MATMUL_START_ROUNDS 160u
/** Rounds between the end of one pass's lock-step loop and the start of the next. */
#define TESSERA_AMP_MATMUL_GAP_ROUNDS 40u
/** Rounds more before the first pass of each further row block (the workers' new rows). */
#define TESSERA_AMP_MATMUL_BLOCK_GAP_ROUNDS 96u
/** Rows of a a worker streams in one pass (its accumulator rows). */
#define TESSERA_AMP_MATMUL_ROWS 4u

#endif
