# tessera_add_program(NAME <name> SOURCES <files...>): build <name>.elf for a tessera tile.
#
# Include this file from a CMake project configured with sw/cmake/riscv32-clang.cmake. It adds the
# runtime (crt0 + tile library, target tessera_rt) once, and links every program with the tile
# linker script. Chip constants come from the generated tessera/chip_params.h: pass
# -DTESSERA_GEN_DIR=<host build>/gen, or leave it unset and it is generated here from rtl/params.json
# (or, in an installed SDK, taken from its include/).
include_guard(GLOBAL)
enable_language(C CXX ASM)

set(TESSERA_SW_DIR ${CMAKE_CURRENT_LIST_DIR}/.. CACHE INTERNAL "tessera sw/ directory")
cmake_path(NORMAL_PATH TESSERA_SW_DIR)
set(TESSERA_ROOT_DIR ${TESSERA_SW_DIR}/..)
cmake_path(NORMAL_PATH TESSERA_ROOT_DIR)

# An installed SDK (docs/sdk.md) carries the generated header beside the device headers.
if(NOT TESSERA_GEN_DIR AND EXISTS ${TESSERA_SW_DIR}/include/tessera/chip_params.h)
  set(TESSERA_GEN_DIR ${TESSERA_SW_DIR}/include)
endif()
if(NOT TESSERA_GEN_DIR)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
  set(TESSERA_GEN_DIR ${CMAKE_BINARY_DIR}/gen)
  file(MAKE_DIRECTORY ${TESSERA_GEN_DIR}/tessera)
  execute_process(COMMAND ${Python3_EXECUTABLE} ${TESSERA_ROOT_DIR}/scripts/gen_params.py
                          ${TESSERA_ROOT_DIR}/rtl/params.json ${TESSERA_GEN_DIR}/tess_params_pkg.sv
                          ${TESSERA_GEN_DIR}/tessera/chip_params.h
                  COMMAND_ERROR_IS_FATAL ANY)
endif()
set(_tess_params_h ${TESSERA_GEN_DIR}/tessera/chip_params.h)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_tess_params_h})

file(READ ${_tess_params_h} _tess_params)

# Tile memory size for the linker script's stack placement: the same constant the RTL and model use.
string(REGEX MATCH "#define TESS_TILE_MEM_BYTES TESS_U\\((0x[0-9a-fA-F]+)\\)" _m "${_tess_params}")
math(EXPR TESSERA_MEM_BYTES "${CMAKE_MATCH_1}" OUTPUT_FORMAT DECIMAL)
set(TESSERA_MEM_BYTES ${TESSERA_MEM_BYTES} CACHE STRING "Tile memory size the programs are linked for")
# The iCE40 board's tile memory (rtl/params.json, configs: ICE40), for programs built for it.
string(REGEX MATCH "#define TESS_ICE40_TILE_MEM_BYTES TESS_U\\((0x[0-9a-fA-F]+)\\)" _m "${_tess_params}")
math(EXPR TESSERA_ICE40_MEM_BYTES "${CMAKE_MATCH_1}" OUTPUT_FORMAT DECIMAL)
# ... its contexts, for tessera_add_program(... CONTEXTS ...) ...
string(REGEX MATCH "#define TESS_ICE40_NUM_CONTEXTS TESS_U\\((0x[0-9a-fA-F]+)\\)" _m "${_tess_params}")
math(EXPR TESSERA_ICE40_CONTEXTS "${CMAKE_MATCH_1}" OUTPUT_FORMAT DECIMAL)
# ... and its ISA (rv32i without M and F today), for tessera_add_program(... ISA ...).
string(REGEX MATCH "#define TESS_ICE40_HAS_MULDIV TESS_U\\((0x[0-9a-fA-F]+)\\)" _m "${_tess_params}")
math(EXPR _tess_ice40_m "${CMAKE_MATCH_1}")
string(REGEX MATCH "#define TESS_ICE40_HAS_FPU TESS_U\\((0x[0-9a-fA-F]+)\\)" _m "${_tess_params}")
math(EXPR _tess_ice40_f "${CMAKE_MATCH_1}")
set(TESSERA_ICE40_ISA rv32i)
if(_tess_ice40_m)
  string(APPEND TESSERA_ICE40_ISA m)
endif()
if(_tess_ice40_f)
  string(APPEND TESSERA_ICE40_ISA f)
endif()

set(TESSERA_LINKER_SCRIPT ${TESSERA_SW_DIR}/runtime/link.ld)

# The runtime (tessera_rt<suffix>) and crt0 (tessera_crt0<suffix>) compiled with the flags that
# follow suffix: once for the toolchain's rv32imf (no suffix, no flags), and once more for each
# smaller ISA a program asks for (tessera_add_program ISA), since a program for a tile without M
# must not link a runtime that multiplies or divides.
function(_tessera_runtime suffix)
  add_library(tessera_rt${suffix} STATIC ${TESSERA_SW_DIR}/runtime/runtime.c
                                         ${TESSERA_SW_DIR}/runtime/exchange.c)
  target_include_directories(tessera_rt${suffix} PUBLIC ${TESSERA_SW_DIR}/include ${TESSERA_GEN_DIR})
  target_compile_options(tessera_rt${suffix} PRIVATE -Wall -Wextra -Werror ${ARGN})
  # memcpy/memset must not be turned back into calls to themselves (a source property: set in
  # the directory of the target, which for an ISA variant is the first program's).
  set_source_files_properties(${TESSERA_SW_DIR}/runtime/runtime.c
                              TARGET_DIRECTORY tessera_rt${suffix}
                              PROPERTIES COMPILE_OPTIONS -fno-builtin)
  # crt0 is an object library so that _start is always linked, first, into every program.
  add_library(tessera_crt0${suffix} OBJECT ${TESSERA_SW_DIR}/runtime/crt0.S)
  target_include_directories(tessera_crt0${suffix} PRIVATE ${TESSERA_SW_DIR}/include
                                                           ${TESSERA_GEN_DIR})
  target_compile_options(tessera_crt0${suffix} PRIVATE ${ARGN})
endfunction()
_tessera_runtime("")

# -march/-mabi for an ISA other than the toolchain's rv32imf: "rv32i", "rv32im", "rv32if", ...
# (ilp32f with F, else ilp32; lld refuses to link objects of different float ABIs).
function(_tessera_isa_flags isa out)
  if(NOT isa MATCHES "^rv32im?f?$")
    message(FATAL_ERROR "tessera_add_program: ISA ${isa} is not rv32i[m][f]")
  endif()
  if(isa MATCHES "f$")
    set(${out} -march=${isa} -mabi=ilp32f PARENT_SCOPE)
  else()
    set(${out} -march=${isa} -mabi=ilp32 PARENT_SCOPE)
  endif()
endfunction()

# Build NAME.elf from SOURCES (C, C++ or assembly with .S) with crt0, the runtime and link.ld.
# MEM_BYTES, SUP_STACK and WORKER_STACK (optional) link it for another tile memory size and
# stack sizes (default TESSERA_MEM_BYTES, 4096 and 2048; link.ld). ISA (optional, default
# rv32imf) compiles it, its crt0 and its runtime for a smaller ISA: the iCE40 board's programs
# give ISA TESSERA_ICE40_ISA (rv32i: no M, no F). CONTEXTS (optional, default NUM_CONTEXTS)
# builds it for a tile with fewer contexts (TESSERA_NUM_WORKERS, one worker stack per worker):
# the iCE40 board's programs give TESSERA_ICE40_CONTEXTS.
function(tessera_add_program)
  cmake_parse_arguments(ARG "" "NAME;MEM_BYTES;SUP_STACK;WORKER_STACK;ISA;CONTEXTS" "SOURCES"
                        ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_SOURCES)
    message(FATAL_ERROR "tessera_add_program needs NAME and SOURCES")
  endif()
  set(_rt "")
  set(_isa_flags "")
  if(ARG_ISA AND NOT ARG_ISA STREQUAL "rv32imf")
    _tessera_isa_flags(${ARG_ISA} _isa_flags)
    set(_rt _${ARG_ISA})
    if(NOT TARGET tessera_rt${_rt})
      _tessera_runtime(${_rt} ${_isa_flags})
    endif()
  endif()
  add_executable(${ARG_NAME} $<TARGET_OBJECTS:tessera_crt0${_rt}> ${ARG_SOURCES})
  target_compile_options(${ARG_NAME} PRIVATE ${_isa_flags})
  target_link_options(${ARG_NAME} PRIVATE ${_isa_flags})
  target_link_libraries(${ARG_NAME} PRIVATE tessera_rt${_rt})
  set_target_properties(${ARG_NAME} PROPERTIES SUFFIX .elf LINK_DEPENDS ${TESSERA_LINKER_SCRIPT})
  # Programs print their own name (e.g. "isa_rv32i ok"), so the name is given once, here.
  target_compile_definitions(${ARG_NAME} PRIVATE TESS_PROGRAM_NAME="${ARG_NAME}")
  if(NOT ARG_MEM_BYTES)
    set(ARG_MEM_BYTES ${TESSERA_MEM_BYTES})
  endif()
  set(_stacks)
  if(ARG_SUP_STACK)
    list(APPEND _stacks -Wl,--defsym=__tess_sup_stack_size=${ARG_SUP_STACK})
  endif()
  if(ARG_WORKER_STACK)
    list(APPEND _stacks -Wl,--defsym=__tess_worker_stack_size=${ARG_WORKER_STACK})
  endif()
  if(ARG_CONTEXTS)
    if(ARG_CONTEXTS LESS 2 OR ARG_CONTEXTS GREATER 6)
      message(FATAL_ERROR "tessera_add_program ${ARG_NAME}: CONTEXTS ${ARG_CONTEXTS} is not 2..6")
    endif()
    target_compile_definitions(${ARG_NAME} PRIVATE TESSERA_CONTEXTS=${ARG_CONTEXTS})
    math(EXPR _workers "${ARG_CONTEXTS} - 1")
    list(APPEND _stacks -Wl,--defsym=__tess_workers=${_workers})
  endif()
  target_link_options(${ARG_NAME} PRIVATE -T ${TESSERA_LINKER_SCRIPT}
                      -Wl,--defsym=__tess_mem_size=${ARG_MEM_BYTES} ${_stacks}
                      -Wl,-Map=${ARG_NAME}.map)
endfunction()
