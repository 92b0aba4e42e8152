/* Device-side interface of a tessera tile for C and C++ programs (docs/tile.md, docs/chip.md).
 * MMIO accessors, console output, worker control, ids and counters, syncs and the exchange program
 * register (exchange programs themselves: tessera/exchange.h). Everything here is either an
 * inline wrapper of one instruction or a small routine in sw/runtime/runtime.c. */
#ifndef TESSERA_TILE_H
#define TESSERA_TILE_H

#include <stdint.h>

#include "tessera/chip_params.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Stringify helper for CSR numbers in inline assembly. */
#define TESSERA_STR_(x) #x
/** Expand and stringify a macro (CSR numbers from chip_params.h). */
#define TESSERA_STR(x) TESSERA_STR_(x)

/** Read a CSR by number (a compile-time constant). */
#define TESSERA_CSR_READ(num)                                          \
  ({                                                                   \
    uint32_t tessera_csr_v_;                                           \
    __asm__ volatile("csrr %0, %1" : "=r"(tessera_csr_v_) : "i"(num)); \
    tessera_csr_v_;                                                    \
  })

/** Write one word to an MMIO register. */
static inline void tessera_mmio_write(uint32_t addr, uint32_t value) {
  *(volatile uint32_t*)(uintptr_t)addr = value;
}

/** Read one word from an MMIO register. */
static inline uint32_t tessera_mmio_read(uint32_t addr) {
  return *(volatile uint32_t*)(uintptr_t)addr;
}

/** Halt the tile with an exit code (0 = success); any context may call it. */
static inline __attribute__((noreturn)) void tessera_exit(uint32_t code) {
  tessera_mmio_write(TESS_MMIO_EXIT, code);
  for (;;) {
  }
}

/** Append one byte to the tile console. */
static inline void tessera_putc(char c) {
  tessera_mmio_write(TESS_MMIO_CONSOLE, (uint8_t)c);
}

/** Write a NUL-terminated string to the console. */
void tessera_puts(const char* s);
/** Write a signed decimal integer to the console. */
void tessera_print_int(int32_t v);
/** Write an unsigned decimal integer to the console. */
void tessera_print_uint(uint32_t v);
/** Write "0x" and 8 hex digits to the console. */
void tessera_print_hex(uint32_t v);

/** This tile's index in the chip. */
static inline uint32_t tessera_tile_id(void) {
  return TESSERA_CSR_READ(TESS_CSR_TILE_ID);
}
/** The calling context: 0 = supervisor, 1..5 = workers. */
static inline uint32_t tessera_context_id(void) {
  return TESSERA_CSR_READ(TESS_CSR_CONTEXT_ID);
}
/** Number of tiles in the chip. */
static inline uint32_t tessera_num_tiles(void) {
  return TESSERA_CSR_READ(TESS_CSR_NUM_TILES);
}
/** Tile memory size in bytes. */
static inline uint32_t tessera_mem_bytes(void) {
  return TESSERA_CSR_READ(TESS_CSR_MEM_BYTES);
}

/** Low 32 bits of the tile cycle counter at this instruction's issue cycle. */
static inline uint32_t tessera_cycle(void) {
  return TESSERA_CSR_READ(0xC00);
}
/** Instructions this context retired before this one (low 32 bits). */
static inline uint32_t tessera_instret(void) {
  return TESSERA_CSR_READ(0xC02);
}
/** Full 64-bit tile cycle counter (re-reads the high half if the low half wrapped). */
uint64_t tessera_cycle64(void);
/** Full 64-bit count of instructions this context retired. */
uint64_t tessera_instret64(void);

/** Contexts of the tile the program is built for: TESS_NUM_CONTEXTS, or a reduced configuration's
 *  (tessera_add_program CONTEXTS defines it: the iCE40 board's programs have
 *  TESS_ICE40_NUM_CONTEXTS). */
#ifndef TESSERA_CONTEXTS
#define TESSERA_CONTEXTS TESS_NUM_CONTEXTS
#endif
/** Number of worker contexts (1..5); the supervisor is context 0. */
#define TESSERA_NUM_WORKERS (TESSERA_CONTEXTS - 1u)

/** Worker entry function: runs on its own stack; returning makes the worker idle (DONE). */
typedef void (*tessera_worker_fn)(void* arg);

/** Start worker w (1..TESSERA_NUM_WORKERS) on fn(arg) (supervisor only; the worker must be idle,
 *  else it traps). */
void tessera_run_worker(uint32_t w, tessera_worker_fn fn, void* arg);

/** Compiler barrier: memory accesses are not moved across it (another agent — a worker, the
 * exchange engine, the host — reads or writes memory at this point). */
#define TESSERA_MEMORY_BARRIER() __asm__ volatile("" ::: "memory")

/** Block the supervisor until every worker is idle; the workers' stores are visible after it. */
static inline void tessera_wait_workers(void) {
  TESSERA_MEMORY_BARRIER();
  tessera_mmio_write(TESS_MMIO_WAIT, 0);
  TESSERA_MEMORY_BARRIER();
}

/** Bit w set while worker w is running. */
static inline uint32_t tessera_workers_running(void) {
  return tessera_mmio_read(TESS_MMIO_WORKERS);
}

/** Mark the calling worker idle now, without returning from its function (workers only). */
static inline __attribute__((noreturn)) void tessera_worker_done(void) {
  tessera_mmio_write(TESS_MMIO_DONE, 0);
  for (;;) {
  }
}

/* ---- Chip: syncs and exchange (docs/chip.md) ---- */

/** Name the exchange program (word array in this tile's memory) to run after the next sync;
 * NULL = none. Supervisor only. The register is cleared at each release, so name it every time. */
static inline void tessera_set_exchange(const uint32_t* prog) {
  TESSERA_MEMORY_BARRIER();
  tessera_mmio_write(TESS_MMIO_XCHG_PROG, (uint32_t)(uintptr_t)prog);
}

/** Arrive at a sync with a raw descriptor, without waiting for workers first (supervisor only;
 * a running worker makes it trap, cause 24). Returns when this tile's exchange has finished. */
static inline void tessera_sync_raw(uint32_t descriptor) {
  TESSERA_MEMORY_BARRIER();
  tessera_mmio_write(TESS_MMIO_SYNC, descriptor);
  TESSERA_MEMORY_BARRIER();
}

/** Wait for every worker, then arrive at internal sync `id` (16 bits) and run the exchange program
 * named by tessera_set_exchange; returns when this tile's exchange has finished. */
static inline void tessera_sync(uint32_t id) {
  tessera_wait_workers();
  tessera_sync_raw(id & 0xffffu);
}

/** Wait for every worker, then arrive at host sync `n` (16 bits): the chip stops, the host reads
 * and writes tile memory, then releases; the exchange program (if named) runs after the release. */
static inline void tessera_host_sync(uint32_t n) {
  tessera_wait_workers();
  tessera_sync_raw(TESS_SYNC_HOST_BIT | (n & 0xffffu));
}

#ifdef __cplusplus
}
/* -ffreestanding makes main an ordinary (mangled) C++ function; crt0 calls the C symbol "main". */
extern "C" int main();
extern "C" {
#endif

/* Codelets (vertices of compiled graphs) are declared with TESSERA_VERTEX in tessera/vertex.hpp. */

#ifdef __cplusplus
}
#endif

#endif
