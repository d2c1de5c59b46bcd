# Run by CPack (CPACK_PRE_BUILD_SCRIPTS, cmake/LivemonPackaging.cmake) once the packages' files are
# staged: moves python3-livemon's module from lib/python3.X/dist-packages, where `cmake --install`
# puts it so that /usr/local works too, to lib/python3/dist-packages, where Debian's Python policy
# wants the modules of /usr (lintian: python-module-in-wrong-location). The extension's file name
# names its Python version, and the package depends on that version.
file(GLOB _livemon_versioned
     "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/python${CPACK_PACKAGING_INSTALL_PREFIX}/lib/python3.*/dist-packages")
foreach(_livemon_site IN LISTS _livemon_versioned)
  get_filename_component(_livemon_lib "${_livemon_site}/../.." ABSOLUTE)
  file(MAKE_DIRECTORY "${_livemon_lib}/python3")
  file(RENAME "${_livemon_site}" "${_livemon_lib}/python3/dist-packages")
  get_filename_component(_livemon_version_dir "${_livemon_site}" DIRECTORY)
  file(REMOVE_RECURSE "${_livemon_version_dir}")
endforeach()
