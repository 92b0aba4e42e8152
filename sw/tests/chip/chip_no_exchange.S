/* One tile on a chip without exchange engines (HAS_EXCHANGE = 0: the iCE40 board's
 * configuration, docs/chip.md): two internal syncs without an exchange program release the
 * supervisor as on any chip; then a sync with XCHG_PROG set is an exchange error at its release,
 * cause 29 (CAUSE_XCHG_ABSENT), context 6, pc = value = the program's address. Built for 4 KiB as
 * chip_no_exchange_ice40.elf; rtl/tests/icarus/run-ice40.sh compares the reduced chip on Icarus
 * with the model's preset ice40 (cycles, counters, the error). On a chip with exchange engines
 * the program runs its END and exits with NO_ERROR_EXIT. */
#include "chip_expect.h"
CHIP_EXPECT(0, TESS_EXCHANGE_CONTEXT, TESS_CAUSE_XCHG_ABSENT, prog_end, prog_end)
  .text
  .globl main
  .p2align 2
main:
  li    t1, TESS_MMIO_SYNC
  li    a1, 1
  sw    a1, 0(t1)
  li    a1, 2
  sw    a1, 0(t1)
  la    a0, prog_end
  li    t2, TESS_MMIO_XCHG_PROG
  sw    a0, 0(t2)
  li    a1, 3
  sw    a1, 0(t1)
  NO_ERROR

  .data
  .p2align 2
prog_end:
  .word X_END
