/* Expected chip error of an error program (sw/tests/chip/chip_err_*.S), for the host harness.
 *
 * CHIP_EXPECT(tile, context, cause, pc, value) puts, at the global symbol `tess_expect` in section
 * .tess.expect: the magic words "TESS" "CHIP", then cause, pc, value, context, tile -- the trap
 * block of sw/tests/traps/trap_test.h plus the tile. The same ELF runs on every tile, so a label
 * gives the pc on any tile. Context 6 (EXCHANGE_CONTEXT) is the exchange engine. A program whose
 * error does not happen exits with NO_ERROR_EXIT. */
/* Assembler macros: clang-format would break them (".section.tess", "8889 :"). */
/* clang-format off */
#ifndef TESSERA_CHIP_EXPECT_H
#define TESSERA_CHIP_EXPECT_H

#include "tessera/chip_params.h"

#define NO_ERROR_EXIT 0x7e
/* "TESS" "CHIP" as little-endian words. */
#define CHIP_EXPECT_MAGIC0 0x53534554
#define CHIP_EXPECT_MAGIC1 0x50494843

#define CHIP_EXPECT(tile, context, cause, pc, value) \
  .section .tess.expect, "a";                        \
  .globl tess_expect;                                \
  .p2align 2;                                        \
  tess_expect:                                       \
  .word CHIP_EXPECT_MAGIC0, CHIP_EXPECT_MAGIC1;      \
  .word cause, pc, value, context, tile;             \
  .text

/* Exchange instruction words (docs/chip.md) for .word directives. */
#define X_END 0
#define X_DELAY(n) ((TESS_XOP_DELAY << TESS_XCHG_OP_LSB) | (n))
#define X_SEND(n) ((TESS_XOP_SEND << TESS_XCHG_OP_LSB) | (n))
#define X_RECV(n) ((TESS_XOP_RECV << TESS_XCHG_OP_LSB) | (n))

/* Exit with NO_ERROR_EXIT (reached only when the expected error did not stop the chip). */
#define NO_ERROR              \
  li a0, NO_ERROR_EXIT;       \
  li t0, TESS_MMIO_EXIT;      \
  sw a0, 0(t0);               \
  8889:                       \
  j 8889b;

#endif
/* clang-format on */
