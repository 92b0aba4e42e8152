// The matrix unit's accumulation chains (docs/tile.md, "Matrix unit": AMP.S and AMP.H) on the
// host's FMA3 unit. Each step is IEEE 754's fused multiply-add of binary32 values rounded to
// nearest even, which x86's VFMADD computes bit for bit the same as fp::madd_inline under RNE
// when MXCSR has no DAZ or FTZ; only NaN differs (x86 keeps an operand's payload), so a NaN
// result becomes the canonical NaN, as it does in the chain of RISC-V operations (a NaN stays a
// NaN to the chain's end). The unit raises no flags, so none are kept.
#pragma once

#include <cstdint>

namespace tessera::fp {

/// True when this host runs fmaChain4 (x86-64 with FMA3); else the caller runs the chain with
/// madd_inline.
extern const bool kHostFmaChains;

/// acc[j] <- (...((acc[j] + x[0] * w[j]) + x[1] * w[4 + j]) ...) + x[n-1] * w[4(n-1) + j], j < 4:
/// binary32 bit patterns, each step one fused rounding to nearest even. The caller's MXCSR is
/// set for the chain and restored after it. Only when kHostFmaChains.
void fmaChain4(const uint32_t* x, const uint32_t* w, unsigned n, uint32_t* acc);

}  // namespace tessera::fp
