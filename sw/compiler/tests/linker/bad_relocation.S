/* A relocation the codelet linker does not apply (R_RISCV_ADD32): linking must fail naming it. */
  .section .text.start, "ax", @progbits
  .globl _start
_start:
  .reloc ., R_RISCV_ADD32, _start
  .word 0
