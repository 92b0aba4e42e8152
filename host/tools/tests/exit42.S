# Prints "hi\n" on the console and exits with 42.
  .globl _start
_start:
  lui t0, 0x80000
  li a0, 'h'
  sw a0, 4(t0)
  li a0, 'i'
  sw a0, 4(t0)
  li a0, 10
  sw a0, 4(t0)
  li a0, 42
  sw a0, 0(t0)
