/* Every relocation type the codelet linker applies (sw/compiler/codelet_linker.cpp), across
 * sections, forwards and backwards, with low 12 bits on both sides of 0x800 (the HI20 rounding).
 * Linked by ld.lld at build time and by the codelet linker in sw/compiler/tests/linker_test.cpp,
 * which compares the two images byte for byte. Never run: only its bytes matter. */
  .section .text.start, "ax", @progbits
  .globl _start
_start:
  call  cases_far                  /* R_RISCV_CALL */
  .reloc ., R_RISCV_CALL_PLT, cases_far
  auipc ra, 0
  jalr  ra, 0(ra)                  /* R_RISCV_CALL_PLT */
  jal   cases_far                  /* R_RISCV_JAL, forwards */
  beq   a0, a1, cases_far          /* R_RISCV_BRANCH, forwards */
  lui   a0, %hi(cases_low)         /* R_RISCV_HI20, low 12 bits < 0x800 */
  addi  a0, a0, %lo(cases_low)     /* R_RISCV_LO12_I */
  sw    a1, %lo(cases_low)(a0)     /* R_RISCV_LO12_S */
  lui   a0, %hi(cases_high)        /* R_RISCV_HI20, low 12 bits >= 0x800 */
  lw    a1, %lo(cases_high + 4)(a0) /* R_RISCV_LO12_I with an addend */
  fsw   fa0, %lo(cases_high)(a0)   /* R_RISCV_LO12_S */
1:
  auipc a2, %pcrel_hi(cases_high)  /* R_RISCV_PCREL_HI20 */
  flw   fa1, %pcrel_lo(1b)(a2)     /* R_RISCV_PCREL_LO12_I */
  fsw   fa1, %pcrel_lo(1b)(a2)     /* R_RISCV_PCREL_LO12_S */
  j     _start

  .section .text.tess_vertex_Cases, "ax", @progbits
  .globl tess_vertex_Cases
tess_vertex_Cases:
  ret

  .section .text.cases_far, "ax", @progbits
  .space 0x600
cases_far:
  bne   a0, zero, _start           /* R_RISCV_BRANCH, backwards */
  jal   zero, tess_vertex_Cases    /* R_RISCV_JAL, backwards */
2:
  auipc a3, %pcrel_hi(cases_low - 8) /* R_RISCV_PCREL_HI20, backwards, with an addend */
  addi  a3, a3, %pcrel_lo(2b)
  tail  _start                     /* R_RISCV_CALL, backwards */

  .section .rodata.cases_text, "a", @progbits
cases_text:
  .asciz "Cases"
  .byte 0

  .section .tess.codelets, "a", @progbits
  .globl tess_codelet_Cases
  .p2align 2
tess_codelet_Cases:
  .word 0x54564458, tess_vertex_Cases, 0, cases_text  /* R_RISCV_32 */

  .section .data.cases, "aw", @progbits
  .p2align 2
cases_low:
  .word cases_far + 8              /* R_RISCV_32 with an addend */
  .word cases_bss                  /* keeps .bss.cases */
  .space 0x400
cases_high:
  .word _start, 0

  .section .bss.cases, "aw", @nobits
  .p2align 4
cases_bss:
  .space 64
