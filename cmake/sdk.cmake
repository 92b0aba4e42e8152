# The installed SDK (docs/sdk.md): `cmake --install build --prefix P` puts
#   P/bin                          the tools (install() beside each tool's target)
#   P/include/tessera              every public header, and the generated chip_params.h/link_params.h
#   P/lib/libtessera.a             every host library a user's program needs, merged into one archive
#   P/lib/tessera                  the codelet library the compiler links graphs from
#   P/lib/cmake/tessera            the CMake package: find_package(tessera), tessera::tessera
#   P/lib/python3/dist-packages    the Python package tessera (python/CMakeLists.txt)
#   P/share/tessera/sw             the device toolchain: cmake/riscv32-clang.cmake,
#                                  cmake/tessera-device.cmake, runtime/, include/
# The layout variables are set in the top-level CMakeLists.txt (the compiler needs them).

# The host libraries of the SDK: these targets and every static library of this project they link,
# found by walking their link libraries, so a library added to one of them reaches the SDK without
# a second list. What they link from outside the project must be one of the packages the CMake
# package finds again (tesseraConfig.cmake.in); anything else stops the configure step here.
set(TESSERA_SDK_ROOTS tessera_device tessera_engine tessera_checkpoint tessera_lockstep
                      tessera_autodiff)
if(TARGET tessera_onnx)
  list(APPEND TESSERA_SDK_ROOTS tessera_onnx)
endif()
# Libraries a user's program links (the package finds them again) and header-only ones.
set(_tess_sdk_link_targets fmt::fmt Threads::Threads MPI::MPI_C PkgConfig::LIBELF onnx_proto
                           protobuf::libprotobuf asmjit::asmjit)
set(_tess_sdk_known_external ${_tess_sdk_link_targets} Boost::headers
                             nlohmann_json::nlohmann_json -pthread -lpthread -latomic)
set(_tess_sdk_static "")
set(_tess_sdk_external "")
set(_tess_sdk_todo ${TESSERA_SDK_ROOTS})
set(_tess_sdk_seen "")
while(_tess_sdk_todo)
  list(POP_FRONT _tess_sdk_todo _item)
  if(_item MATCHES "^\\$<LINK_ONLY:(.*)>$")
    set(_item ${CMAKE_MATCH_1})
  endif()
  if(_item IN_LIST _tess_sdk_seen)
    continue()
  endif()
  list(APPEND _tess_sdk_seen ${_item})
  if(TARGET ${_item})
    get_target_property(_imported ${_item} IMPORTED)
    get_target_property(_type ${_item} TYPE)
    if(_imported)
      list(APPEND _tess_sdk_external ${_item})
    elseif(_type STREQUAL "STATIC_LIBRARY")
      list(APPEND _tess_sdk_static ${_item})
      get_target_property(_deps ${_item} LINK_LIBRARIES)
      if(_deps)
        list(APPEND _tess_sdk_todo ${_deps})
      endif()
    elseif(_type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(_deps ${_item} INTERFACE_LINK_LIBRARIES)
      if(_deps)
        list(APPEND _tess_sdk_todo ${_deps})
      endif()
    else()
      message(FATAL_ERROR "SDK: ${_item} (${_type}) cannot go into libtessera.a")
    endif()
  else()
    list(APPEND _tess_sdk_external ${_item})
  endif()
endwhile()
foreach(_item IN LISTS _tess_sdk_external)
  if(NOT _item IN_LIST _tess_sdk_known_external)
    message(FATAL_ERROR "SDK: the host libraries link ${_item}, which cmake/tesseraConfig.cmake.in "
                        "does not find for a user's program: add it there and to "
                        "_tess_sdk_known_external in cmake/sdk.cmake")
  endif()
endforeach()

# libtessera.a: the static libraries' members, merged by ar's MRI script (members with equal
# names in different libraries are kept apart, unlike with ar x).
set(TESSERA_SDK_ARCHIVE ${CMAKE_BINARY_DIR}/sdk/libtessera.a)
set(_tess_mri "create ${TESSERA_SDK_ARCHIVE}\n")
set(_tess_sdk_files "")
foreach(_lib IN LISTS _tess_sdk_static)
  string(APPEND _tess_mri "addlib $<TARGET_FILE:${_lib}>\n")
  list(APPEND _tess_sdk_files $<TARGET_FILE:${_lib}>)
endforeach()
string(APPEND _tess_mri "save\nend\n")
file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/sdk/libtessera.mri CONTENT "${_tess_mri}")
add_custom_command(OUTPUT ${TESSERA_SDK_ARCHIVE}
  COMMAND ${CMAKE_COMMAND} -E rm -f ${TESSERA_SDK_ARCHIVE}
  COMMAND ${CMAKE_COMMAND} -DAR=${CMAKE_AR} -DSCRIPT=${CMAKE_BINARY_DIR}/sdk/libtessera.mri
          -P ${CMAKE_CURRENT_LIST_DIR}/merge-archives.cmake
  DEPENDS ${_tess_sdk_static} ${_tess_sdk_files} ${CMAKE_BINARY_DIR}/sdk/libtessera.mri
          ${CMAKE_CURRENT_LIST_DIR}/merge-archives.cmake
  COMMENT "Merging the host libraries into libtessera.a")
add_custom_target(tessera_sdk_archive ALL DEPENDS ${TESSERA_SDK_ARCHIVE})
install(FILES ${TESSERA_SDK_ARCHIVE} DESTINATION lib)

# Headers: every public include/tessera directory and the generated parameter headers.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/host/include/tessera
                  ${PROJECT_SOURCE_DIR}/sw/compiler/include/tessera
                  ${PROJECT_SOURCE_DIR}/sw/library/include/tessera
                  ${PROJECT_SOURCE_DIR}/sw/autodiff/include/tessera
                  ${PROJECT_SOURCE_DIR}/sw/include/tessera
                  ${TESSERA_GEN_DIR}/tessera
        DESTINATION include)
if(TARGET tessera_onnx)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/sw/onnx/include/tessera DESTINATION include)
endif()

# The codelet library (runtime and codelets, linked per graph by the compiler).
install(FILES ${TESSERA_SW_BIN_DIR}/libtessera_codelets.a DESTINATION ${TESSERA_INSTALL_CODELETSDIR})

# The device toolchain, laid out as sw/ is, with the generated chip_params.h beside the device
# headers (tessera-device.cmake takes it from there when TESSERA_GEN_DIR is not given).
install(FILES ${PROJECT_SOURCE_DIR}/sw/cmake/riscv32-clang.cmake
              ${PROJECT_SOURCE_DIR}/sw/cmake/tessera-device.cmake
        DESTINATION ${TESSERA_INSTALL_DEVICEDIR}/cmake)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/sw/runtime/ DESTINATION ${TESSERA_INSTALL_DEVICEDIR}/runtime)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/sw/include/tessera
        DESTINATION ${TESSERA_INSTALL_DEVICEDIR}/include)
install(FILES ${TESSERA_PARAMS_H} DESTINATION ${TESSERA_INSTALL_DEVICEDIR}/include/tessera)

# The CMake package: tessera::tessera links what the archive needs from outside, the raw flags
# the libraries carry (the verilated chips' -pthread, -latomic) as they are.
set(TESSERA_SDK_LINK_LIBRARIES "")
foreach(_item IN LISTS _tess_sdk_external)
  if(_item MATCHES "^-" OR _item IN_LIST _tess_sdk_link_targets)
    list(APPEND TESSERA_SDK_LINK_LIBRARIES ${_item})
  endif()
endforeach()
set(TESSERA_SDK_HAS_ONNX OFF)
if("onnx_proto" IN_LIST _tess_sdk_external)
  set(TESSERA_SDK_HAS_ONNX ON)
endif()
# The model's translating engine (host/model/CMakeLists.txt), when the SDK was built with it.
set(TESSERA_SDK_HAS_ASMJIT OFF)
if("asmjit::asmjit" IN_LIST _tess_sdk_external)
  set(TESSERA_SDK_HAS_ASMJIT ON)
endif()
include(CMakePackageConfigHelpers)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/tesseraConfig.cmake.in
  ${CMAKE_BINARY_DIR}/sdk/tesseraConfig.cmake
  INSTALL_DESTINATION ${TESSERA_INSTALL_CMAKEDIR}
  PATH_VARS TESSERA_INSTALL_CODELETSDIR TESSERA_INSTALL_DEVICEDIR TESSERA_INSTALL_PYTHONDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/sdk/tesseraConfigVersion.cmake
  VERSION 0.1.0 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/sdk/tesseraConfig.cmake
              ${CMAKE_BINARY_DIR}/sdk/tesseraConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/tessera_sdk_paths.cpp.in
        DESTINATION ${TESSERA_INSTALL_CMAKEDIR})

# The SDK's test (docs/sdk.md): install this build into a fresh prefix, build the example of
# docs/sdk.md out of tree against it alone, run it on the model and check what it prints.
add_test(NAME sdk.install_and_build_example
  COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
          -DWORK_DIR=${CMAKE_BINARY_DIR}/sdk/test -DPYTHON=${TESSERA_PYTHON}
          -P ${CMAKE_CURRENT_LIST_DIR}/sdk-test.cmake)
set_tests_properties(sdk.install_and_build_example PROPERTIES TIMEOUT 300 LABELS sdk)
