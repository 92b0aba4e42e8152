// The software binary32 operations (fp32.cpp, what the model and the RTL FPU tests use) against the
// host-FPU reference (host_fp32.cpp), bit for bit in value and flags, in all five rounding modes,
// on random operands drawn to reach every path: random bit patterns, the special values, operands
// of nearby exponents (cancellation), few-bit significands (ties and exact results), subnormals,
// and products near overflow and underflow. Each test also runs with the calling thread's MXCSR
// dirty (every flag set, round toward zero, DAZ and FTZ on): the software results must not change.
#include <gtest/gtest.h>
#include <xmmintrin.h>

#include <algorithm>
#include <bit>
#include <random>
#include <vector>

#include "fma_chain.hpp"
#include "fp32.hpp"
#include "fp32_inline.hpp"
#include "host_fp32.hpp"

namespace tessera::fp {
namespace {

constexpr uint32_t kSpecials[] = {
    0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000, 0x7fc00000,
    0xffc00001, 0x7f800001, 0xff800123, 0x00000001, 0x80000001, 0x007fffff, 0x00800000,
    0x80800000, 0x7f7fffff, 0xff7fffff, 0x33800000, 0x4b800000, 0x3f000000, 0x00400000};

class OperandGen {
 public:
  explicit OperandGen(uint64_t seed) : rng_(seed) {}
  uint32_t next() {
    const uint32_t r = static_cast<uint32_t>(rng_());
    switch (rng_() % 8) {
      case 0:
        return r;
      case 1:
        return kSpecials[rng_() % std::size(kSpecials)];
      case 2: {  // exponent near the previous operand's: cancellation, close alignment
        const int e = static_cast<int>((prev_ >> 23) & 0xff) + static_cast<int>(rng_() % 9) - 4;
        return (r & 0x807fffffu) | (static_cast<uint32_t>(std::clamp(e, 0, 254)) << 23);
      }
      case 3:
        return r & (0xff800000u | (0x7fffffu & ~((1u << (rng_() % 24)) - 1)));  // ties
      case 4:
        return r & 0x807fffffu;  // subnormal or zero
      case 5:
        return (r & 0x807fffffu) | static_cast<uint32_t>(124 + rng_() % 8) << 23;  // ~1
      case 6:
        return (r & 0x80ffffffu) | ((rng_() % 2 ? 0xf0u : 0x08u) << 23);  // big or tiny
      default:
        prev_ = r;
        return r & 0xbfffffffu;  // |x| < 2
    }
  }

 private:
  std::mt19937_64 rng_;
  uint32_t prev_ = 0x3f800000;
};

#define EXPECT_SAME(got, want, what)                               \
  do {                                                             \
    const Result g_ = (got), w_ = (want);                          \
    ASSERT_EQ(g_.value, w_.value) << what << std::hex << " value"; \
    ASSERT_EQ(g_.flags, w_.flags) << what << std::hex << " flags"; \
  } while (0)

struct OpCase {
  const char* name;
  Result (*soft)(uint32_t, uint32_t, uint32_t, unsigned);
  Result (*host)(uint32_t, uint32_t, uint32_t, unsigned);
};

const OpCase kOps[] = {
    {"add", [](uint32_t a, uint32_t b, uint32_t, unsigned rm) { return add(a, b, rm); },
     [](uint32_t a, uint32_t b, uint32_t, unsigned rm) { return host::add(a, b, rm); }},
    {"sub", [](uint32_t a, uint32_t b, uint32_t, unsigned rm) { return sub(a, b, rm); },
     [](uint32_t a, uint32_t b, uint32_t, unsigned rm) { return host::sub(a, b, rm); }},
    {"mul", [](uint32_t a, uint32_t b, uint32_t, unsigned rm) { return mul(a, b, rm); },
     [](uint32_t a, uint32_t b, uint32_t, unsigned rm) { return host::mul(a, b, rm); }},
    {"div", [](uint32_t a, uint32_t b, uint32_t, unsigned rm) { return div(a, b, rm); },
     [](uint32_t a, uint32_t b, uint32_t, unsigned rm) { return host::div(a, b, rm); }},
    {"sqrt", [](uint32_t a, uint32_t, uint32_t, unsigned rm) { return sqrt(a, rm); },
     [](uint32_t a, uint32_t, uint32_t, unsigned rm) { return host::sqrt(a, rm); }},
    {"madd", [](uint32_t a, uint32_t b, uint32_t c, unsigned rm) { return madd(a, b, c, rm); },
     [](uint32_t a, uint32_t b, uint32_t c, unsigned rm) { return host::madd(a, b, c, rm); }},
    {"msub", [](uint32_t a, uint32_t b, uint32_t c, unsigned rm) { return msub(a, b, c, rm); },
     [](uint32_t a, uint32_t b, uint32_t c, unsigned rm) { return host::msub(a, b, c, rm); }},
    {"nmsub", [](uint32_t a, uint32_t b, uint32_t c, unsigned rm) { return nmsub(a, b, c, rm); },
     [](uint32_t a, uint32_t b, uint32_t c, unsigned rm) { return host::nmsub(a, b, c, rm); }},
    {"nmadd", [](uint32_t a, uint32_t b, uint32_t c, unsigned rm) { return nmadd(a, b, c, rm); },
     [](uint32_t a, uint32_t b, uint32_t c, unsigned rm) { return host::nmadd(a, b, c, rm); }},
    {"cvt_s_w", [](uint32_t a, uint32_t, uint32_t, unsigned rm) { return cvt_s_w(a, rm); },
     [](uint32_t a, uint32_t, uint32_t, unsigned rm) { return host::cvt_s_w(a, rm); }},
    {"cvt_s_wu", [](uint32_t a, uint32_t, uint32_t, unsigned rm) { return cvt_s_wu(a, rm); },
     [](uint32_t a, uint32_t, uint32_t, unsigned rm) { return host::cvt_s_wu(a, rm); }},
};

// The FMA operand c drawn near a*b (same exponent give or take a few): the cancellation cases.
uint32_t near_product(uint32_t a, uint32_t b, uint32_t r) {
  const int e = static_cast<int>((a >> 23) & 0xff) + static_cast<int>((b >> 23) & 0xff) - 127 +
                static_cast<int>(r % 7) - 3;
  if (e <= 0 || e >= 255) return r;
  return ((r ^ a ^ b) & 0x80000000u) | (static_cast<uint32_t>(e) << 23) |
         ((a * 2654435761u) & 0x7fffffu);
}

class SoftVsHost : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    saved_ = _mm_getcsr();
    // Dirty: every flag set, every exception masked, round toward zero, DAZ and FTZ on.
    if (GetParam()) _mm_setcsr(0x1f80 | 0x3f | (3u << 13) | 0x8040);
  }
  void TearDown() override { _mm_setcsr(saved_); }
  unsigned saved_ = 0;
};

TEST_P(SoftVsHost, AllRoundedOpsAllModes) {
  OperandGen gen(GetParam() ? 99 : 7);
  std::mt19937 pick(3);
  uint64_t checked = 0;
  for (int i = 0; i < 200000; ++i) {
    const uint32_t a = gen.next(), b = gen.next();
    const uint32_t c =
        (i % 3 == 0) ? near_product(a, b, static_cast<uint32_t>(pick())) : gen.next();
    for (const OpCase& op : kOps) {
      for (unsigned rm = 0; rm <= kRMM; ++rm) {
        EXPECT_SAME(
            op.soft(a, b, c, rm), op.host(a, b, c, rm),
            op.name << "(0x" << std::hex << a << ", 0x" << b << ", 0x" << c << ") rm=" << rm);
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, uint64_t{200000} * std::size(kOps) * 5);
}

// The matrix unit's chains on the host's FMA unit (fma_chain.hpp, what the model runs AMP.S and
// AMP.H with) against the same chains of madd_inline at RNE, bit for bit, with the caller's MXCSR
// clean and dirty; the caller's MXCSR is as it was after each chain.
TEST_P(SoftVsHost, MatrixUnitChainsOnTheHostFmaUnit) {
  if (!kHostFmaChains) GTEST_SKIP() << "this host has no FMA3 unit; the model runs the soft chains";
  OperandGen gen(GetParam() ? 5 : 11);
  std::mt19937 pick(17);
  const unsigned mxcsr = _mm_getcsr();
  uint64_t nans = 0;
  for (int i = 0; i < 100000; ++i) {
    const unsigned n = (i % 2) ? 8 : 4;
    uint32_t x[8], w[32], acc[4], want[4];
    for (uint32_t& v : x) v = gen.next();
    for (uint32_t& v : w) v = gen.next();
    for (unsigned j = 0; j < 4; ++j) {
      // Often an accumulator near the first product: cancellation along the chain.
      acc[j] = (i % 3 == 0) ? near_product(x[0], w[j], static_cast<uint32_t>(pick())) : gen.next();
      uint32_t sum = acc[j];
      for (unsigned k = 0; k < n; ++k) sum = madd_inline(x[k], w[4 * k + j], sum, kRNE).value;
      want[j] = sum;
    }
    fmaChain4(x, w, n, acc);
    for (unsigned j = 0; j < 4; ++j) {
      ASSERT_EQ(acc[j], want[j]) << "chain " << i << " column " << j << " of " << n << " steps";
      nans += (want[j] & 0x7fffffffu) > 0x7f800000u;
    }
    ASSERT_EQ(_mm_getcsr(), mxcsr);
  }
  EXPECT_GT(nans, 0u);  // the canonical-NaN rule was exercised
}

// The fast path's claim (fp32_inline.hpp): when fma_fits_double() admits a, b and c, the
// double-precision product and sum are exact. Checked directly: the same double computed rounding
// toward zero and rounding up must agree. Operands at every exponent distance from -30 to 8,
// with full significands (the widest exact results) or short ones; and for full significands the
// admitted distances must be exactly [-27, 5] (so the test is tight as well as safe).
double fma_in_mode(double a, double b, double c, unsigned rc) {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(0x1f80 | (rc << 13));
  volatile double r = a * b;  // volatile: two roundings, as in fp32_inline.hpp
  r = r + c;
  _mm_setcsr(saved);
  return r;
}

TEST(FastPath, FmaAdmitsOnlyExactSums) {
  std::mt19937_64 rng(5);
  uint64_t admitted = 0;
  for (int d = -30; d <= 8; ++d) {
    for (int i = 0; i < 20000; ++i) {
      const uint32_t ea = 100 + static_cast<uint32_t>(rng() % 40);
      const uint32_t eb = 100 + static_cast<uint32_t>(rng() % 40);
      const uint32_t ec = static_cast<uint32_t>(static_cast<int>(ea + eb) - 127 + d);
      const bool full = i % 2 == 0;
      // Full significands (lowest bit set) or ones cut to a random number of leading bits.
      auto sig = [&] {
        const uint32_t m = static_cast<uint32_t>(rng() & 0x7fffff);
        return full ? (m | 1) : (m & ~((1u << (rng() % 24)) - 1));
      };
      const uint32_t a = (ea << 23) | sig();
      const uint32_t b = (eb << 23) | sig();
      const uint32_t c = (ec << 23) | sig() | static_cast<uint32_t>(rng() & 1) << 31;
      const double da = std::bit_cast<float>(a), db = std::bit_cast<float>(b);
      const double dc = std::bit_cast<float>(c);
      const bool fits = detail::fma_fits_double(a, b, c);
      if (full) {
        ASSERT_EQ(fits, d >= -27 && d <= 5) << "d=" << d;
      }
      if (!fits) continue;
      ++admitted;
      ASSERT_EQ(fma_in_mode(da, db, dc, 3), fma_in_mode(da, db, dc, 2))
          << "d=" << d << std::hex << " a=0x" << a << " b=0x" << b << " c=0x" << c;
    }
  }
  EXPECT_GT(admitted, 20000u * 33 / 2);  // every full case of d in [-27, 5] at least
}

INSTANTIATE_TEST_SUITE_P(CallerMxcsr, SoftVsHost, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Dirty" : "Clean"; });

}  // namespace
}  // namespace tessera::fp
