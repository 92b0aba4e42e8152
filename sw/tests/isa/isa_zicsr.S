/* Zicsr and the tile's CSRs: fflags/frm/fcsr read/write/set/clear (register and immediate forms,
 * old value returned, field widths), cycle/instret and their relation to the barrel schedule
 * (docs/tile.md: a lone context issues every 6 cycles, a long op takes 48, cycle c belongs to
 * context c mod 6), instreth/cycleh, the id CSRs, and a worker's own id/instret/start cycle.
 * Expected values are worked by hand from docs/tile.md. */
#include "isa_test.h"

TEST_BEGIN
  /* fflags: 5 bits */
  li gp, 1
  li a1, 0x1f
  csrw fflags, a1
  csrr a0, fflags
  CHECK_EQ(a0, 0x1f)
  li gp, 2
  li a1, 0xffffffff
  csrw fflags, a1
  csrr a0, fflags
  CHECK_EQ(a0, 0x1f)
  /* fcsr = frm << 5 | fflags */
  li gp, 3
  csrwi frm, 0
  csrr a0, fcsr
  CHECK_EQ(a0, 0x1f)
  /* frm: 3 bits; values 5..7 may be stored (only using them traps) */
  li gp, 4
  csrwi frm, RM_RUP
  csrr a0, frm
  CHECK_EQ(a0, 3)
  li gp, 5
  csrr a0, fcsr
  CHECK_EQ(a0, 0x7f)
  li gp, 6
  li a1, 0xffffffff
  csrw frm, a1
  csrr a0, frm
  CHECK_EQ(a0, 7)
  /* fcsr: upper bits read 0 and ignore writes */
  li gp, 7
  li a1, 0xffffffff
  csrw fcsr, a1
  csrr a0, fcsr
  CHECK_EQ(a0, 0xff)
  li gp, 8
  li a1, 0x000000a5            /* frm = 5, fflags = 0x05 */
  csrrw a0, fcsr, a1           /* returns the old value */
  CHECK_EQ(a0, 0xff)
  li gp, 9
  csrr a0, frm
  CHECK_EQ(a0, 5)
  li gp, 10
  csrr a0, fflags
  CHECK_EQ(a0, 0x05)
  /* CSRRS / CSRRC set and clear bits and return the old value */
  li gp, 11
  li a1, 0x12
  csrrs a0, fflags, a1
  CHECK_EQ(a0, 0x05)
  li gp, 12
  csrr a0, fflags
  CHECK_EQ(a0, 0x17)
  li gp, 13
  li a1, 0x03
  csrrc a0, fflags, a1
  CHECK_EQ(a0, 0x17)
  li gp, 14
  csrr a0, fflags
  CHECK_EQ(a0, 0x14)
  /* immediate forms */
  li gp, 15
  csrrwi a0, fflags, 0x09
  CHECK_EQ(a0, 0x14)
  li gp, 16
  csrrsi a0, fflags, 0x02
  CHECK_EQ(a0, 0x09)
  li gp, 17
  csrrci a0, fflags, 0x08
  CHECK_EQ(a0, 0x0b)
  li gp, 18
  csrr a0, fflags
  CHECK_EQ(a0, 0x03)
  li gp, 19
  csrrsi a0, frm, 0x02         /* frm 5 | 2 = 7 */
  CHECK_EQ(a0, 5)
  li gp, 20
  csrrci a0, frm, 0x05         /* 7 & ~5 = 2 */
  csrr a0, frm
  CHECK_EQ(a0, 2)
  li gp, 21
  csrr a0, fcsr
  CHECK_EQ(a0, 0x43)           /* 2 << 5 | 3 */
  /* CSRRS/CSRRC with x0 and CSRRSI/CSRRCI with 0 only read */
  li gp, 22
  csrrs a0, fcsr, x0
  csrrc a1, fcsr, x0
  csrrsi a2, fcsr, 0
  csrrci a3, fcsr, 0
  CHECK_EQ(a3, 0x43)
  CHECK_REG(a0, a3)
  CHECK_REG(a1, a3)
  CHECK_REG(a2, a3)
  /* FP instructions set fflags bits seen through fcsr too */
  li gp, 23
  csrwi fcsr, 0
  FP_LOAD(f1, 0x3f800000)
  FP_LOAD(f2, 0x00000000)
  fdiv.s f3, f1, f2, rne
  csrr a0, fcsr
  CHECK_EQ(a0, FL_DZ)
  /* a write to frm is used by the very next instruction */
  li gp, 24
  FP_LOAD(f2, 0x40400000)
  csrwi frm, RM_RUP
  fdiv.s f3, f1, f2, dyn
  fmv.x.w a0, f3
  CHECK_EQ(a0, 0x3eaaaaab)
  li gp, 25
  csrwi frm, RM_RTZ
  fdiv.s f3, f1, f2, dyn
  fmv.x.w a0, f3
  CHECK_EQ(a0, 0x3eaaaaaa)
  csrwi fcsr, 0

  /* cycle: the supervisor alone issues every 6 cycles, in slots c mod 6 = 0 */
  li gp, 26
  rdcycle a0
  rdcycle a1
  sub a2, a1, a0
  CHECK_EQ(a2, 6)
  li gp, 27
  li a3, 6
  remu a2, a0, a3
  CHECK_EQ(a2, 0)
  /* three instructions between two reads: 4 issues apart */
  li gp, 28
  rdcycle a0
  nop
  nop
  nop
  rdcycle a1
  sub a2, a1, a0
  CHECK_EQ(a2, 24)
  /* a long op (DIV) occupies 8 rounds: next issue 48 cycles after it */
  li gp, 29
  li a4, 100
  li a5, 7
  rdcycle a0
  div a6, a4, a5
  rdcycle a1
  sub a2, a1, a0
  CHECK_EQ(a2, 54)
  li gp, 30
  FP_LOAD(f1, 0x40000000)
  rdcycle a0
  fsqrt.s f3, f1, rne
  rdcycle a1
  sub a2, a1, a0
  CHECK_EQ(a2, 54)
  li gp, 31
  rdcycle a0
  fdiv.s f3, f1, f1, rne
  rdcycle a1
  sub a2, a1, a0
  CHECK_EQ(a2, 54)
  /* ... independent of operands: division by zero takes the same time */
  li gp, 32
  rdcycle a0
  divu a6, a4, x0
  rdcycle a1
  sub a2, a1, a0
  CHECK_EQ(a2, 54)
  /* a 1-round op (MUL, FMADD) does not stall */
  li gp, 33
  rdcycle a0
  mul a6, a4, a5
  fmadd.s f3, f1, f1, f1, rne
  rdcycle a1
  sub a2, a1, a0
  CHECK_EQ(a2, 18)
  /* taken branches and jumps cost nothing extra */
  li gp, 34
  rdcycle a0
  j 1f
1:
  beq x0, x0, 2f
2:
  rdcycle a1
  sub a2, a1, a0
  CHECK_EQ(a2, 18)
  /* cycleh is 0 this early (< 2^32 cycles) */
  li gp, 35
  rdcycleh a0
  CHECK_EQ(a0, 0)

  /* instret: instructions this context retired before the reading one */
  li gp, 36
  rdinstret a0
  rdinstret a1
  sub a2, a1, a0
  CHECK_EQ(a2, 1)
  li gp, 37
  rdinstret a0
  div a6, a4, a5            /* a long op retires once */
  nop
  rdinstret a1
  sub a2, a1, a0
  CHECK_EQ(a2, 3)
  li gp, 38
  rdinstreth a0
  CHECK_EQ(a0, 0)
  /* instret >= a lower bound: main ran at least the checks above (> 100 instructions) */
  li gp, 39
  rdinstret a0
  sltiu a0, a0, 100
  CHECK_EQ(a0, 0)

  /* ids */
  li gp, 40
  csrr a0, TESS_CSR_CONTEXT_ID
  CHECK_EQ(a0, 0)
  li gp, 41
  csrr a0, TESS_CSR_TILE_ID
  csrr a1, TESS_CSR_NUM_TILES
  sltu a2, a0, a1           /* tile id < tile count */
  CHECK_EQ(a2, 1)
  li gp, 42
  csrr a0, TESS_CSR_MEM_BYTES
  la a1, __tess_mem_size     /* the size this program was linked for */
  CHECK_REG(a0, a1)

  /* Worker timing (docs/tile.md, "Context-state changes"): RUN issued at cycle c starts worker w
   * in its first slot at or after c + 3. The supervisor reads cycle at c - 6 (the instruction just
   * before the RUN store, c = 0 mod 6); worker w's slots are the cycles = w mod 6, so its first
   * instruction reads cycle at c + 7 (w = 1), c + 3 (w = 3) or c + 5 (w = 5): differences 13, 9
   * and 11. The worker also records its context id, its instret at its third instruction (2 on
   * the first run: every context's instret is 0 at reset) and a0 = RUN_ARG. */
  la s0, wslot
  li s1, TESS_MMIO_RUN_ARG
  li s2, TESS_MMIO_WAIT
  la s3, worker_probe
  li gp, 43
  sw s0, 0(s1)                       /* RUN_ARG = &wslot */
  li t0, TESS_MMIO_RUN_BASE          /* worker 1 */
  rdcycle s4
  sw s3, 0(t0)
  sw zero, 0(s2)                     /* WAIT */
  lw a0, 0(s0)                       /* worker's cycle */
  sub a0, a0, s4
  CHECK_EQ(a0, 13)
  li gp, 44
  lw a0, 4(s0)
  CHECK_EQ(a0, 1)                    /* context id */
  li gp, 45
  lw a0, 8(s0)
  CHECK_EQ(a0, 2)                    /* worker instret at its third instruction */
  li gp, 46
  lw a0, 12(s0)
  CHECK_REG(a0, s0)                  /* a0 = RUN_ARG */
  li gp, 47
  li t0, TESS_MMIO_RUN_BASE + 8      /* worker 3 */
  rdcycle s4
  sw s3, 0(t0)
  sw zero, 0(s2)
  lw a0, 0(s0)
  sub a0, a0, s4
  CHECK_EQ(a0, 9)
  li gp, 48
  lw a0, 4(s0)
  CHECK_EQ(a0, 3)
  li gp, 49
  li t0, TESS_MMIO_RUN_BASE + 16     /* worker 5 */
  rdcycle s4
  sw s3, 0(t0)
  sw zero, 0(s2)
  lw a0, 0(s0)
  sub a0, a0, s4
  CHECK_EQ(a0, 11)
  li gp, 50
  lw a0, 4(s0)
  CHECK_EQ(a0, 5)
  /* worker 1 again: instret keeps counting from its first run, which retired the 10 instructions
   * of worker_probe up to and including DONE (li of the DONE address is LUI + ADDI) */
  li gp, 51
  li t0, TESS_MMIO_RUN_BASE
  sw s3, 0(t0)
  sw zero, 0(s2)
  lw a0, 8(s0)
  CHECK_EQ(a0, 12)

  /* WAIT timing: the worker's first instruction is its DONE store (a0 = RUN_ARG = DONE address).
   * RUN at c: DONE issues at c + 7, the worker is idle from c + 10; WAIT issued at c + 6 lets the
   * supervisor issue again in its first slot s >= c + 12 with DONE <= s - 3: s = c + 12.
   * Supervisor reads: cycle at c - 6, next instruction after WAIT at c + 12: difference 18. */
  li gp, 52
  li t0, TESS_MMIO_DONE
  sw t0, 0(s1)                       /* RUN_ARG = DONE address */
  la s3, worker_done_now
  li t0, TESS_MMIO_RUN_BASE
  rdcycle s4
  sw s3, 0(t0)
  sw zero, 0(s2)
  rdcycle a0
  sub a0, a0, s4
  CHECK_EQ(a0, 18)
  /* WORKERS reads 0 once all are idle */
  li gp, 53
  li t0, TESS_MMIO_WORKERS
  lw a0, 0(t0)
  CHECK_EQ(a0, 0)
  /* ... and bit w while worker w runs: worker 2 spins until released through memory */
  li gp, 54
  la s5, wflag
  sw zero, 0(s5)
  sw s5, 0(s1)                       /* RUN_ARG = &wflag */
  la s3, worker_spin
  li t0, TESS_MMIO_RUN_BASE + 4      /* worker 2 */
  sw s3, 0(t0)
  li t0, TESS_MMIO_WORKERS
  lw a0, 0(t0)
  CHECK_EQ(a0, 0x4)
  li gp, 55
  li a1, 1
  sw a1, 0(s5)                       /* release the worker */
  sw zero, 0(s2)
  li t0, TESS_MMIO_WORKERS
  lw a0, 0(t0)
  CHECK_EQ(a0, 0)
TEST_END

/* Worker: record (cycle, context id, instret, a0) at RUN_ARG, then DONE. */
worker_probe:
  rdcycle t1
  csrr t2, TESS_CSR_CONTEXT_ID
  rdinstret t3
  sw t1, 0(a0)
  sw t2, 4(a0)
  sw t3, 8(a0)
  sw a0, 12(a0)
  li t1, TESS_MMIO_DONE
  sw zero, 0(t1)
1:
  j 1b

worker_done_now:
  sw zero, 0(a0)
1:
  j 1b

/* Worker: spin until the word at a0 is nonzero, then DONE. */
worker_spin:
  lw t1, 0(a0)
  beqz t1, worker_spin
  li t1, TESS_MMIO_DONE
  sw zero, 0(t1)
1:
  j 1b

  .data
  .p2align 2
wslot:
  .word 0, 0, 0, 0
wflag:
  .word 0
