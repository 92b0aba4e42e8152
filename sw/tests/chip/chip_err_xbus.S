/* Bad exchange instruction (cause 27): tile 3 receives from bus 0xFFF, which is no tile (bus >= T).
 * The offending word is the RECV's second word (bus << 20 | address): value = that word, pc = the
 * RECV's address (its first word). */
#include "chip_expect.h"
#define BAD_TILE 3
CHIP_EXPECT(BAD_TILE, TESS_EXCHANGE_CONTEXT, TESS_CAUSE_XCHG_INSN, bad_pc, (0xFFF << 20) + rxbuf)
#include "chip_err_sync.inc"
prog_bad:
bad_pc:
  .word X_RECV(2), (0xFFF << 20) + rxbuf
  .word X_END
rxbuf:
  .word 0, 0
