# The SDK's test (ctest -R sdk; docs/sdk.md): install the build BUILD_DIR into a fresh prefix under
# WORK_DIR, then, with nothing but that prefix on CMAKE_PREFIX_PATH,
#   - build the host example of SOURCE_DIR/docs/sdk.md (its files are the code blocks marked
#     <!-- sdk-example: FILE -->), run it, and compare what it prints with the block marked
#     <!-- sdk-example-output -->;
#   - compile every installed host header against the install alone;
#   - check that a program built against the package, the installed tessera-bench and the
#     installed Python module (run with PYTHON) take the prefix's codelet library;
#   - build sw/examples/hello with the installed device toolchain and run it with the installed
#     tessera-run.
# Usage: cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DPYTHON=... -P sdk-test.cmake
cmake_minimum_required(VERSION 3.25)

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "sdk test: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# The example's files and its expected output, from the doc.
file(STRINGS ${SOURCE_DIR}/docs/sdk.md lines)
set(file "")
set(in_block FALSE)
set(expected "")
foreach(line IN LISTS lines)
  if(line MATCHES "^<!-- sdk-example: ([A-Za-z0-9_.]+) -->$")
    set(file ${CMAKE_MATCH_1})
    set(text "")
  elseif(line MATCHES "^<!-- sdk-example-output -->$")
    set(file "<output>")
    set(text "")
  elseif(file AND line MATCHES "^```")
    if(in_block)
      if(file STREQUAL "<output>")
        set(expected "${text}")
      else()
        file(WRITE ${WORK_DIR}/example/doc/${file} "${text}")
        list(APPEND written ${file})
      endif()
      set(file "")
      set(in_block FALSE)
    else()
      set(in_block TRUE)
    endif()
  elseif(in_block)
    string(APPEND text "${line}\n")
  endif()
endforeach()
if(NOT "CMakeLists.txt" IN_LIST written OR NOT "main.cpp" IN_LIST written OR expected STREQUAL "")
  message(FATAL_ERROR "sdk test: docs/sdk.md lacks the example's CMakeLists.txt, main.cpp or "
                      "output block (found: ${written})")
endif()

# A wrapper project: the doc's example as it is, a program printing where the compiler looks for
# the codelet library, and every installed host header in one file (each must compile against the
# install alone; vertex.hpp is device code, for clang --target=riscv32).
file(WRITE ${WORK_DIR}/example/CMakeLists.txt [=[
cmake_minimum_required(VERSION 3.25)
project(sdk_test LANGUAGES CXX)
find_package(tessera REQUIRED)
add_executable(codelets_path codelets_path.cpp)
target_link_libraries(codelets_path PRIVATE tessera::tessera)
add_library(all_headers OBJECT all_headers.cpp)
target_link_libraries(all_headers PRIVATE tessera::tessera)
target_compile_options(all_headers PRIVATE -Wall -Wextra -Werror)
add_subdirectory(doc)
]=])
file(GLOB headers RELATIVE ${prefix}/include ${prefix}/include/tessera/*.hpp)
list(REMOVE_ITEM headers tessera/vertex.hpp)
set(includes "")
foreach(h IN LISTS headers)
  string(APPEND includes "#include \"${h}\"\n")
endforeach()
file(WRITE ${WORK_DIR}/example/all_headers.cpp "${includes}")
file(WRITE ${WORK_DIR}/example/codelets_path.cpp [=[
#include <cstdio>

#include "tessera/graph.hpp"

int main() {
  std::puts(tessera::Graph::defaultCodeletsPath().c_str());
}
]=])
set(launcher "")
find_program(CCACHE ccache)
if(CCACHE)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${CCACHE})
endif()
# Nothing from the build tree: only the prefix, and no TESSERA_CODELETS override.
set(clean_env ${CMAKE_COMMAND} -E env --unset=TESSERA_CODELETS --unset=CMAKE_PREFIX_PATH)
run("configuring the example" ${clean_env} ${CMAKE_COMMAND} -S ${WORK_DIR}/example
    -B ${WORK_DIR}/example-build -G Ninja -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_PREFIX_PATH=${prefix} ${launcher})
run("building the example" ${CMAKE_COMMAND} --build ${WORK_DIR}/example-build)

run("the example" ${clean_env} ${WORK_DIR}/example-build/doc/sdk_example)
if(NOT run_output STREQUAL expected)
  message(FATAL_ERROR "sdk test: the example printed\n${run_output}\ndocs/sdk.md says\n${expected}")
endif()
message(STATUS "example: ${run_output}")

run("codelets_path" ${clean_env} ${WORK_DIR}/example-build/codelets_path)
string(STRIP "${run_output}" path)
if(NOT path STREQUAL "${prefix}/lib/tessera/libtessera_codelets.a")
  message(FATAL_ERROR "sdk test: a program built against the SDK takes the codelets from ${path}, "
                      "not from the prefix ${prefix}")
endif()

# The installed tools and Python module find the codelets relative to themselves.
file(MAKE_DIRECTORY ${WORK_DIR}/compile-mlp)
run("tessera-bench compile-mlp" ${clean_env} ${prefix}/bin/tessera-bench compile-mlp --tile-mem 624
    --out ${WORK_DIR}/compile-mlp)
if(NOT EXISTS ${WORK_DIR}/compile-mlp/mlp.tess)
  message(FATAL_ERROR "sdk test: the installed tessera-bench compile-mlp wrote no mlp.tess")
endif()
run("the installed Python module" ${clean_env}
    PYTHONPATH=${prefix}/lib/python3/dist-packages ${PYTHON} -c
    "print(__import__('tessera').Graph.default_codelets_path())")
string(STRIP "${run_output}" path)
if(NOT path STREQUAL "${prefix}/lib/tessera/libtessera_codelets.a")
  message(FATAL_ERROR "sdk test: the installed Python module takes the codelets from ${path}, "
                      "not from the prefix ${prefix}")
endif()

# A device program with the installed toolchain, run by the installed tessera-run.
file(WRITE ${WORK_DIR}/device/CMakeLists.txt [=[
cmake_minimum_required(VERSION 3.25)
project(hello LANGUAGES C CXX ASM)
include(${TESSERA_DEVICE_DIR}/cmake/tessera-device.cmake)
tessera_add_program(NAME hello SOURCES ${HELLO_SOURCE})
]=])
run("configuring the device program" ${CMAKE_COMMAND} -S ${WORK_DIR}/device
    -B ${WORK_DIR}/device-build -G Ninja
    -DCMAKE_TOOLCHAIN_FILE=${prefix}/share/tessera/sw/cmake/riscv32-clang.cmake
    -DTESSERA_DEVICE_DIR=${prefix}/share/tessera/sw
    -DHELLO_SOURCE=${SOURCE_DIR}/sw/examples/hello/hello.c)
run("building the device program" ${CMAKE_COMMAND} --build ${WORK_DIR}/device-build)
run("tessera-run" ${clean_env} ${prefix}/bin/tessera-run --device model
    ${WORK_DIR}/device-build/hello.elf)
if(NOT run_output MATCHES "hello")
  message(FATAL_ERROR "sdk test: the installed tessera-run printed \"${run_output}\" for hello.elf")
endif()
message(STATUS "sdk test: installed, built and ran the example and hello.elf from ${prefix}")
