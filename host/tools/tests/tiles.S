# Multi-tile check for tessera-run: every tile prints its id digit, stops at host sync 3, then
# exits with 10 * its id (so tile 0 exits 0 and the first nonzero code is tile 1's, 10).
  .text
  .globl _start
_start:
  lui t0, 0x80000
  csrr a1, 0xcc0          # tile id
  addi a2, a1, '0'
  sw a2, 4(t0)            # CONSOLE
  addi a3, zero, '\n'
  sw a3, 4(t0)
  lui a0, 0x80000
  addi a0, a0, 3
  sw a0, 0x44(t0)         # SYNC: host sync 3
  addi a4, zero, 10
  mul a4, a4, a1
  sw a4, 0(t0)            # EXIT
