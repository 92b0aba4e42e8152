// MatMulBlocked's product on the matrix unit with fp32 inputs (AMP.S): the same result bit for bit
// (each element is a chain of fused multiply-adds over k in increasing order, from +0 or from c),
// compared with the scalar vertices in sw/library/tests. How it runs (the roles, the lock step,
// the row blocks) and its layouts: amp_matmul_rows.hpp, which MatMulAmpH (fp16 inputs) shares.
// k and cols multiples of 4, k >= 8, every field 16-byte aligned.
#include "amp_matmul_rows.hpp"

TESSERA_EXCLUSIVE_VERTEX(MatMulAmp, (Input, float, a), (Input, float, b), (InOut, float, c),
                         (InOut, int32_t, sync), (Param, uint32_t, k), (Param, uint32_t, rows),
                         (Param, uint32_t, cols), (Param, uint32_t, flags)) {
  tessera_amp_matmul::product<float, TESS_AMP_F3_S>(*this);
}
