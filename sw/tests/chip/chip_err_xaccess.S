/* Exchange access fault (cause 28): tile 2's program sends 4 words from the first address after
 * SRAM. Reported by the exchange engine (context 6) of tile 2, pc = the SEND's address, value =
 * the address. Tile 2's DELAY first, so the error is not on the first cycle. */
#include "chip_expect.h"
#define BAD_TILE 2
CHIP_EXPECT(BAD_TILE, TESS_EXCHANGE_CONTEXT, TESS_CAUSE_XCHG_ACCESS, bad_pc, TESS_TILE_MEM_BYTES)
#include "chip_err_sync.inc"
prog_bad:
  .word X_DELAY(1)
bad_pc:
  .word X_SEND(4), TESS_TILE_MEM_BYTES
  .word X_END
