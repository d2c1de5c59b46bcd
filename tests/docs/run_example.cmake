# Runs one documentation example: cmake -DPROGRAM=<file> [-DOUTPUT=<text>] -P run_example.cmake
# Fails unless the program exits with status 0 and, when OUTPUT is given, its output holds OUTPUT.
execute_process(COMMAND "${PROGRAM}" RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT status STREQUAL "0")
  message(FATAL_ERROR "${PROGRAM} exited with ${status}")
endif()
if(DEFINED OUTPUT AND NOT OUTPUT STREQUAL "")
  string(FIND "${out}" "${OUTPUT}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the output of ${PROGRAM} lacks \"${OUTPUT}\", which its marker promises")
  endif()
endif()
