# Warning and sanitizer flags shared by every livemon target.
add_library(livemon_compile_options INTERFACE)
target_compile_options(livemon_compile_options INTERFACE -Wall -Wextra -Wpedantic -Wshadow
                       -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual)
if(LIVEMON_WERROR)
  target_compile_options(livemon_compile_options INTERFACE -Werror)
endif()

if(LIVEMON_SANITIZER)
  set(_livemon_san "-fsanitize=${LIVEMON_SANITIZER}")
  target_compile_options(livemon_compile_options INTERFACE ${_livemon_san} -fno-omit-frame-pointer
                         -fno-sanitize-recover=all -g)
  target_link_options(livemon_compile_options INTERFACE ${_livemon_san})
endif()

# A fuzz build: every livemon target is compiled with libFuzzer's coverage instrumentation and
# AddressSanitizer + UndefinedBehaviorSanitizer; only the fuzz targets link libFuzzer itself
# (-fsanitize=fuzzer, in tests/fuzz), everything else links just the sanitizer runtimes.
if(LIVEMON_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "LIVEMON_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  if(LIVEMON_SANITIZER)
    message(FATAL_ERROR "LIVEMON_FUZZ brings its own sanitizers: leave LIVEMON_SANITIZER empty")
  endif()
  target_compile_options(livemon_compile_options INTERFACE -fsanitize=fuzzer-no-link,address,undefined
                         -fno-sanitize-recover=all -fno-omit-frame-pointer -g)
  target_link_options(livemon_compile_options INTERFACE -fsanitize=address,undefined)
endif()

# Used by every project target, never exported: consumers pick their own flags.
function(livemon_target_defaults target)
  target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:livemon_compile_options>)
endfunction()
