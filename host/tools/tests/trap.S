# An illegal instruction (all ones) at pc 8.
  .globl _start
_start:
  nop
  nop
  .word 0xffffffff
