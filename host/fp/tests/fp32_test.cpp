// Hand-checked RISC-V F cases for tessera::fp. Each expected value was worked out by hand from
// IEEE 754 and the RISC-V F chapter; the comment beside it gives the reasoning.
#include "fp32.hpp"

#include <gtest/gtest.h>

namespace tessera::fp {
namespace {

constexpr uint32_t kOne = 0x3f800000, kTwo = 0x40000000, kHalf = 0x3f000000;
constexpr uint32_t kPInf = 0x7f800000, kNInf = 0xff800000, kPZero = 0, kNZero = 0x80000000;
constexpr uint32_t kQNaN = 0x7fc00001, kSNaN = 0x7f800001, kMax = 0x7f7fffff;
constexpr uint32_t kMinSub = 0x00000001, kMinNorm = 0x00800000;

#define EXPECT_FP(call, v, f)                                           \
  do {                                                                  \
    const Result r_ = (call);                                           \
    EXPECT_EQ(r_.value, static_cast<uint32_t>(v)) << #call << " value"; \
    EXPECT_EQ(r_.flags, static_cast<uint32_t>(f)) << #call << " flags"; \
  } while (0)

TEST(Fp32, AddRounding) {
  // 1 + 2^-24 is halfway between 1 and 1+2^-23: RNE picks the even 1, RMM/RUP go up.
  const uint32_t tiny = 0x33800000;  // 2^-24
  EXPECT_FP(add(kOne, tiny, kRNE), kOne, kNX);
  EXPECT_FP(add(kOne, tiny, kRMM), 0x3f800001, kNX);
  EXPECT_FP(add(kOne, tiny, kRUP), 0x3f800001, kNX);
  EXPECT_FP(add(kOne, tiny, kRTZ), kOne, kNX);
  EXPECT_FP(add(kOne, tiny, kRDN), kOne, kNX);
  // Negative tie: RMM and RDN move away from zero, RUP toward it.
  EXPECT_FP(add(kOne | kNZero, tiny | kNZero, kRMM), 0xbf800001, kNX);
  EXPECT_FP(add(kOne | kNZero, tiny | kNZero, kRDN), 0xbf800001, kNX);
  EXPECT_FP(add(kOne | kNZero, tiny | kNZero, kRUP), 0xbf800000, kNX);
  // 2^24 + 1 is a tie between 2^24 and 2^24 + 2.
  EXPECT_FP(add(0x4b800000, kOne, kRMM), 0x4b800001, kNX);
  EXPECT_FP(add(0x4b800000, kOne, kRNE), 0x4b800000, kNX);
}

TEST(Fp32, ZeroSigns) {
  // x - x is +0 except in RDN where it is -0; -0 + -0 = -0 in every mode.
  EXPECT_FP(sub(kOne, kOne, kRNE), kPZero, 0);
  EXPECT_FP(sub(kOne, kOne, kRDN), kNZero, 0);
  EXPECT_FP(add(kNZero, kNZero, kRNE), kNZero, 0);
  EXPECT_FP(add(kPZero, kNZero, kRNE), kPZero, 0);
  EXPECT_FP(add(kPZero, kNZero, kRDN), kNZero, 0);
  // A zero product keeps its own sign: (-0) * 5 = -0, and 0 * -1 = -0 in RDN as in RNE.
  EXPECT_FP(mul(kNZero, 0x40a00000, kRNE), kNZero, 0);
  EXPECT_FP(mul(kPZero, kOne | kNZero, kRDN), kNZero, 0);
  EXPECT_FP(mul(kPZero, kOne, kRDN), kPZero, 0);
}

TEST(Fp32, NaNs) {
  // Every NaN result is canonical; only signalling inputs and invalid operations raise NV.
  EXPECT_FP(add(kQNaN, kOne, kRNE), kCanonicalNaN, 0);
  EXPECT_FP(add(kSNaN, kOne, kRNE), kCanonicalNaN, kNV);
  EXPECT_FP(add(kPInf, kNInf, kRNE), kCanonicalNaN, kNV);
  EXPECT_FP(sub(kPInf, kPInf, kRNE), kCanonicalNaN, kNV);
  EXPECT_FP(mul(kPZero, kPInf, kRNE), kCanonicalNaN, kNV);
  EXPECT_FP(div(kPZero, kNZero, kRNE), kCanonicalNaN, kNV);
  EXPECT_FP(div(kPInf, kNInf, kRNE), kCanonicalNaN, kNV);
  EXPECT_FP(sqrt(kOne | kNZero, kRNE), kCanonicalNaN, kNV);
  EXPECT_FP(sqrt(0xffc00000, kRNE), kCanonicalNaN, 0);  // quiet NaN in, no NV
}

TEST(Fp32, Overflow) {
  // max * 2 = 2^129: beyond range. Nearest modes give inf; directed modes toward zero give max.
  EXPECT_FP(mul(kMax, kTwo, kRNE), kPInf, kOF | kNX);
  EXPECT_FP(mul(kMax, kTwo, kRMM), kPInf, kOF | kNX);
  EXPECT_FP(mul(kMax, kTwo, kRTZ), kMax, kOF | kNX);
  EXPECT_FP(mul(kMax, kTwo, kRDN), kMax, kOF | kNX);
  EXPECT_FP(mul(kMax, kTwo, kRUP), kPInf, kOF | kNX);
  EXPECT_FP(mul(kMax | kNZero, kTwo, kRDN), kNInf, kOF | kNX);
  EXPECT_FP(mul(kMax | kNZero, kTwo, kRUP), kMax | kNZero, kOF | kNX);
  // inf * 2 is exact infinity: no flags.
  EXPECT_FP(mul(kPInf, kTwo, kRNE), kPInf, 0);
}

TEST(Fp32, UnderflowAndTininessAfterRounding) {
  // 2^-126 * 0.5 = 2^-127 is an exact subnormal: no UF without NX.
  EXPECT_FP(mul(kMinNorm, kHalf, kRNE), 0x00400000, 0);
  // 2^-149 * 0.5 = 2^-150, halfway between 0 and 2^-149.
  EXPECT_FP(mul(kMinSub, kHalf, kRNE), kPZero, kUF | kNX);
  EXPECT_FP(mul(kMinSub, kHalf, kRMM), kMinSub, kUF | kNX);
  EXPECT_FP(mul(kMinSub, kHalf, kRUP), kMinSub, kUF | kNX);
  EXPECT_FP(mul(kMinSub, kHalf, kRDN), kPZero, kUF | kNX);
  // (1 - 2^-24) * 2^-126 = 2^-126 - 2^-150: a tie between 0x007fffff (odd) and 2^-126; RNE gives
  // 2^-126, but with an unbounded exponent the value has 24 bits and stays below 2^-126: tiny.
  EXPECT_FP(mul(0x3f7fffff, kMinNorm, kRNE), kMinNorm, kUF | kNX);
  // (1 + 2^-13) * 2^-126 (1 - 2^-13) = 2^-126 - 2^-152. Rounded to 24 bits with an unbounded
  // exponent (lsb 2^-150) it becomes 2^-126: not tiny, so RISC-V raises no UF (only NX).
  EXPECT_FP(mul(0x3f800400, 0x007ffc00, kRNE), kMinNorm, kNX);
  // In RTZ the same value truncates to 0x007fffff and stays tiny.
  EXPECT_FP(mul(0x3f800400, 0x007ffc00, kRTZ), 0x007fffff, kUF | kNX);
  // (2 - 2^-23) 2^-126 * (0.5 - 2^-25) = 2^-126 - 2^-149 + 2^-174: RUP gives 2^-126, yet with an
  // unbounded exponent it rounds up only to 2^-126 - 2^-150: tiny.
  EXPECT_FP(mul(0x00ffffff, 0x3effffff, kRUP), kMinNorm, kUF | kNX);
  EXPECT_FP(mul(0x00ffffff, 0x3effffff, kRNE), 0x007fffff, kUF | kNX);
}

TEST(Fp32, Division) {
  EXPECT_FP(div(kOne, kPZero, kRNE), kPInf, kDZ);
  EXPECT_FP(div(kOne | kNZero, kPZero, kRNE), kNInf, kDZ);
  EXPECT_FP(div(kOne, kPInf, kRNE), kPZero, 0);
  EXPECT_FP(div(kPInf, kPZero, kRNE), kPInf, 0);  // inf / 0 is exact inf, not a division by zero
  // 1/3 = 1.0101..b * 2^-2: the discarded bits start 1010.. so RNE rounds up, RTZ does not.
  EXPECT_FP(div(kOne, 0x40400000, kRNE), 0x3eaaaaab, kNX);
  EXPECT_FP(div(kOne, 0x40400000, kRTZ), 0x3eaaaaaa, kNX);
  // 5 * 2^-149 / 2 = 2.5 * 2^-149: a subnormal tie, even 2 in RNE, away 3 in RMM.
  EXPECT_FP(div(0x00000005, kTwo, kRNE), 0x00000002, kUF | kNX);
  EXPECT_FP(div(0x00000005, kTwo, kRMM), 0x00000003, kUF | kNX);
}

TEST(Fp32, SquareRoot) {
  EXPECT_FP(sqrt(kNZero, kRNE), kNZero, 0);  // sqrt(-0) = -0, valid
  EXPECT_FP(sqrt(kPInf, kRNE), kPInf, 0);
  EXPECT_FP(sqrt(0x40800000, kRNE), kTwo, 0);  // sqrt(4) = 2 exactly
  // sqrt(2) = 1.41421356..; 0x3fb504f3 = 1.41421353.. is the nearest and lies below it.
  EXPECT_FP(sqrt(kTwo, kRNE), 0x3fb504f3, kNX);
  EXPECT_FP(sqrt(kTwo, kRTZ), 0x3fb504f3, kNX);
  EXPECT_FP(sqrt(kTwo, kRUP), 0x3fb504f4, kNX);
  EXPECT_FP(sqrt(kTwo, kRMM), 0x3fb504f3, kNX);
  // sqrt(2^-148) = 2^-74 exactly: a subnormal input with a normal, exact result.
  EXPECT_FP(sqrt(0x00000002, kRNE), 0x1a800000, 0);
}

TEST(Fp32, FusedMultiplyAdd) {
  // RISC-V: inf * 0 + qNaN raises NV (IEEE leaves it to the implementation).
  EXPECT_FP(madd(kPInf, kPZero, kQNaN, kRNE), kCanonicalNaN, kNV);
  EXPECT_FP(madd(kOne, kOne, kSNaN, kRNE), kCanonicalNaN, kNV);
  EXPECT_FP(madd(kPInf, kOne, kNInf, kRNE), kCanonicalNaN, kNV);
  EXPECT_FP(madd(kQNaN, kOne, kOne, kRNE), kCanonicalNaN, 0);
  // (1+2^-23)^2 - (1+2^-22) = 2^-46 exactly; an unfused multiply-add would give 0.
  EXPECT_FP(madd(0x3f800001, 0x3f800001, 0xbf800002, kRNE), 0x28800000, 0);
  // msub/nmsub/nmadd negate c, the product, or both: 2*3 -/+ 1.
  EXPECT_FP(msub(kTwo, 0x40400000, kOne, kRNE), 0x40a00000, 0);   // 5
  EXPECT_FP(nmsub(kTwo, 0x40400000, kOne, kRNE), 0xc0a00000, 0);  // -5
  EXPECT_FP(nmadd(kTwo, 0x40400000, kOne, kRNE), 0xc0e00000, 0);  // -7
  // 2^24 * 1 + 1 is a tie: RMM goes away from zero.
  EXPECT_FP(madd(0x4b800000, kOne, kOne, kRMM), 0x4b800001, kNX);
  // 2^-24 (1 + 2^-23) * (1 - 2^-23) + 1 = 1 + 2^-24 - 2^-70: just below the tie, so even RMM
  // rounds to 1. (Rounding the double 1 + 2^-24 instead would wrongly give 1 + 2^-23.)
  EXPECT_FP(madd(0x33800001, 0x3f7ffffe, kOne, kRMM), kOne, kNX);
  EXPECT_FP(madd(0x33800001, 0x3f7ffffe, kOne, kRUP), 0x3f800001, kNX);
  // x*y + (-x*y) exact zero: +0, or -0 in RDN.
  EXPECT_FP(madd(kTwo, kTwo, 0xc0800000, kRNE), kPZero, 0);
  EXPECT_FP(madd(kTwo, kTwo, 0xc0800000, kRDN), kNZero, 0);
}

TEST(Fp32, MulRmmTie) {
  // (2^24 + 6) * 1.5 = 25165833, odd, with ulp 2 here: halfway between 25165832 (significand
  // 0xc00004, even) and 25165834 (0xc00005).
  EXPECT_FP(mul(0x4b800003, 0x3fc00000, kRNE), 0x4bc00004, kNX);
  EXPECT_FP(mul(0x4b800003, 0x3fc00000, kRMM), 0x4bc00005, kNX);
}

TEST(Fp32, MinMax) {
  EXPECT_FP(min(kNZero, kPZero), kNZero, 0);
  EXPECT_FP(min(kPZero, kNZero), kNZero, 0);
  EXPECT_FP(max(kNZero, kPZero), kPZero, 0);
  EXPECT_FP(min(kQNaN, kOne), kOne, 0);
  EXPECT_FP(max(kOne, kQNaN), kOne, 0);
  EXPECT_FP(min(kSNaN, kOne), kOne, kNV);
  EXPECT_FP(max(kQNaN, kSNaN), kCanonicalNaN, kNV);
  EXPECT_FP(min(kQNaN, kQNaN), kCanonicalNaN, 0);
  EXPECT_FP(min(kNInf, kOne), kNInf, 0);
  EXPECT_FP(max(0xc0000000, 0xbf800000), 0xbf800000, 0);  // max(-2, -1) = -1
}

TEST(Fp32, Compares) {
  EXPECT_FP(eq(kQNaN, kOne), 0, 0);  // FEQ: quiet NaN is not invalid
  EXPECT_FP(eq(kSNaN, kOne), 0, kNV);
  EXPECT_FP(lt(kQNaN, kOne), 0, kNV);  // FLT/FLE: any NaN is invalid
  EXPECT_FP(le(kOne, kQNaN), 0, kNV);
  EXPECT_FP(eq(kNZero, kPZero), 1, 0);
  EXPECT_FP(lt(kNZero, kPZero), 0, 0);
  EXPECT_FP(le(kNZero, kPZero), 1, 0);
  EXPECT_FP(lt(0xc0000000, 0xbf800000), 1, 0);  // -2 < -1
  EXPECT_FP(lt(kNInf, kMax | kNZero), 1, 0);
}

TEST(Fp32, FloatToInt) {
  EXPECT_FP(cvt_w_s(0x4f000000, kRNE), 0x7fffffff, kNV);  // 2^31 does not fit
  EXPECT_FP(cvt_w_s(0xcf000000, kRNE), 0x80000000, 0);    // -2^31 does, exactly
  EXPECT_FP(cvt_w_s(0x4effffff, kRNE), 0x7fffff80, 0);    // 2^31 - 128
  EXPECT_FP(cvt_w_s(kQNaN, kRNE), 0x7fffffff, kNV);
  EXPECT_FP(cvt_w_s(0xffc00000, kRNE), 0x7fffffff, kNV);  // negative NaN saturates positive
  EXPECT_FP(cvt_w_s(kNInf, kRNE), 0x80000000, kNV);
  EXPECT_FP(cvt_w_s(0x40200000, kRNE), 2, kNX);  // 2.5 -> even 2
  EXPECT_FP(cvt_w_s(0x40200000, kRMM), 3, kNX);  // 2.5 -> away 3
  EXPECT_FP(cvt_w_s(0xc0200000, kRMM), static_cast<uint32_t>(-3), kNX);
  EXPECT_FP(cvt_w_s(0xc0200000, kRDN), static_cast<uint32_t>(-3), kNX);
  EXPECT_FP(cvt_w_s(0xc0200000, kRUP), static_cast<uint32_t>(-2), kNX);
  EXPECT_FP(cvt_w_s(kHalf, kRNE), 0, kNX);       // 0.5 -> even 0
  EXPECT_FP(cvt_w_s(0x3fc00000, kRNE), 2, kNX);  // 1.5 -> even 2
  EXPECT_FP(cvt_w_s(kMinSub, kRUP), 1, kNX);
  EXPECT_FP(cvt_wu_s(kHalf | kNZero, kRNE), 0, kNX);  // -0.5 rounds to -0: valid, just inexact
  EXPECT_FP(cvt_wu_s(kHalf | kNZero, kRDN), 0, kNV);  // -0.5 rounds to -1: out of range
  EXPECT_FP(cvt_wu_s(kOne | kNZero, kRNE), 0, kNV);
  EXPECT_FP(cvt_wu_s(0x4f800000, kRNE), 0xffffffff, kNV);  // 2^32
  EXPECT_FP(cvt_wu_s(0x4f7fffff, kRNE), 0xffffff00, 0);    // 2^32 - 256
  EXPECT_FP(cvt_wu_s(kQNaN, kRNE), 0xffffffff, kNV);
  EXPECT_FP(cvt_wu_s(kNInf, kRNE), 0, kNV);
  EXPECT_FP(cvt_wu_s(kPInf, kRNE), 0xffffffff, kNV);
}

TEST(Fp32, IntToFloat) {
  // 2^31 - 1 needs 31 bits: RNE rounds up to 2^31, RTZ down to 2^31 - 128.
  EXPECT_FP(cvt_s_w(0x7fffffff, kRNE), 0x4f000000, kNX);
  EXPECT_FP(cvt_s_w(0x7fffffff, kRTZ), 0x4effffff, kNX);
  EXPECT_FP(cvt_s_w(0x80000000, kRNE), 0xcf000000, 0);  // -2^31 exact
  EXPECT_FP(cvt_s_w(0, kRDN), kPZero, 0);               // integer zero is +0 in every mode
  // 2^24 + 1 is a tie between 2^24 and 2^24 + 2.
  EXPECT_FP(cvt_s_w(16777217, kRNE), 0x4b800000, kNX);
  EXPECT_FP(cvt_s_w(16777217, kRMM), 0x4b800001, kNX);
  EXPECT_FP(cvt_s_w(static_cast<uint32_t>(-16777217), kRMM), 0xcb800001, kNX);
  EXPECT_FP(cvt_s_wu(0xffffffff, kRNE), 0x4f800000, kNX);
  EXPECT_FP(cvt_s_wu(0xffffffff, kRTZ), 0x4f7fffff, kNX);
  EXPECT_FP(cvt_s_wu(0x80000000, kRNE), 0x4f000000, 0);  // unsigned: +2^31
}

TEST(Fp32, SignInjectionAndClass) {
  // Sign injection keeps NaN payloads and raises nothing.
  EXPECT_EQ(sgnj(kSNaN, kNZero), 0xff800001u);
  EXPECT_EQ(sgnjn(kOne, kOne), 0xbf800000u);
  EXPECT_EQ(sgnjx(0xbf800000, 0xbf800000), kOne);
  EXPECT_EQ(fclass(kNInf), 1u << 0);
  EXPECT_EQ(fclass(0xbf800000), 1u << 1);
  EXPECT_EQ(fclass(0x80000001), 1u << 2);
  EXPECT_EQ(fclass(kNZero), 1u << 3);
  EXPECT_EQ(fclass(kPZero), 1u << 4);
  EXPECT_EQ(fclass(kMinSub), 1u << 5);
  EXPECT_EQ(fclass(kOne), 1u << 6);
  EXPECT_EQ(fclass(kPInf), 1u << 7);
  EXPECT_EQ(fclass(kSNaN), 1u << 8);
  EXPECT_EQ(fclass(kQNaN), 1u << 9);
}

}  // namespace
}  // namespace tessera::fp
