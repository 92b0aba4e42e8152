#include "fpu_ops.hpp"

namespace tessera::fpu_test {

std::string_view op_name(FpuOp op) {
  static constexpr std::string_view kNames[kNumOps] = {
      "fadd",    "fsub",    "fmul", "fmadd", "fmsub",    "fnmsub",    "fnmadd",   "fsgnj",
      "fsgnjn",  "fsgnjx",  "fmin", "fmax",  "fcvt.w.s", "fcvt.wu.s", "fcvt.s.w", "fcvt.s.wu",
      "fmv.x.w", "fmv.w.x", "feq",  "flt",   "fle",      "fclass",    "fdiv",     "fsqrt"};
  return kNames[static_cast<int>(op)];
}

int op_arity(FpuOp op) {
  switch (op) {
    case FpuOp::kMadd:
    case FpuOp::kMsub:
    case FpuOp::kNmsub:
    case FpuOp::kNmadd:
      return 3;
    case FpuOp::kCvtWS:
    case FpuOp::kCvtWuS:
    case FpuOp::kCvtSW:
    case FpuOp::kCvtSWu:
    case FpuOp::kMvXW:
    case FpuOp::kMvWX:
    case FpuOp::kClass:
    case FpuOp::kSqrt:
      return 1;
    default:
      return 2;
  }
}

bool op_takes_int(FpuOp op) {
  return op == FpuOp::kCvtSW || op == FpuOp::kCvtSWu || op == FpuOp::kMvWX;
}

bool op_uses_rm(FpuOp op) {
  switch (op) {
    case FpuOp::kAdd:
    case FpuOp::kSub:
    case FpuOp::kMul:
    case FpuOp::kMadd:
    case FpuOp::kMsub:
    case FpuOp::kNmsub:
    case FpuOp::kNmadd:
    case FpuOp::kCvtWS:
    case FpuOp::kCvtWuS:
    case FpuOp::kCvtSW:
    case FpuOp::kCvtSWu:
    case FpuOp::kDiv:
    case FpuOp::kSqrt:
      return true;
    default:
      return false;
  }
}

fp::Result reference(FpuOp op, unsigned rm, uint32_t a, uint32_t b, uint32_t c) {
  switch (op) {
    case FpuOp::kAdd:
      return fp::add(a, b, rm);
    case FpuOp::kSub:
      return fp::sub(a, b, rm);
    case FpuOp::kMul:
      return fp::mul(a, b, rm);
    case FpuOp::kMadd:
      return fp::madd(a, b, c, rm);
    case FpuOp::kMsub:
      return fp::msub(a, b, c, rm);
    case FpuOp::kNmsub:
      return fp::nmsub(a, b, c, rm);
    case FpuOp::kNmadd:
      return fp::nmadd(a, b, c, rm);
    case FpuOp::kSgnj:
      return {fp::sgnj(a, b), 0};
    case FpuOp::kSgnjn:
      return {fp::sgnjn(a, b), 0};
    case FpuOp::kSgnjx:
      return {fp::sgnjx(a, b), 0};
    case FpuOp::kMin:
      return fp::min(a, b);
    case FpuOp::kMax:
      return fp::max(a, b);
    case FpuOp::kCvtWS:
      return fp::cvt_w_s(a, rm);
    case FpuOp::kCvtWuS:
      return fp::cvt_wu_s(a, rm);
    case FpuOp::kCvtSW:
      return fp::cvt_s_w(a, rm);
    case FpuOp::kCvtSWu:
      return fp::cvt_s_wu(a, rm);
    case FpuOp::kMvXW:
    case FpuOp::kMvWX:
      return {a, 0};
    case FpuOp::kEq:
      return fp::eq(a, b);
    case FpuOp::kLt:
      return fp::lt(a, b);
    case FpuOp::kLe:
      return fp::le(a, b);
    case FpuOp::kClass:
      return {fp::fclass(a), 0};
    case FpuOp::kDiv:
      return fp::div(a, b, rm);
    case FpuOp::kSqrt:
      return fp::sqrt(a, rm);
  }
  return {0, 0};
}

}  // namespace tessera::fpu_test
