# Never halts: tessera-run --max-cycles must stop it.
  .globl _start
_start:
  j _start
