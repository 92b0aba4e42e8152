// Codelets: vertex types for compiled graphs (docs/compiler.md, "Writing a codelet").
//
// A codelet is declared once, in its source, with TESSERA_VERTEX; the macro defines the vertex's
// state struct, its entry function and a descriptor in the ELF section .tess.codelets from which
// the host graph compiler learns the vertex's name and fields. Nothing is declared twice:
//
//   TESSERA_VERTEX(Add, (Input, float, a), (Input, float, b), (Output, float, out)) {
//     for (uint32_t i = 0; i < out.size(); ++i) out[i] = a[i] + b[i];
//   }
//
// Field kinds: Input<T> (read-only region), Output<T> (written region), InOut<T> (both), Param<T>
// (a 32-bit value fixed at compile time). T is float, int32_t or uint32_t (Param only). Each field
// takes 8 bytes of state: a region is (pointer, element count), a Param is (value, 0).
#pragma once

#include <stdint.h>

#include "tessera/control.h"

namespace tessera {

/// A read-only region of tile memory connected to a tensor (pointer, element count).
template <typename T>
struct Input {
  const T* ptr;
  uint32_t count;
  /// Number of elements.
  uint32_t size() const { return count; }
  /// Element i (no bounds check: the compiler sized the region).
  const T& operator[](uint32_t i) const { return ptr[i]; }
  /// First element.
  const T* data() const { return ptr; }
  const T* begin() const { return ptr; }
  const T* end() const { return ptr + count; }
};

/// A region the vertex writes (it may also read what it wrote).
template <typename T>
struct Output {
  T* ptr;
  uint32_t count;
  uint32_t size() const { return count; }
  T& operator[](uint32_t i) const { return ptr[i]; }
  T* data() const { return ptr; }
  T* begin() const { return ptr; }
  T* end() const { return ptr + count; }
};

/// A region the vertex reads and updates in place.
template <typename T>
struct InOut : Output<T> {};

/// A 32-bit value set by the host graph at compile time (Graph::setFieldValue).
template <typename T>
struct Param {
  T value;
  uint32_t reserved;
  operator T() const { return value; }
};

static_assert(sizeof(Input<float>) == 8 && sizeof(Param<float>) == 8, "fields are 8 bytes");

/// The device-side layout of tess_codelet_desc (tessera/control.h), with typed pointers so that
/// the linker, not a static constructor, fills it in.
struct CodeletDesc {
  uint32_t magic;
  void (*entry)(void*);
  uint32_t stateBytes;
  const char* text;
};
static_assert(sizeof(CodeletDesc) == sizeof(tess_codelet_desc), "descriptor layout");

}  // namespace tessera

// ---- TESSERA_VERTEX: up to 16 fields ----
#define TESSERA_VX_CAT_(a, b) a##b
#define TESSERA_VX_CAT(a, b) TESSERA_VX_CAT_(a, b)
#define TESSERA_VX_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, \
                          N, ...)                                                                \
  N
#define TESSERA_VX_NARGS(...) \
  TESSERA_VX_NARGS_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
#define TESSERA_VX_EACH_1(M, x) M x
#define TESSERA_VX_EACH_2(M, x, ...) M x TESSERA_VX_EACH_1(M, __VA_ARGS__)
#define TESSERA_VX_EACH_3(M, x, ...) M x TESSERA_VX_EACH_2(M, __VA_ARGS__)
#define TESSERA_VX_EACH_4(M, x, ...) M x TESSERA_VX_EACH_3(M, __VA_ARGS__)
#define TESSERA_VX_EACH_5(M, x, ...) M x TESSERA_VX_EACH_4(M, __VA_ARGS__)
#define TESSERA_VX_EACH_6(M, x, ...) M x TESSERA_VX_EACH_5(M, __VA_ARGS__)
#define TESSERA_VX_EACH_7(M, x, ...) M x TESSERA_VX_EACH_6(M, __VA_ARGS__)
#define TESSERA_VX_EACH_8(M, x, ...) M x TESSERA_VX_EACH_7(M, __VA_ARGS__)
#define TESSERA_VX_EACH_9(M, x, ...) M x TESSERA_VX_EACH_8(M, __VA_ARGS__)
#define TESSERA_VX_EACH_10(M, x, ...) M x TESSERA_VX_EACH_9(M, __VA_ARGS__)
#define TESSERA_VX_EACH_11(M, x, ...) M x TESSERA_VX_EACH_10(M, __VA_ARGS__)
#define TESSERA_VX_EACH_12(M, x, ...) M x TESSERA_VX_EACH_11(M, __VA_ARGS__)
#define TESSERA_VX_EACH_13(M, x, ...) M x TESSERA_VX_EACH_12(M, __VA_ARGS__)
#define TESSERA_VX_EACH_14(M, x, ...) M x TESSERA_VX_EACH_13(M, __VA_ARGS__)
#define TESSERA_VX_EACH_15(M, x, ...) M x TESSERA_VX_EACH_14(M, __VA_ARGS__)
#define TESSERA_VX_EACH_16(M, x, ...) M x TESSERA_VX_EACH_15(M, __VA_ARGS__)
#define TESSERA_VX_EACH(M, ...) \
  TESSERA_VX_CAT(TESSERA_VX_EACH_, TESSERA_VX_NARGS(__VA_ARGS__))(M, __VA_ARGS__)
#define TESSERA_VX_MEMBER(kind, type, name) ::tessera::kind<type> name;
#define TESSERA_VX_TEXT(kind, type, name) #kind " " #type " " #name "\0"

/// Declare vertex NAME with fields (kind, type, name)...; the compute body follows the macro.
#define TESSERA_VERTEX(NAME, ...) TESSERA_VX_DECLARE(NAME, #NAME, __VA_ARGS__)

/// TESSERA_VERTEX for a codelet whose vertices use the tile's matrix unit state (weight banks,
/// accumulators, the rounding generator) or meet by context id: the compiler never runs another
/// compute set's vertices beside them on a tile (docs/compiler.md, "Merged compute sets").
#define TESSERA_EXCLUSIVE_VERTEX(NAME, ...) \
  TESSERA_VX_DECLARE(NAME, #NAME " exclusive", __VA_ARGS__)

#define TESSERA_VX_DECLARE(NAME, TEXT, ...)                          \
  struct NAME {                                                      \
    TESSERA_VX_EACH(TESSERA_VX_MEMBER, __VA_ARGS__)                  \
    void compute();                                                  \
  };                                                                 \
  extern "C" void tess_vertex_##NAME(void* state) {                  \
    static_cast<NAME*>(state)->compute();                            \
  }                                                                  \
  __attribute__((used, section(".tess.codelets")))                   \
  const ::tessera::CodeletDesc tess_codelet_##NAME = {               \
      TESS_CODELET_MAGIC, &tess_vertex_##NAME, sizeof(NAME),         \
      TEXT "\0" TESSERA_VX_EACH(TESSERA_VX_TEXT, __VA_ARGS__) "\0"}; \
  void NAME::compute()
