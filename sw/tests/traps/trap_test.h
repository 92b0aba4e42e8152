/* Trap test programs: each runs a few instructions, then one instruction that must trap.
 *
 * TRAP_EXPECT(cause, pc, value) records what the tile must report (docs/tile.md, "Halting and
 * traps") in section .tess.expect at the global symbol `tess_expect`: the magic words
 * TRAP_EXPECT_MAGIC0/1 ("TESSEXPT"), then cause, pc, value, context (0 unless given with
 * TRAP_EXPECT_CONTEXT). pc is usually a label on the trapping instruction, so the linker fills in
 * its address. The host harness looks the block up by the symbol tess_expect, checks the magic and
 * compares it with the device's TrapInfo. If the instruction does not trap,
 * the program exits with NO_TRAP_EXIT. */
/* Assembler macros: clang-format would break them (".section.tess", "8889 :"). */
/* clang-format off */
#ifndef TESSERA_TRAP_TEST_H
#define TESSERA_TRAP_TEST_H

#include "tessera/chip_params.h"

#define NO_TRAP_EXIT 0x7e
/* "TESS" "EXPT" as little-endian words. */
#define TRAP_EXPECT_MAGIC0 0x53534554
#define TRAP_EXPECT_MAGIC1 0x54505845

#define TRAP_EXPECT_CONTEXT(cause, pc, value, context) \
  .section .tess.expect, "a";                          \
  .globl tess_expect;                                  \
  .p2align 2;                                          \
  tess_expect:                                         \
  .word TRAP_EXPECT_MAGIC0, TRAP_EXPECT_MAGIC1;         \
  .word cause, pc, value, context;                     \
  .text

#define TRAP_EXPECT(cause, pc, value) TRAP_EXPECT_CONTEXT(cause, pc, value, 0)

#define TRAP_BEGIN \
  .text;           \
  .globl main;     \
  .p2align 2;      \
  main:            \
  li t0, TESS_MMIO_CONSOLE; \
  li t1, 'T';      \
  sw t1, 0(t0);

/* Reached only if nothing trapped. */
#define TRAP_END          \
  li a0, NO_TRAP_EXIT;    \
  li t0, TESS_MMIO_EXIT;  \
  sw a0, 0(t0);           \
  8889:                   \
  j 8889b;

#endif
/* clang-format on */
