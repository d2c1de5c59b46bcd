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

# Used by every project target, never exported: consumers pick their own flags.
function(livemon_target_defaults target)
  target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:livemon_compile_options>)
endfunction()
