# Installs the build into a scratch prefix and checks that the headers it installs are exactly
# the public API listed in public_headers.txt, and that each one compiles on its own against the
# install alone (so no installed header reaches for one that stays behind in the source tree).
#
# cmake -DBUILD_DIR=... -DEXPECTED=.../public_headers.txt -DCXX=... -DPREFIX=... -P check_installed_headers.cmake
foreach(var BUILD_DIR EXPECTED CXX PREFIX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_installed_headers: ${var} is not set")
  endif()
endforeach()

file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}"
                OUTPUT_QUIET RESULT_VARIABLE installed)
if(NOT installed EQUAL 0)
  message(FATAL_ERROR "cmake --install ${BUILD_DIR} failed (${installed})")
endif()

file(GLOB_RECURSE found RELATIVE "${PREFIX}/include" "${PREFIX}/include/*")
list(SORT found)
file(STRINGS "${EXPECTED}" expected REGEX "^[^#].*")
list(SORT expected)

set(extra ${found})
list(REMOVE_ITEM extra ${expected})
set(missing ${expected})
list(REMOVE_ITEM missing ${found})
if(extra OR missing)
  list(JOIN extra "\n  " extra_text)
  list(JOIN missing "\n  " missing_text)
  message(FATAL_ERROR "The installed headers are not the public API in ${EXPECTED}.\n"
                      "Installed but not listed:\n  ${extra_text}\nListed but not installed:\n  ${missing_text}")
endif()

foreach(header IN LISTS found)
  execute_process(COMMAND "${CXX}" -std=c++20 -fsyntax-only -x c++ -I "${PREFIX}/include"
                          "${PREFIX}/include/${header}"
                  RESULT_VARIABLE compiled ERROR_VARIABLE errors)
  if(NOT compiled EQUAL 0)
    message(FATAL_ERROR "The installed ${header} does not compile on its own:\n${errors}")
  endif()
endforeach()
list(LENGTH found count)
message(STATUS "${count} installed headers, exactly the public API, each compiling on its own")
