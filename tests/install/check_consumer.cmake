# Installs the build into a scratch prefix, builds tests/install/consumer against the installed
# package and runs its two programs, then reads what they link (its link line with Ninja, and
# readelf -d): the publish-only job links libzmq and none of libzstd, zlib or prometheus-cpp; the
# tool needs libzstd (so the check can tell).
#
# cmake -DBUILD_DIR=... -DCONSUMER=.../consumer -DPREFIX=... -DWORK=... -DGENERATOR=... -DCXX=...
#       -DREADELF=... [-DLAUNCHER=...] [-DLINK_FLAGS=...] -P check_consumer.cmake
foreach(var BUILD_DIR CONSUMER PREFIX WORK GENERATOR CXX READELF)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_consumer: ${var} is not set")
  endif()
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${what} failed (${result}):\n${output}")
  endif()
  message(STATUS "${what}: ok")
  set(run_output "${output}" PARENT_SCOPE)
endfunction()

# The shared libraries `program` needs, one NEEDED entry each.
function(needed program out)
  run("readelf -d ${program}" "${READELF}" -d "${WORK}/${program}")
  string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*\\[([^]\n]+)\\]" entries "${run_output}")
  set(libraries "")
  foreach(entry IN LISTS entries)
    string(REGEX REPLACE ".*\\[([^]]+)\\]" "\\1" library "${entry}")
    list(APPEND libraries "${library}")
  endforeach()
  set(${out} "${libraries}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${PREFIX}" "${WORK}")
run("cmake --install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}")
set(configure "${CMAKE_COMMAND}" -S "${CONSUMER}" -B "${WORK}" -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX}"
    "-DCMAKE_PREFIX_PATH=${PREFIX}")
if(LAUNCHER)
  list(APPEND configure "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}")
endif()
if(LINK_FLAGS)
  list(APPEND configure "-DCMAKE_EXE_LINKER_FLAGS=${LINK_FLAGS}")
endif()
run("configuring the consumer against the installed package" ${configure})
run("building the consumer" "${CMAKE_COMMAND}" --build "${WORK}")
run("livemon_publish_only" "${WORK}/livemon_publish_only")
message(STATUS "${run_output}")
run("livemon_consumer" "${WORK}/livemon_consumer")
message(STATUS "${run_output}")

# What the publish-only job's link line names (Ninja), whatever the linker then keeps.
if(EXISTS "${WORK}/build.ninja")
  file(READ "${WORK}/build.ninja" ninja)
  string(REGEX MATCH "\nbuild livemon_publish_only:[^\n]*\n(  [^\n]*\n)*" block "${ninja}")
  string(REGEX MATCH "LINK_LIBRARIES = [^\n]*" link "${block}")
  if(NOT link MATCHES "libzmq" OR link MATCHES "zstd|libz\\.|prometheus")
    message(FATAL_ERROR "the publish-only job's link line is not libzmq alone beside livemon: ${link}")
  endif()
  message(STATUS "livemon_publish_only ${link}")
endif()

needed(livemon_publish_only publish_only)
needed(livemon_consumer tool)
message(STATUS "livemon_publish_only needs: ${publish_only}")
message(STATUS "livemon_consumer needs: ${tool}")
if(NOT publish_only MATCHES "libzmq\\.so")
  message(FATAL_ERROR "the publish-only job does not link libzmq: ${publish_only}")
endif()
foreach(library IN LISTS publish_only)
  if(library MATCHES "^(libzstd|libz\\.|libprometheus)")
    message(FATAL_ERROR "the publish-only job links ${library}, which only recordings or the exporters need")
  endif()
endforeach()
if(NOT tool MATCHES "libzstd\\.so")
  message(FATAL_ERROR "the recording consumer does not link libzstd, so this check could not see it: ${tool}")
endif()
message(STATUS "the publish-only job links libzmq and neither zstd, zlib nor prometheus-cpp")
