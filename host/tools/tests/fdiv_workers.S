# The supervisor starts workers 1..5 on an fdiv.s loop, waits for them, checks their results
# and prints "ok": exercises RUN/WAIT/DONE, long ops and the console end to end.
  .globl _start
_start:
  lui t0, 0x80000
  la t1, worker
  li t2, 1
  sw t2, 0x10(t0)          # RUN_ARG
  sw t1, 0x20(t0)          # RUN 1..5
  sw t1, 0x24(t0)
  sw t1, 0x28(t0)
  sw t1, 0x2c(t0)
  sw t1, 0x30(t0)
  sw zero, 8(t0)           # WAIT
  la t1, results
  li t3, 5
check:
  lw t2, 0(t1)
  li t4, 0x3eaaaaab        # 1.0f / 3.0f
  bne t2, t4, fail
  addi t1, t1, 4
  addi t3, t3, -1
  bnez t3, check
  li a0, 'o'
  sw a0, 4(t0)
  li a0, 'k'
  sw a0, 4(t0)
  li a0, '\n'
  sw a0, 4(t0)
  sw zero, 0(t0)
fail:
  li a0, 1
  sw a0, 0(t0)

worker:
  csrr t1, 0xcc1           # context id
  fcvt.s.w f0, a0          # 1.0 (a0 = RUN_ARG)
  li t2, 3
  fcvt.s.w f1, t2
  li t3, 10
1:
  fdiv.s f2, f0, f1
  addi t3, t3, -1
  bnez t3, 1b
  la t4, results - 4
  slli t1, t1, 2
  add t4, t4, t1
  fsw f2, 0(t4)
  lui t0, 0x80000
  sw zero, 0xc(t0)         # DONE

  .data
  .p2align 2
results:
  .zero 20
