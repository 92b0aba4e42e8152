// The FPU operations as the RTL encodes them (tess_pkg::fpu_op_e, same order) and their
// reference results from tessera::fp.
#pragma once

#include <cstdint>
#include <string_view>

#include "fp32.hpp"

namespace tessera::fpu_test {

/// Mirror of tess_pkg::fpu_op_e (rtl/tess_pkg.sv); the values must stay in the same order.
enum class FpuOp : uint8_t {
  kAdd,
  kSub,
  kMul,
  kMadd,
  kMsub,
  kNmsub,
  kNmadd,
  kSgnj,
  kSgnjn,
  kSgnjx,
  kMin,
  kMax,
  kCvtWS,
  kCvtWuS,
  kCvtSW,
  kCvtSWu,
  kMvXW,
  kMvWX,
  kEq,
  kLt,
  kLe,
  kClass,
  kDiv,
  kSqrt
};

/// Number of operations in FpuOp.
inline constexpr int kNumOps = 24;

/// Mnemonic of an operation, for messages.
std::string_view op_name(FpuOp op);
/// Number of source operands the operation reads (1, 2 or 3).
int op_arity(FpuOp op);
/// Whether operand a is an integer (CVT_S_W[U], MV_W_X).
bool op_takes_int(FpuOp op);
/// Whether the rounding mode matters to the operation.
bool op_uses_rm(FpuOp op);
/// tessera::fp's result of the operation.
fp::Result reference(FpuOp op, unsigned rm, uint32_t a, uint32_t b, uint32_t c);

}  // namespace tessera::fpu_test
