# livemon_library(<component> SOURCES <files...> [PUBLIC <libs...>] [PRIVATE <libs...>])
#
# One of livemon's libraries, called from its folder (core/, wire/, transport/, ...): the static
# library livemon_<component>, exported as livemon::<component>, built from the folder's src/.
# Its public headers are the folder's include/ (installed as they are, e.g. include/livemon/...);
# its internal headers, the folder's internal/ (included as <livemon/detail/...>), serve the
# layers above in the build tree only and are never installed. Each library is installed with an
# export set of its own, so the package loads, and finds the third-party libraries of, only the
# components a consumer asks for (cmake/livemonConfig.cmake.in).
function(livemon_library component)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC;PRIVATE" ${ARGN})
  set(target livemon_${component})
  add_library(${target} STATIC ${ARG_SOURCES})
  add_library(livemon::${component} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${component} OUTPUT_NAME ${target})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  if(EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/internal")
    target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/internal>)
  endif()
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_link_libraries(${target} PUBLIC ${ARG_PUBLIC} PRIVATE ${ARG_PRIVATE})
  livemon_target_defaults(${target})

  # Install component `dev`: the package livemon-dev (cmake/LivemonPackaging.cmake).
  install(TARGETS ${target} EXPORT livemon-${component}-targets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
  install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
  set_property(GLOBAL APPEND PROPERTY LIVEMON_COMPONENTS ${component})
endfunction()
