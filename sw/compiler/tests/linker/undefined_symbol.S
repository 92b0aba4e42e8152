/* A call to a function no object defines: linking must fail naming it. */
  .section .text.start, "ax", @progbits
  .globl _start
_start:
  call  tess_missing_function
