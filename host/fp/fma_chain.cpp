// fmaChain4 on x86-64's FMA3 unit (fma_chain.hpp). Compiled with -frounding-math; the asm
// barriers keep the arithmetic between the MXCSR accesses.
#include "fma_chain.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tessera::fp {

#if defined(__x86_64__)

const bool kHostFmaChains = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("fma") != 0;
}();

namespace {
constexpr unsigned kMxcsrRne = 0x1f80;  // every exception masked, nearest even, no DAZ or FTZ
}  // namespace

[[gnu::target("fma")]] void fmaChain4(const uint32_t* x, const uint32_t* w, unsigned n,
                                      uint32_t* acc) {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(kMxcsrRne);
  __m128 a = _mm_castsi128_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(acc)));
  asm volatile("" : "+x"(a));
  for (unsigned k = 0; k < n; ++k) {
    const __m128 xk = _mm_castsi128_ps(_mm_set1_epi32(static_cast<int>(x[k])));
    const __m128 wk =
        _mm_castsi128_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 4 * k)));
    a = _mm_fmadd_ps(xk, wk, a);
  }
  asm volatile("" : "+x"(a));
  _mm_setcsr(saved);
  // NaN lanes found on the bits (a float compare would raise DE on subnormals).
  const __m128i bits = _mm_castps_si128(a);
  const __m128i nan =
      _mm_cmpgt_epi32(_mm_and_si128(bits, _mm_set1_epi32(0x7fffffff)), _mm_set1_epi32(0x7f800000));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(acc),
                   _mm_blendv_epi8(bits, _mm_set1_epi32(0x7fc00000), nan));
}

#else

const bool kHostFmaChains = false;

void fmaChain4(const uint32_t*, const uint32_t*, unsigned, uint32_t*) {}

#endif

}  // namespace tessera::fp
