# CMake toolchain file: bare-metal rv32imf (ilp32f) device code with the machine's clang and ld.lld.
# Usage: cmake -DCMAKE_TOOLCHAIN_FILE=<this file> ...  (docs: sw/examples/README.md)
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv32)

find_program(TESSERA_CLANG NAMES clang clang-14 REQUIRED)
find_program(TESSERA_CLANGXX NAMES clang++ clang++-14 REQUIRED)
set(CMAKE_C_COMPILER ${TESSERA_CLANG})
set(CMAKE_CXX_COMPILER ${TESSERA_CLANGXX})
set(CMAKE_ASM_COMPILER ${TESSERA_CLANG})
set(CMAKE_C_COMPILER_TARGET riscv32-unknown-elf)
set(CMAKE_CXX_COMPILER_TARGET riscv32-unknown-elf)
set(CMAKE_ASM_COMPILER_TARGET riscv32-unknown-elf)
find_program(CMAKE_AR NAMES llvm-ar llvm-ar-14 REQUIRED)
find_program(CMAKE_RANLIB NAMES llvm-ranlib llvm-ranlib-14 REQUIRED)
find_program(CMAKE_OBJDUMP NAMES llvm-objdump llvm-objdump-14)

# There is no C library or libgcc on the tile: the runtime provides what the compiler may call
# (memcpy, memset). -mno-relax: lld 14 does not relax RISC-V, and gp is not set up as a base.
# -fno-math-errno: there is no errno, so sqrtf/fmaf builtins become FSQRT.S/FMADD.S.
set(_tess_arch "-march=rv32imf -mabi=ilp32f -mno-relax -ffreestanding -fno-math-errno")
set(CMAKE_C_FLAGS_INIT "${_tess_arch} -O2 -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${_tess_arch} -O2 -ffunction-sections -fdata-sections -fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit")
set(CMAKE_ASM_FLAGS_INIT "${_tess_arch}")
# -O2 in every build type: device code is always optimised the same way, so cycle counts of a
# program do not depend on how the host side was configured.
set(CMAKE_C_FLAGS_RELEASE_INIT "-O2")
set(CMAKE_CXX_FLAGS_RELEASE_INIT "-O2")
set(CMAKE_C_FLAGS_DEBUG_INIT "-O2 -g")
set(CMAKE_CXX_FLAGS_DEBUG_INIT "-O2 -g")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostdlib -fuse-ld=lld -Wl,--gc-sections -static")

# Compiler checks must not try to link a hosted executable.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_EXECUTABLE_SUFFIX_C .elf)
set(CMAKE_EXECUTABLE_SUFFIX_CXX .elf)
set(CMAKE_EXECUTABLE_SUFFIX_ASM .elf)
