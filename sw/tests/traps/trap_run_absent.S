/* Store access fault: RUN of a worker the tile does not have (worker TESSERA_CONTEXTS, one past
 * the last) -> cause 7, value = its RUN address. Built for the default tile (six contexts: the
 * word after worker 5's RUN) and for the iCE40 board's (trap_run_absent_ice40: the RUN of
 * worker 2 of a two-context tile), where the slot of a missing worker is unmapped. */
#include "trap_test.h"
#ifndef TESSERA_CONTEXTS
#define TESSERA_CONTEXTS TESS_NUM_CONTEXTS
#endif
#define RUN_ABSENT (TESS_MMIO_RUN_BASE + 4 * (TESSERA_CONTEXTS - 1))
TRAP_EXPECT(TESS_CAUSE_STORE_ACCESS, trap_pc, RUN_ABSENT)
TRAP_BEGIN
  la a2, spin
  li a1, RUN_ABSENT
trap_pc:
  sw a2, 0(a1)
TRAP_END
spin:
  j spin
