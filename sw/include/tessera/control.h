/* Control programs of compiled graphs (docs/compiler.md, "Control programs").
 *
 * A compiled graph runs the same device runtime on every tile (sw/runtime/graph_main.c). Its
 * supervisor interprets a control program: a word array anywhere in the tile's memory whose
 * address the compiler stores at __tess_image_end, the first word after the runtime image. Each
 * instruction is an opcode word followed by operand words; every address operand is a byte
 * address in the tile's own memory. This header is shared by the device runtime and the host
 * compiler, so the encoding is written once. */
#ifndef TESSERA_CONTROL_H
#define TESSERA_CONTROL_H

/** Stack bytes the graph runtime keeps at the top of tile memory (graph_crt0.S): the supervisor's
 * 2 KiB at the very top, then 1 KiB for each of the five workers. Codelets are leaf code with
 * small frames (the largest in sw/codelets is 208 bytes); tile memory is what the data needs. */
#define TESS_GRAPH_SUP_STACK_BYTES 2048
#define TESS_GRAPH_WORKER_STACK_SHIFT 10
#define TESS_GRAPH_WORKER_STACK_BYTES (1 << TESS_GRAPH_WORKER_STACK_SHIFT)
#define TESS_GRAPH_STACK_BYTES (TESS_GRAPH_SUP_STACK_BYTES + 5 * TESS_GRAPH_WORKER_STACK_BYTES)

#ifndef __ASSEMBLER__
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Control-program opcodes; the operand words follow the opcode word. */
enum tess_cp_op {
  /** END: the tile halts with exit code 0. */
  TESS_CP_END = 0,
  /** EXEC list1..list6: start worker w (1..5) on vertex list w (0 = none), run list 6 on the
   * supervisor itself, then wait for every worker. */
  TESS_CP_EXEC = 1,
  /** SYNC descriptor, xprog: name exchange program xprog (0 = none), arrive at the sync. */
  TESS_CP_SYNC = 2,
  /** COPY dst, src, words: copy words 32-bit words on the supervisor (on-tile copy). */
  TESS_CP_COPY = 3,
  /** SET addr, value: store value at addr (loop counters). */
  TESS_CP_SET = 4,
  /** LOOP counter, target: decrement the word at counter; jump to target if it is not 0. */
  TESS_CP_LOOP = 5,
  /** JUMPZ addr, target: jump to target if the word at addr is 0. */
  TESS_CP_JUMPZ = 6,
  /** JUMP target. */
  TESS_CP_JUMP = 7,
};

/** Operand words after each opcode (the instruction is 1 + this many words). */
#define TESS_CP_OPERANDS_END 0u
#define TESS_CP_OPERANDS_EXEC 6u
#define TESS_CP_OPERANDS_SYNC 2u
#define TESS_CP_OPERANDS_COPY 3u
#define TESS_CP_OPERANDS_SET 2u
#define TESS_CP_OPERANDS_LOOP 2u
#define TESS_CP_OPERANDS_JUMPZ 2u
#define TESS_CP_OPERANDS_JUMP 1u

/** A vertex list, run by one worker in order: count, then count (entry, state) pairs. */
typedef struct tess_vertex_call {
  uint32_t entry; /**< address of the vertex's void entry(void* state) */
  uint32_t state; /**< address of its state (fields in declaration order, 8 bytes each) */
} tess_vertex_call;

/** Magic word that starts every codelet descriptor in the .tess.codelets section. */
#define TESS_CODELET_MAGIC 0x54564458u /* "XDVT" */

/** One codelet descriptor (sw/include/tessera/vertex.hpp writes them; the host reads them).
 * text is "Name[ exclusive]\0kind type field\0...\0": the vertex name (with " exclusive" for a
 * TESSERA_EXCLUSIVE_VERTEX), then one "kind type name" string per field in state order, then an
 * empty string. */
typedef struct tess_codelet_desc {
  uint32_t magic;      /**< TESS_CODELET_MAGIC */
  uint32_t entry;      /**< address of the entry function */
  uint32_t stateBytes; /**< size of the state (8 bytes per field) */
  uint32_t text;       /**< address of the descriptor text */
} tess_codelet_desc;

#ifdef __cplusplus
}
#endif

#endif /* __ASSEMBLER__ */
#endif
