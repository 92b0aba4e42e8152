/* Start-up of the graph runtime (sw/runtime/graph_main.c, docs/compiler.md). Unlike crt0.S,
 * which places the stacks at the top of the memory size the program was linked for, the graph
 * runtime is one image for every tile memory size: the stacks sit at the top of the memory the
 * tile reports (CSR TESS_CSR_MEM_BYTES), supervisor first, then workers 1..5 below it:
 *
 *   ... compiler's data | worker 5 .. worker 1 (1 KiB each) | supervisor (2 KiB) | MEM
 *
 * The host compiler reserves exactly this (TESS_GRAPH_STACK_BYTES, tessera/control.h). */
#include "tessera/chip_params.h"
#include "tessera/control.h"

  .section .text.start, "ax"
  .globl _start
  .type _start, @function
_start:
  csrr  sp, TESS_CSR_MEM_BYTES
  la    t0, __bss_start
  la    t1, __bss_end
1:
  bgeu  t0, t1, 2f
  sw    zero, 0(t0)
  addi  t0, t0, 4
  j     1b
2:
  call  tess_graph_main
  li    t0, TESS_MMIO_EXIT
  sw    a0, 0(t0)
3:
  j     3b
  .size _start, . - _start

/* Worker trampoline: a0 = vertex list (RUN_ARG). Worker w's stack top is
 * MEM - TESS_GRAPH_SUP_STACK_BYTES - (w - 1) * TESS_GRAPH_WORKER_STACK_BYTES. Runs the list, then DONE. */
  .text
  .globl _tess_graph_worker_entry
  .type _tess_graph_worker_entry, @function
  .p2align 2
_tess_graph_worker_entry:
  csrr  t0, TESS_CSR_CONTEXT_ID
  addi  t0, t0, -1
  slli  t0, t0, TESS_GRAPH_WORKER_STACK_SHIFT
  csrr  sp, TESS_CSR_MEM_BYTES
  li    t1, TESS_GRAPH_SUP_STACK_BYTES
  sub   sp, sp, t1
  sub   sp, sp, t0
  call  tess_graph_run_list
  li    t0, TESS_MMIO_DONE
  sw    zero, 0(t0)
4:
  j     4b
  .size _tess_graph_worker_entry, . - _tess_graph_worker_entry
