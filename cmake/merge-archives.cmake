# cmake -DAR=<ar> -DSCRIPT=<file.mri> -P merge-archives.cmake: run ar's MRI script SCRIPT (create,
# addlib..., save), which merges static libraries into one archive (cmake/sdk.cmake).
execute_process(COMMAND ${AR} -M INPUT_FILE ${SCRIPT} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR err)
  message(FATAL_ERROR "ar -M < ${SCRIPT} failed (${rc}): ${err}")
endif()
