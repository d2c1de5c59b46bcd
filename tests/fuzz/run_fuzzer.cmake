# Runs one fuzz target for ctest (tests/fuzz/CMakeLists.txt):
#   MODE=corpus:  every seed and committed regression input once, nothing new;
#   MODE=explore: SECONDS of new inputs from there, kept in WORK (the build directory).
# A crash, a leak, undefined behaviour or a broken property fails the test; a new input that does
# is saved in WORK/artifacts/TARGET/.
cmake_minimum_required(VERSION 3.25)
foreach(var FUZZER TARGET MODE SOURCE_DIR SEEDS WORK SECONDS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_fuzzer.cmake: ${var} is not set")
  endif()
endforeach()

include("${SOURCE_DIR}/fuzz_options.cmake")
livemon_fuzz_options(${TARGET} "${SOURCE_DIR}" options)

set(artifacts "${WORK}/artifacts/${TARGET}/")
file(MAKE_DIRECTORY "${artifacts}")
set(inputs "${SEEDS}/${TARGET}")
if(IS_DIRECTORY "${SOURCE_DIR}/regressions/${TARGET}")
  list(APPEND inputs "${SOURCE_DIR}/regressions/${TARGET}")
endif()

if(MODE STREQUAL "corpus")
  # Given files rather than directories, libFuzzer runs each once and names it before it runs,
  # so a failure names the input.
  set(files "")
  foreach(dir IN LISTS inputs)
    file(GLOB found LIST_DIRECTORIES false "${dir}/*")
    list(SORT found)
    list(APPEND files ${found})
  endforeach()
  set(inputs ${files})
elseif(MODE STREQUAL "explore")
  # New inputs go to the first directory, never into the seeds or the source tree.
  set(grown "${WORK}/corpus/${TARGET}")
  file(MAKE_DIRECTORY "${grown}")
  list(PREPEND inputs "${grown}")
  list(APPEND options -max_total_time=${SECONDS} -print_final_stats=1)
else()
  message(FATAL_ERROR "run_fuzzer.cmake: MODE is corpus or explore, not ${MODE}")
endif()

execute_process(COMMAND "${FUZZER}" ${options} -artifact_prefix=${artifacts} ${inputs} RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "fuzz_${TARGET} failed (${result}) on the last input it ran (\"Running: ...\"), "
                      "or on a new one saved in ${artifacts}")
endif()
