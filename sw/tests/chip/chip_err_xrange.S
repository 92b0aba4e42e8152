/* Exchange access fault (cause 28) for a range only partly inside SRAM: tile 1 receives 4 words
 * at MEM-8 (the last two words of SRAM and two beyond). Nothing may be written: the check is made
 * when the instruction is read, before any transfer. value = the range's start address (the
 * instruction's address operand). */
#include "chip_expect.h"
#define BAD_TILE 1
#define BAD_ADDR (TESS_TILE_MEM_BYTES - 8)
CHIP_EXPECT(BAD_TILE, TESS_EXCHANGE_CONTEXT, TESS_CAUSE_XCHG_ACCESS, bad_pc, BAD_ADDR)
#include "chip_err_sync.inc"
prog_bad:
bad_pc:
  .word X_RECV(4), BAD_ADDR
  .word X_END
