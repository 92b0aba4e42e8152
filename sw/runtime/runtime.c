/* Tile runtime: console formatting, worker start, 64-bit counters, and the memory routines the
 * compiler may call (there is no C library on a tile). */
#include <stddef.h>
#include <stdint.h>

#include "tessera/tile.h"

/* Entry function of each worker, indexed by context id (entry 0 unused). Read by
 * _tess_worker_entry in crt0.S; written by the supervisor before RUN, and memory effects happen in
 * issue order, so the worker always sees the new value. */
tessera_worker_fn tess_worker_fn[TESS_NUM_CONTEXTS];

extern void _tess_worker_entry(void);

void tessera_puts(const char* s) {
  while (*s) tessera_putc(*s++);
}

void tessera_print_uint(uint32_t v) {
#if defined(__riscv_mul) && defined(__riscv_div)
  char buf[10];
  int n = 0;
  do {
    buf[n++] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v != 0);
  while (n > 0) tessera_putc(buf[--n]);
#else
  /* Built without M (-march=rv32i, the iCE40 board's tile): there is no divide instruction and
   * no library to call, so each digit counts subtractions of its power of ten (at most 9). The
   * empty asm keeps the compiler from turning the loop back into a division. */
  static const uint32_t kPow10[10] = {1000000000u, 100000000u, 10000000u, 1000000u, 100000u,
                                      10000u,      1000u,      100u,      10u,      1u};
  int started = 0;
#pragma clang loop unroll(disable)  // small: a 4 KiB tile has about 2 KiB for code
  for (int i = 0; i < 10; ++i) {
    char d = '0';
    while (v >= kPow10[i]) {
      v -= kPow10[i];
      ++d;
      __asm__ volatile("" : "+r"(v));
    }
    if (d != '0' || started || i == 9) {
      tessera_putc(d);
      started = 1;
    }
  }
#endif
}

void tessera_print_int(int32_t v) {
  if (v < 0) {
    tessera_putc('-');
    tessera_print_uint(0u - (uint32_t)v);
  } else {
    tessera_print_uint((uint32_t)v);
  }
}

void tessera_print_hex(uint32_t v) {
  tessera_putc('0');
  tessera_putc('x');
  for (int shift = 28; shift >= 0; shift -= 4) {
    uint32_t d = (v >> shift) & 0xfu;
    tessera_putc((char)(d < 10u ? '0' + d : 'a' + d - 10u));
  }
}

uint64_t tessera_cycle64(void) {
  uint32_t hi, lo, hi2;
  do {
    hi = TESSERA_CSR_READ(0xC80);
    lo = TESSERA_CSR_READ(0xC00);
    hi2 = TESSERA_CSR_READ(0xC80);
  } while (hi != hi2);
  return ((uint64_t)hi << 32) | lo;
}

uint64_t tessera_instret64(void) {
  uint32_t hi, lo, hi2;
  do {
    hi = TESSERA_CSR_READ(0xC82);
    lo = TESSERA_CSR_READ(0xC02);
    hi2 = TESSERA_CSR_READ(0xC82);
  } while (hi != hi2);
  return ((uint64_t)hi << 32) | lo;
}

void tessera_run_worker(uint32_t w, tessera_worker_fn fn, void* arg) {
  tess_worker_fn[w] = fn;
  tessera_mmio_write(TESS_MMIO_RUN_ARG, (uint32_t)(uintptr_t)arg);
  tessera_mmio_write(TESS_MMIO_RUN_BASE + 4u * (w - 1u), (uint32_t)(uintptr_t)&_tess_worker_entry);
}

void* memset(void* dst, int c, size_t n) {
  unsigned char* d = (unsigned char*)dst;
  while (n--) *d++ = (unsigned char)c;
  return dst;
}

void* memcpy(void* dst, const void* src, size_t n) {
  unsigned char* d = (unsigned char*)dst;
  const unsigned char* s = (const unsigned char*)src;
  while (n--) *d++ = *s++;
  return dst;
}

void* memmove(void* dst, const void* src, size_t n) {
  unsigned char* d = (unsigned char*)dst;
  const unsigned char* s = (const unsigned char*)src;
  if (d < s) {
    while (n--) *d++ = *s++;
  } else {
    while (n--) d[n] = s[n];
  }
  return dst;
}

int memcmp(const void* a, const void* b, size_t n) {
  const unsigned char* x = (const unsigned char*)a;
  const unsigned char* y = (const unsigned char*)b;
  for (; n; --n, ++x, ++y) {
    if (*x != *y) return *x < *y ? -1 : 1;
  }
  return 0;
}
