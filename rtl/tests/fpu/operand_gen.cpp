#include "operand_gen.hpp"

#include <algorithm>

namespace tessera::fpu_test {

uint32_t OperandGen::nudge(uint32_t x) {
  const int32_t d = static_cast<int32_t>(below(9)) - 4;
  const uint32_t mag = x & 0x7fffffffu;
  const int64_t m = std::clamp<int64_t>(static_cast<int64_t>(mag) + d, 0, 0x7f7fffff);
  return (x & 0x80000000u) | static_cast<uint32_t>(m);
}

uint32_t OperandGen::few_bits() {
  const uint32_t bits = below(6);
  const uint32_t mant = bits == 0 ? 0 : (frac() & ~((1u << (23 - bits)) - 1));
  return sign() | ((100 + below(56)) << 23) | mant;
}

uint32_t OperandGen::fp() {
  switch (below(20)) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
      return static_cast<uint32_t>(rng_());
    case 5:
      return sign();  // +-0
    case 6:
      return sign() | (below(2) ? 1u : 0x7fffffu);  // min/max subnormal
    case 7:
      return sign() | (frac() >> below(23));  // random subnormal
    case 8:
      return nudge(sign() | 0x3f800000u);  // near +-1
    case 9:
      return with_exp(126 + below(2));  // [0.5, 2)
    case 10:
      return nudge(sign() | (below(2) ? 0x7f7fffffu : 0x00800000u));  // max/min normal
    case 11:
      return sign() | 0x7f800000u;  // inf
    case 12:
      return sign() | 0x7fc00000u | (frac() >> below(23));  // qNaN
    case 13:
      return sign() | 0x7f800000u | std::max(1u, frac() >> (1 + below(22)));  // sNaN
    case 14:
      return with_exp(1 + below(3));  // just normal
    case 15:
      return with_exp(252 + below(3));  // near overflow
    case 16: {                          // integer-conversion edges: 2^31, 2^32, +-0.5, +-1.5, +-2.5
      static constexpr uint32_t kInts[] = {0x4f000000, 0x4f800000, 0x3f000000,
                                           0x3fc00000, 0x40200000, 0x4e800000};
      return nudge(sign() | kInts[below(6)]);
    }
    case 17:
      return with_exp(100 + below(60));  // magnitudes around the int range
    default:
      return few_bits();
  }
}

uint32_t OperandGen::integer() {
  switch (below(6)) {
    case 0: {
      static constexpr uint32_t kEdges[] = {0,          1,          0xffffffff, 0x7fffffff,
                                            0x80000000, 0x80000001, 0x01000001, 0xfeffffff,
                                            0x00ffffff, 0x7fffffc0};
      return kEdges[below(10)];
    }
    case 1:
      return below(2048) - 1024;
    case 2:
      return static_cast<uint32_t>(rng_()) >> below(32);  // random width
    case 3:
      return static_cast<uint32_t>(rng_()) | 0x00ffff00u;  // runs of ones
    default:
      return static_cast<uint32_t>(rng_());
  }
}

Operands OperandGen::operands(FpuOp op) {
  Operands o{fp(), fp(), fp()};
  const uint32_t pick = below(10);
  switch (op) {
    case FpuOp::kAdd:
    case FpuOp::kSub:
      if (pick < 2) {
        o.b = nudge(o.a) ^ (below(2) << 31);  // cancellation (or doubling)
      } else if (pick < 5) {
        o.a = with_exp(1 + below(254));  // exponent gaps up to 40: alignment, ties, sticky
        const int32_t e =
            static_cast<int32_t>((o.a >> 23) & 0xff) - static_cast<int32_t>(below(41));
        o.b = with_exp(static_cast<uint32_t>(std::max(e, 0)));
      } else if (pick < 6) {
        o.a = few_bits();
        o.b = few_bits();
      }
      break;
    case FpuOp::kMul:
    case FpuOp::kMadd:
    case FpuOp::kMsub:
    case FpuOp::kNmsub:
    case FpuOp::kNmadd:
    case FpuOp::kDiv: {
      const bool is_div = op == FpuOp::kDiv;
      if (pick < 2 || pick == 8) {
        // Result exponent near overflow (pick < 2) or near/below the subnormal range.
        const int32_t target =
            pick < 2 ? 250 + static_cast<int32_t>(below(9)) : -30 + static_cast<int32_t>(below(36));
        const int32_t ea = 1 + static_cast<int32_t>(below(254));
        const int32_t eb = is_div ? ea - target + 127 : target + 127 - ea;
        if (eb >= 0 && eb <= 254) {
          o.a = with_exp(static_cast<uint32_t>(ea));
          o.b = with_exp(static_cast<uint32_t>(eb));
        }
      } else if (pick < 4) {
        o.a = few_bits();
        o.b = is_div ? (few_bits() & 0x80ffffffu) | (0x3f000000u + (below(4) << 23)) : few_bits();
        if (is_div && below(2))
          o.a = fp::mul(o.b, few_bits(), fp::kRTZ).value;  // exact-ish quotients
      } else if (pick < 5 && is_div) {
        o.b = nudge(o.a);
      }
      if (op_arity(op) == 3) {
        const uint32_t cp = below(10);
        const uint32_t prod = fp::mul(o.a, o.b, below(5)).value;
        if (cp < 3) {
          o.c = nudge(prod) ^ (below(2) << 31);  // near-total cancellation
        } else if (cp < 5) {
          // c far below or far above the product: sticky and clamped alignments.
          const int32_t ep = static_cast<int32_t>((prod >> 23) & 0xff);
          const int32_t ec = std::clamp(ep + static_cast<int32_t>(below(121)) - 60, 0, 254);
          o.c = with_exp(static_cast<uint32_t>(ec));
        } else if (cp < 6) {
          o.c = few_bits();
        }
      }
      break;
    }
    case FpuOp::kSqrt:
      if (pick < 4) o.a &= 0x7fffffffu;
      if (pick == 4) {
        const uint32_t x = few_bits() & 0x7fffffffu;
        o.a = fp::mul(x, x, fp::kRNE).value;  // often a perfect square
      }
      break;
    case FpuOp::kCvtSW:
    case FpuOp::kCvtSWu:
    case FpuOp::kMvWX:
      o.a = integer();
      break;
    case FpuOp::kEq:
    case FpuOp::kLt:
    case FpuOp::kLe:
    case FpuOp::kMin:
    case FpuOp::kMax:
      if (pick < 2)
        o.b = o.a;
      else if (pick < 4)
        o.b = nudge(o.a);
      else if (pick < 5)
        o.b = o.a ^ 0x80000000u;
      break;
    default:
      break;
  }
  return o;
}

std::vector<uint32_t> OperandGen::fp_edges() {
  std::vector<uint32_t> v;
  for (uint32_t s : {0u, 0x80000000u}) {
    for (uint32_t m :
         {0x00000000u, 0x00000001u, 0x00000002u, 0x00400000u, 0x007fffffu, 0x00800000u, 0x00800001u,
          0x00ffffffu, 0x3f000000u, 0x3f7fffffu, 0x3f800000u, 0x3f800001u, 0x3fc00000u, 0x40000000u,
          0x40200000u, 0x40400000u, 0x4b800000u, 0x4b800001u, 0x4effffffu, 0x4f000000u, 0x4f7fffffu,
          0x4f800000u, 0x7effffffu, 0x7f000000u, 0x7f7fffffu, 0x7f800000u, 0x7f800001u, 0x7fa00000u,
          0x7fc00000u, 0x7fffffffu, 0x33800000u, 0x34000000u, 0x1f800000u, 0x5f800000u}) {
      v.push_back(s | m);
    }
  }
  return v;
}

std::vector<uint32_t> OperandGen::fma_edges() {
  std::vector<uint32_t> v;
  for (uint32_t s : {0u, 0x80000000u}) {
    for (uint32_t m : {0x00000000u, 0x00000001u, 0x007fffffu, 0x00800000u, 0x3f000000u, 0x3f800000u,
                       0x3f800001u, 0x3fffffffu, 0x33800000u, 0x4b800000u, 0x7f7fffffu, 0x7f800000u,
                       0x7f800001u, 0x7fc00000u, 0x1f800000u, 0x5f800000u}) {
      v.push_back(s | m);
    }
  }
  return v;
}

std::vector<uint32_t> OperandGen::int_edges() {
  std::vector<uint32_t> v = {0,          1,          2,          3,          0xffffffff, 0xfffffffe,
                             0x7fffffff, 0x7ffffffe, 0x80000000, 0x80000001, 0x00ffffff, 0x01000000,
                             0x01000001, 0x01000003, 0xfeffffff, 0xff000000, 0x7fffff80, 0x7fffffc0,
                             0x7fffff40, 0x80000040, 0x00800001, 0x55555555, 0xaaaaaaaa};
  return v;
}

}  // namespace tessera::fpu_test
