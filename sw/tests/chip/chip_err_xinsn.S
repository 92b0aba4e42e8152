/* Bad exchange instruction (cause 27): after a DELAY, tile 1's program holds an unknown opcode
 * (5). Reported by tile 1's exchange engine (context 6), pc = the word's address, value = the word. */
#include "chip_expect.h"
#define BAD_TILE 1
#define BAD_WORD 0x50000001
CHIP_EXPECT(BAD_TILE, TESS_EXCHANGE_CONTEXT, TESS_CAUSE_XCHG_INSN, bad_pc, BAD_WORD)
#include "chip_err_sync.inc"
prog_bad:
  .word X_DELAY(3)
bad_pc:
  .word BAD_WORD
  .word X_END
