// The product of MatMulAmp with fp16 inputs on the matrix unit (AMP.H, 32 MACs an instruction;
// docs/tile.md, "fp16 inputs and conversions"; docs/library.md, "fp16 matmul"): a and b are
// binary16 bit patterns, c fp32. Each element is the chain fma(w(a_k), w(b_kj), acc) over k in
// increasing order from +0 or from c (w: the exact widening), AMP.H's order, which MatMulHalf
// computes with scalar FMADD.S too. The rounds and layouts are MatMulAmp's (amp_matmul_rows.hpp)
// with 8 k a block: a [rows, k] row-major, b in column groups [cols / 4][k][4] (a block of 8 k is
// the 64 bytes of one weight bank); k a multiple of 8, k >= 16, cols a multiple of 4, every field
// 16-byte aligned.
#include "amp_matmul_rows.hpp"

TESSERA_EXCLUSIVE_VERTEX(MatMulAmpH, (Input, uint16_t, a), (Input, uint16_t, b), (InOut, float, c),
                         (InOut, int32_t, sync), (Param, uint32_t, k), (Param, uint32_t, rows),
                         (Param, uint32_t, cols), (Param, uint32_t, flags)) {
  tessera_amp_matmul::product<uint16_t, TESS_AMP_F3_H>(*this);
}
