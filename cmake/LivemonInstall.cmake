# Installs the libraries, their headers and a CMake package so that
# find_package(livemon) gives livemon::core (and livemon::transport when built).
include(CMakePackageConfigHelpers)

set(LIVEMON_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/livemon")

install(EXPORT livemonTargets NAMESPACE livemon:: DESTINATION "${LIVEMON_INSTALL_CMAKEDIR}")

# The package config needs libzmq when livemon::transport is part of the package.
if(TARGET livemon_transport)
  set(LIVEMON_PACKAGE_HAS_TRANSPORT TRUE)
else()
  set(LIVEMON_PACKAGE_HAS_TRANSPORT FALSE)
endif()

configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/livemonConfig.cmake.in"
  "${CMAKE_CURRENT_BINARY_DIR}/livemonConfig.cmake"
  INSTALL_DESTINATION "${LIVEMON_INSTALL_CMAKEDIR}")
write_basic_package_version_file(
  "${CMAKE_CURRENT_BINARY_DIR}/livemonConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/livemonConfig.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/livemonConfigVersion.cmake"
        DESTINATION "${LIVEMON_INSTALL_CMAKEDIR}")
