/* The matrix unit's traps on a tile with the unit (docs/tile.md, "Matrix unit", "Exceptions"),
 * in the usual order: an illegal word (cause 2, value = the bits), then an address not 16-byte
 * aligned (cause 4 for AMP.LW/AMP.S/AMP.H/AMP.LA, 6 for AMP.SA), then 16 bytes not wholly inside
 * SRAM, the MMIO page included (cause 5 / 7); value = the address (rs1 plus the row times the
 * context's stride). A row past the context's limit is skipped and cannot trap. TRAP_AMP_KIND
 * (0..18) picks one. */
/* clang-format off */
#include "trap_test.h"
#include "tessera/amp.h"

#define A0 10
#define AMP_WORD(f3, f7, rd, rs1) \
  (TESS_AMP_OPCODE | (f3) << 12 | (rd) << 7 | (rs1) << 15 | (f7) << 25)

#if TRAP_AMP_KIND == 0
/* AMP.S at an address 8 bytes past a 16-byte boundary: load misaligned. */
#define ADDR 0x108
#define TRAP_INSN AMP_S(a0, a0, 0, 1)
#define TRAP_CAUSE TESS_CAUSE_LOAD_MISALIGNED
#define TRAP_VALUE ADDR
#elif TRAP_AMP_KIND == 1
/* AMP.SA 4 bytes past a boundary: store misaligned. */
#define ADDR 0x104
#define TRAP_INSN AMP_SA(a0, a0, 2, 1)
#define TRAP_CAUSE TESS_CAUSE_STORE_MISALIGNED
#define TRAP_VALUE ADDR
#elif TRAP_AMP_KIND == 2
/* AMP.LW of the 16 bytes just past the end of SRAM: load access fault. */
#define ADDR TESS_TILE_MEM_BYTES
#define TRAP_INSN AMP_LW(a0, a0, 1, 3)
#define TRAP_CAUSE TESS_CAUSE_LOAD_ACCESS
#define TRAP_VALUE ADDR
#elif TRAP_AMP_KIND == 3
/* AMP.LA from the MMIO page (the unit never accesses MMIO): load access fault. */
#define ADDR TESS_MMIO_BASE
#define TRAP_INSN AMP_LA(a0, a0, 0)
#define TRAP_CAUSE TESS_CAUSE_LOAD_ACCESS
#define TRAP_VALUE ADDR
#elif TRAP_AMP_KIND == 4
/* AMP.SA to the MMIO page: store access fault (nothing reaches EXIT or CONSOLE). */
#define ADDR TESS_MMIO_BASE
#define TRAP_INSN AMP_SA(x0, a0, 0, 0)
#define TRAP_CAUSE TESS_CAUSE_STORE_ACCESS
#define TRAP_VALUE ADDR
#elif TRAP_AMP_KIND == 5
/* A misaligned address outside SRAM: the alignment is checked first. */
#define ADDR (TESS_MMIO_BASE + 4)
#define TRAP_INSN AMP_S(a0, a0, 1, 0)
#define TRAP_CAUSE TESS_CAUSE_LOAD_MISALIGNED
#define TRAP_VALUE ADDR
#elif TRAP_AMP_KIND == 6
/* AMP.H (fp16 inputs) 4 bytes past a boundary: load misaligned. */
#define ADDR 0x104
#define TRAP_INSN AMP_H(a0, a0, 1, 2)
#define TRAP_CAUSE TESS_CAUSE_LOAD_MISALIGNED
#define TRAP_VALUE ADDR
#elif TRAP_AMP_KIND == 7
/* AMP.LW with the clear bit, which only AMP.SA has: illegal. */
#define ADDR 0x100
#define TRAP_INSN .insn r TESS_AMP_OPCODE, TESS_AMP_F3_LW, TESSERA_AMP_FUNCT7(1, 0, 0, 0), a0, a0, x0
#define TRAP_CAUSE TESS_CAUSE_ILLEGAL_INSN
#define TRAP_VALUE AMP_WORD(TESS_AMP_F3_LW, TESSERA_AMP_FUNCT7(1, 0, 0, 0), A0, A0)
#elif TRAP_AMP_KIND == 8
/* AMP.RD with rs1 != 0: illegal. */
#define ADDR 0x100
#define TRAP_INSN .insn r TESS_AMP_OPCODE, TESS_AMP_F3_RD, 0, f1, a0, x0
#define TRAP_CAUSE TESS_CAUSE_ILLEGAL_INSN
#define TRAP_VALUE AMP_WORD(TESS_AMP_F3_RD, 0, 1, A0)
#elif TRAP_AMP_KIND == 10
/* AMP.H of the 16 bytes just past the end of SRAM: load access fault. */
#define ADDR TESS_TILE_MEM_BYTES
#define TRAP_INSN AMP_H(a0, a0, 0, 3)
#define TRAP_CAUSE TESS_CAUSE_LOAD_ACCESS
#define TRAP_VALUE ADDR
#elif TRAP_AMP_KIND == 11
/* AMP.H from the MMIO page: load access fault. */
#define ADDR TESS_MMIO_BASE
#define TRAP_INSN AMP_H(x0, a0, 1, 0)
#define TRAP_CAUSE TESS_CAUSE_LOAD_ACCESS
#define TRAP_VALUE ADDR
#elif TRAP_AMP_KIND == 12
/* A reserved conversion (funct3 111, cvt 111): illegal. */
#define ADDR 0x100
#define TRAP_INSN .insn r TESS_AMP_OPCODE, TESS_AMP_F3_CVT, 7, a0, a0, a0
#define TRAP_CAUSE TESS_CAUSE_ILLEGAL_INSN
#define TRAP_VALUE (AMP_WORD(TESS_AMP_F3_CVT, 7, A0, A0) | A0 << 20)
#elif TRAP_AMP_KIND == 13
/* AMP.SEED with rd != 0: illegal. */
#define ADDR 0x100
#define TRAP_INSN .insn r TESS_AMP_OPCODE, TESS_AMP_F3_CVT, TESS_AMP_CVT_SEED, a0, a0, x0
#define TRAP_CAUSE TESS_CAUSE_ILLEGAL_INSN
#define TRAP_VALUE AMP_WORD(TESS_AMP_F3_CVT, TESS_AMP_CVT_SEED, A0, A0)
#elif TRAP_AMP_KIND == 14
/* AMP.LW of row 4 (r[2] set): a weight row is 0..3, illegal. */
#define ADDR 0x100
#define TRAP_INSN .insn r TESS_AMP_OPCODE, TESS_AMP_F3_LW, TESSERA_AMP_FUNCT7(0, 0, 0, 4), a0, a0, x0
#define TRAP_CAUSE TESS_CAUSE_ILLEGAL_INSN
#define TRAP_VALUE AMP_WORD(TESS_AMP_F3_LW, TESSERA_AMP_FUNCT7(0, 0, 0, 4), A0, A0)
#elif TRAP_AMP_KIND == 15
/* AMP.S of row 3 with an input stride of 8: rs1 + 24 is misaligned, and that is the value. */
#define ADDR 0x100
#define TRAP_SETUP li a1, 8; AMP_STRIDE(a1, x0)
#define TRAP_INSN AMP_S(a0, a0, 0, 3)
#define TRAP_CAUSE TESS_CAUSE_LOAD_MISALIGNED
#define TRAP_VALUE (ADDR + 24)
#elif TRAP_AMP_KIND == 16
/* AMP.SA of row 7 with an accumulator stride of 0x10000000: rs1 + 0x70000000 lies outside SRAM
 * (store access fault; an input stride does not move it). */
#define ADDR 0x100
#define TRAP_SETUP li a1, 0x10000000; AMP_STRIDE(x0, a1)
#define TRAP_INSN AMP_SA(a0, a0, 7, 1)
#define TRAP_CAUSE TESS_CAUSE_STORE_ACCESS
#define TRAP_VALUE (ADDR + 0x70000000)
#elif TRAP_AMP_KIND == 17
/* With the row limit 2, AMP.SA of row 5 at a misaligned address is skipped (no trap) but still
 * steps its pointer: the AMP.LA of row 0 after it traps at rs1 + 16. */
#define ADDR 0x104
#define TRAP_SETUP li a1, 2; AMP_ROWS(a1); AMP_SA(a0, a0, 5, 1)
#define TRAP_INSN AMP_LA(a0, a0, 0)
#define TRAP_CAUSE TESS_CAUSE_LOAD_MISALIGNED
#define TRAP_VALUE (ADDR + 16)
#elif TRAP_AMP_KIND == 18
/* AMP.ROWS with rs2 != 0: illegal. */
#define ADDR 0x100
#define TRAP_INSN .insn r TESS_AMP_OPCODE, TESS_AMP_F3_CVT, TESS_AMP_CVT_ROWS, x0, a0, a0
#define TRAP_CAUSE TESS_CAUSE_ILLEGAL_INSN
#define TRAP_VALUE (AMP_WORD(TESS_AMP_F3_CVT, TESS_AMP_CVT_ROWS, 0, A0) | A0 << 20)
#else
/* A custom-1 word: reserved, illegal with the unit too. */
#define ADDR 0x100
#define TRAP_INSN .insn r TESS_AMP_RESERVED_OPCODE, 0, 0, x0, x0, x0
#define TRAP_CAUSE TESS_CAUSE_ILLEGAL_INSN
#define TRAP_VALUE TESS_AMP_RESERVED_OPCODE
#endif

TRAP_EXPECT(TRAP_CAUSE, trap_pc, TRAP_VALUE)
#ifndef TRAP_SETUP
#define TRAP_SETUP
#endif

TRAP_BEGIN
  li a0, ADDR
  TRAP_SETUP
trap_pc:
  TRAP_INSN
TRAP_END
/* clang-format on */
