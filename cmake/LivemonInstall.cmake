# Installs the libraries, their headers and a CMake package:
#   find_package(livemon [COMPONENTS core wire transport recording exporters analysis])
# gives livemon::<component> for each component asked for (all that were built when none is
# named) and the livemon components they link, and looks up only those components' third-party
# libraries: COMPONENTS transport needs libzmq beside livemon, recording libzstd and zlib,
# exporters libzmq and prometheus-cpp.
# Everything here is install component `dev` (the package livemon-dev).
include(CMakePackageConfigHelpers)

set(LIVEMON_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/livemon")

# What livemon_library() made, in the order the libraries link.
get_property(LIVEMON_PACKAGE_COMPONENTS GLOBAL PROPERTY LIVEMON_COMPONENTS)
foreach(_component IN LISTS LIVEMON_PACKAGE_COMPONENTS)
  install(EXPORT livemon-${_component}-targets NAMESPACE livemon:: FILE livemon-${_component}-targets.cmake
          DESTINATION "${LIVEMON_INSTALL_CMAKEDIR}" COMPONENT dev)
endforeach()

configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/livemonConfig.cmake.in"
  "${CMAKE_CURRENT_BINARY_DIR}/livemonConfig.cmake"
  INSTALL_DESTINATION "${LIVEMON_INSTALL_CMAKEDIR}")
write_basic_package_version_file(
  "${CMAKE_CURRENT_BINARY_DIR}/livemonConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/livemonConfig.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/livemonConfigVersion.cmake"
        DESTINATION "${LIVEMON_INSTALL_CMAKEDIR}" COMPONENT dev)
