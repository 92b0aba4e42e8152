/* Every register reads 0 after a reset (docs/tile.md), after power-on and after CTRL.RESET alike.
 * Check 1: the supervisor's registers that crt0 and the call to main leave untouched. Check 2:
 * every register of worker 1 but a0 (RUN_ARG) when it starts. Then the program leaves the
 * supervisor's checked registers and most of the worker's non-zero, so that a second run after a
 * reset passes only if the reset cleared them: rtl/tests/icarus/run-ice40.sh runs every program
 * twice with CTRL.RESET between (the iCE40 register files are cleared by a sequencer after each
 * reset, not by reset flops). */
#include "isa_test.h"

TEST_BEGIN
  /* crt0 writes sp, t0, t1, s0, s1, a0, a1 and ra before main; gp is checked before the check
   * macros use it as the check number, t5 and t6 before they use them as scratch. */
  or    a0, gp, tp
  or    a0, a0, t2
  or    a0, a0, s2
  or    a0, a0, s3
  or    a0, a0, s4
  or    a0, a0, s5
  or    a0, a0, s6
  or    a0, a0, s7
  or    a0, a0, s8
  or    a0, a0, s9
  or    a0, a0, s10
  or    a0, a0, s11
  or    a0, a0, a2
  or    a0, a0, a3
  or    a0, a0, a4
  or    a0, a0, a5
  or    a0, a0, a6
  or    a0, a0, a7
  or    a0, a0, t3
  or    a0, a0, t4
  or    a0, a0, t5
  or    a0, a0, t6
  li    gp, 1
  CHECK_EQ(a0, 0)

  /* Worker 1 ORs its registers into worker_or (-1 until it has run) and writes DONE. */
  li    gp, 2
  la    t0, worker_or
  li    t1, -1
  sw    t1, 0(t0)
  la    t0, worker
  li    t1, TESS_MMIO_RUN_BASE
  sw    t0, 0(t1)
  li    t1, TESS_MMIO_WAIT
  sw    zero, 0(t1)
  la    t0, worker_or
  lw    a0, 0(t0)
  CHECK_EQ(a0, 0)

  /* Leave the checked registers non-zero for a run after a reset (gp, t5, t6: the macros). */
  li    tp, 0x5a5a0004
  li    t2, 0x5a5a0007
  li    s2, 0x5a5a0012
  li    s3, 0x5a5a0013
  li    s4, 0x5a5a0014
  li    s5, 0x5a5a0015
  li    s6, 0x5a5a0016
  li    s7, 0x5a5a0017
  li    s8, 0x5a5a0018
  li    s9, 0x5a5a0019
  li    s10, 0x5a5a001a
  li    s11, 0x5a5a001b
  li    a2, 0x5a5a000c
  li    a3, 0x5a5a000d
  li    a4, 0x5a5a000e
  li    a5, 0x5a5a000f
  li    a6, 0x5a5a0010
  li    a7, 0x5a5a0011
  li    t3, 0x5a5a001c
  li    t4, 0x5a5a001d
TEST_END

  .p2align 2
worker:
  or    a1, a1, ra
  or    a1, a1, sp
  or    a1, a1, gp
  or    a1, a1, tp
  or    a1, a1, t0
  or    a1, a1, t1
  or    a1, a1, t2
  or    a1, a1, s0
  or    a1, a1, s1
  or    a1, a1, a2
  or    a1, a1, a3
  or    a1, a1, a4
  or    a1, a1, a5
  or    a1, a1, a6
  or    a1, a1, a7
  or    a1, a1, s2
  or    a1, a1, s3
  or    a1, a1, s4
  or    a1, a1, s5
  or    a1, a1, s6
  or    a1, a1, s7
  or    a1, a1, s8
  or    a1, a1, s9
  or    a1, a1, s10
  or    a1, a1, s11
  or    a1, a1, t3
  or    a1, a1, t4
  or    a1, a1, t5
  or    a1, a1, t6
  la    t0, worker_or
  sw    a1, 0(t0)
  /* Non-zero for a run after a reset (a1, t0 already are or hold an address). */
  li    ra, 0x5a5a1001
  li    sp, 0x5a5a1002
  li    gp, 0x5a5a1003
  li    tp, 0x5a5a1004
  li    t1, 0x5a5a1006
  li    t2, 0x5a5a1007
  li    s0, 0x5a5a1008
  li    s1, 0x5a5a1009
  li    a2, 0x5a5a100c
  li    a3, 0x5a5a100d
  li    a4, 0x5a5a100e
  li    a5, 0x5a5a100f
  li    a6, 0x5a5a1010
  li    a7, 0x5a5a1011
  li    s2, 0x5a5a1012
  li    s11, 0x5a5a101b
  li    t3, 0x5a5a101c
  li    t6, 0x5a5a101f
  li    a1, 0x5a5a100b
  li    t0, TESS_MMIO_DONE
  sw    zero, 0(t0)
1:
  j     1b

  .data
  .p2align 2
worker_or:
  .word -1
