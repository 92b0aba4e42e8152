/* The graph runtime's supervisor: interprets the tile's control program (tessera/control.h,
 * docs/compiler.md "Control programs"), whose address the compiler stored at __tess_image_end.
 * Workers run vertex lists (tess_graph_run_list). A malformed program traps (EBREAK) at the
 * interpreter, so the host sees which tile went wrong instead of a silent wrong result. */
#include <stdint.h>

#include "tessera/control.h"
#include "tessera/tile.h"

extern uint32_t __tess_image_end[];
extern void _tess_graph_worker_entry(void);

typedef void (*tess_vertex_fn)(void* state);

/* Run one worker's vertex list in order (entered from _tess_graph_worker_entry). */
void tess_graph_run_list(const uint32_t* list) {
  uint32_t n = list[0];
  const tess_vertex_call* calls = (const tess_vertex_call*)(list + 1);
  for (uint32_t i = 0; i < n; ++i) {
    ((tess_vertex_fn)(uintptr_t)calls[i].entry)((void*)(uintptr_t)calls[i].state);
  }
}

/* The supervisor copies alone (one issue a round): eight words a loop trip, about 2.4
 * instructions a word instead of 5. */
static void copy_words(uint32_t* dst, const uint32_t* src, uint32_t n) {
  const uint32_t* const end8 = src + (n & ~7u);
  while (src != end8) {
    const uint32_t w0 = src[0], w1 = src[1], w2 = src[2], w3 = src[3];
    const uint32_t w4 = src[4], w5 = src[5], w6 = src[6], w7 = src[7];
    dst[0] = w0, dst[1] = w1, dst[2] = w2, dst[3] = w3;
    dst[4] = w4, dst[5] = w5, dst[6] = w6, dst[7] = w7;
    src += 8, dst += 8;
  }
  for (uint32_t i = 0; i < (n & 7u); ++i) dst[i] = src[i];
}

#define WORD_PTR(x) ((uint32_t*)(uintptr_t)(x))

int tess_graph_main(void) {
  /* The first word after the image holds the address of this tile's control program. */
  const uint32_t* pc = (const uint32_t*)(uintptr_t)__tess_image_end[0];
  for (;;) {
    switch (pc[0]) {
      case TESS_CP_END:
        return 0;
      case TESS_CP_EXEC:
        for (uint32_t w = 1; w <= TESSERA_NUM_WORKERS; ++w) {
          if (pc[w] != 0) {
            tessera_mmio_write(TESS_MMIO_RUN_ARG, pc[w]);
            tessera_mmio_write(TESS_MMIO_RUN_BASE + 4u * (w - 1u),
                               (uint32_t)(uintptr_t)&_tess_graph_worker_entry);
          }
        }
        /* The supervisor's own list: its issue slots would otherwise be lost in WAIT. */
        if (pc[TESS_CP_OPERANDS_EXEC] != 0)
          tess_graph_run_list(WORD_PTR(pc[TESS_CP_OPERANDS_EXEC]));
        tessera_wait_workers();
        pc += 1 + TESS_CP_OPERANDS_EXEC;
        break;
      case TESS_CP_SYNC:
        tessera_set_exchange(WORD_PTR(pc[2]));
        tessera_sync_raw(pc[1]);
        pc += 1 + TESS_CP_OPERANDS_SYNC;
        break;
      case TESS_CP_COPY:
        copy_words(WORD_PTR(pc[1]), WORD_PTR(pc[2]), pc[3]);
        pc += 1 + TESS_CP_OPERANDS_COPY;
        break;
      case TESS_CP_SET:
        *WORD_PTR(pc[1]) = pc[2];
        pc += 1 + TESS_CP_OPERANDS_SET;
        break;
      case TESS_CP_LOOP:
        if (--*WORD_PTR(pc[1]) != 0) {
          pc = WORD_PTR(pc[2]);
        } else {
          pc += 1 + TESS_CP_OPERANDS_LOOP;
        }
        break;
      case TESS_CP_JUMPZ:
        if (*WORD_PTR(pc[1]) == 0) {
          pc = WORD_PTR(pc[2]);
        } else {
          pc += 1 + TESS_CP_OPERANDS_JUMPZ;
        }
        break;
      case TESS_CP_JUMP:
        pc = WORD_PTR(pc[1]);
        break;
      default:
        __asm__ volatile("ebreak");
        break;
    }
  }
}
