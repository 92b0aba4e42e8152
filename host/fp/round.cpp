#include "round.hpp"

#include <bit>

namespace tessera::fp {
namespace {

constexpr uint32_t kSignBit = 0x80000000u;

}  // namespace

Result round_pack_outline(bool sign, uint64_t m, int e, unsigned rm) {
  return round_pack(sign, m, e, rm);
}

Result round_double(double x, unsigned rm) {
  const uint64_t bits = std::bit_cast<uint64_t>(x);
  const bool sign = bits >> 63;
  const int bexp = static_cast<int>((bits >> 52) & 0x7ff);
  if (bexp == 0) return {sign ? kSignBit : 0, 0};  // zero (callers never pass double subnormals)
  const uint64_t m = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
  return round_pack(sign, m, bexp - 1075, rm);
}

}  // namespace tessera::fp
