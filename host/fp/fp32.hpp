// IEEE 754 binary32 reference with RISC-V F semantics: the oracle of the RTL FPU tests and the FPU
// of the cycle-exact C++ model. Semantics: docs/tile.md "Floating point" and the RISC-V F spec.
// Every function is pure and thread-safe (it saves and restores the caller's MXCSR).
#pragma once

#include <cstdint>

namespace tessera::fp {

/// Result of one FP operation: bits and the RISC-V fflags it raises (NV=16 DZ=8 OF=4 UF=2 NX=1).
struct Result {
  uint32_t value;
  uint32_t flags;
};

/// fflags bits.
inline constexpr uint32_t kNV = 16, kDZ = 8, kOF = 4, kUF = 2, kNX = 1;
/// The canonical NaN every NaN-producing operation returns.
inline constexpr uint32_t kCanonicalNaN = 0x7fc00000u;
/// Rounding modes as in the instruction rm field.
inline constexpr unsigned kRNE = 0, kRTZ = 1, kRDN = 2, kRUP = 3, kRMM = 4;

/// a + b rounded per rm (0 RNE, 1 RTZ, 2 RDN, 3 RUP, 4 RMM); callers never pass 5..7.
Result add(uint32_t a, uint32_t b, unsigned rm);
/// a - b rounded per rm.
Result sub(uint32_t a, uint32_t b, unsigned rm);
/// a * b rounded per rm.
Result mul(uint32_t a, uint32_t b, unsigned rm);
/// a / b rounded per rm.
Result div(uint32_t a, uint32_t b, unsigned rm);
/// sqrt(a) rounded per rm.
Result sqrt(uint32_t a, unsigned rm);
/// a*b+c with one rounding.
Result madd(uint32_t a, uint32_t b, uint32_t c, unsigned rm);
/// a*b-c with one rounding.
Result msub(uint32_t a, uint32_t b, uint32_t c, unsigned rm);
/// -(a*b)+c with one rounding.
Result nmsub(uint32_t a, uint32_t b, uint32_t c, unsigned rm);
/// -(a*b)-c with one rounding.
Result nmadd(uint32_t a, uint32_t b, uint32_t c, unsigned rm);
/// FMIN.S: -0 < +0, a single NaN operand yields the other one, NV only for signalling NaNs.
Result min(uint32_t a, uint32_t b);
/// FMAX.S: as min.
Result max(uint32_t a, uint32_t b);
/// FEQ.S: value 0/1, NV only for signalling NaNs.
Result eq(uint32_t a, uint32_t b);
/// FLT.S: value 0/1, NV for any NaN.
Result lt(uint32_t a, uint32_t b);
/// FLE.S: value 0/1, NV for any NaN.
Result le(uint32_t a, uint32_t b);
/// FCVT.W.S: round per rm, saturate with NV (NaN -> 0x7fffffff).
Result cvt_w_s(uint32_t a, unsigned rm);
/// FCVT.WU.S: round per rm, saturate with NV (NaN -> 0xffffffff).
Result cvt_wu_s(uint32_t a, unsigned rm);
/// FCVT.S.W: int32 (two's complement bits in a) to float.
Result cvt_s_w(uint32_t a, unsigned rm);
/// FCVT.S.WU: uint32 to float.
Result cvt_s_wu(uint32_t a, unsigned rm);
/// FSGNJ.S: magnitude of a, sign of b (never raises flags).
uint32_t sgnj(uint32_t a, uint32_t b);
/// FSGNJN.S: magnitude of a, inverted sign of b.
uint32_t sgnjn(uint32_t a, uint32_t b);
/// FSGNJX.S: magnitude of a, sign a xor sign b.
uint32_t sgnjx(uint32_t a, uint32_t b);
/// FCLASS.S: the 10-bit one-hot class mask.
uint32_t fclass(uint32_t a);

}  // namespace tessera::fp
