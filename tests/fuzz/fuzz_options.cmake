# The libFuzzer options every run of a target uses (ctest and scripts/fuzz.sh, which reads them
# with `cmake -P fuzz_options.cmake` and TARGET set).
#   -timeout: one input that takes this long is a hang (generous: the machine may be loaded).
#   -rss_limit_mb: above this, an input's memory use is a defect.
#   -max_len: recordings need room for several chunks; the others stay at libFuzzer's default.
#   -malloc_limit_mb: a single allocation above this is a defect. For recordings (at most 32 KiB
#     here, chunks of 1 MiB from livemon's writer) half a GiB is far more than any chunk needs.
#   -dict: the format's keywords, when the target has a dictionary.
function(livemon_fuzz_options target source_dir out)
  set(options -timeout=60 -rss_limit_mb=2560)
  if(target STREQUAL "recording")
    list(APPEND options -max_len=32768 -malloc_limit_mb=512)
  endif()
  set(dictionary "${source_dir}/${target}.dict")
  if(target STREQUAL "subscriber" OR target STREQUAL "relay_capture" OR target STREQUAL "view_decoder")
    set(dictionary "${source_dir}/wire_decoder.dict")  # they read the same payloads
  endif()
  if(EXISTS "${dictionary}")
    list(APPEND options "-dict=${dictionary}")
  endif()
  set(${out} ${options} PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE AND DEFINED TARGET)
  livemon_fuzz_options(${TARGET} "${CMAKE_CURRENT_LIST_DIR}" options)
  list(JOIN options " " text)
  message(NOTICE "${text}")
endif()
