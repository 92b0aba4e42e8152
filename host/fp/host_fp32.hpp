// Private header of tessera_fp: the host reference of the rounded binary32 operations, computed
// on the x86-64 SSE unit under a temporarily set MXCSR (host_fp32.cpp). Same contract as the
// functions of the same names in fp32.hpp; the tests compare the two bit for bit.
#pragma once

#include "fp32.hpp"

namespace tessera::fp::host {

/// a + b rounded per rm (0..4), on the host FPU.
Result add(uint32_t a, uint32_t b, unsigned rm);
/// a - b rounded per rm, on the host FPU.
Result sub(uint32_t a, uint32_t b, unsigned rm);
/// a * b rounded per rm, on the host FPU.
Result mul(uint32_t a, uint32_t b, unsigned rm);
/// a / b rounded per rm, on the host FPU.
Result div(uint32_t a, uint32_t b, unsigned rm);
/// sqrt(a) rounded per rm, on the host FPU.
Result sqrt(uint32_t a, unsigned rm);
/// a*b+c with one rounding, on the host FPU.
Result madd(uint32_t a, uint32_t b, uint32_t c, unsigned rm);
/// a*b-c with one rounding, on the host FPU.
Result msub(uint32_t a, uint32_t b, uint32_t c, unsigned rm);
/// -(a*b)+c with one rounding, on the host FPU.
Result nmsub(uint32_t a, uint32_t b, uint32_t c, unsigned rm);
/// -(a*b)-c with one rounding, on the host FPU.
Result nmadd(uint32_t a, uint32_t b, uint32_t c, unsigned rm);
/// FCVT.S.W on the host FPU.
Result cvt_s_w(uint32_t a, unsigned rm);
/// FCVT.S.WU on the host FPU.
Result cvt_s_wu(uint32_t a, unsigned rm);

}  // namespace tessera::fp::host
