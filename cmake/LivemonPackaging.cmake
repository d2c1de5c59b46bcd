# Debian packages, made by CPack from the install rules: `cpack -G DEB` in a build directory writes
#   livemon          the dashboard and livemonctl in /usr/bin, their man pages, the desktop entry
#                    and its icon (install component `livemon`);
#   livemon-dev      the headers, the static libraries and the CMake package, so that
#                    find_package(livemon COMPONENTS ...) works against /usr (component `dev`);
#   python3-livemon  the Python module for Debian's /usr/bin/python3 (component `python`; without
#                    the ahead-of-time operator observer, component `python-torch-ops`, which would
#                    make it depend on libtorch: the package compiles it at first use instead, as
#                    the wheel does).
# The runtime dependencies are dpkg-shlibdeps' reading of the binaries; the version is the
# project's. scripts/test-packages.sh builds, lints, installs and checks them (docs/packages.md).
# Tests, benchmarks and examples have no install rules, so no package holds them.
set(LIVEMON_PACKAGE_CONTACT "livemon maintainers <maintainers@users.noreply.a-seed-b950f95e.example>")

set(_livemon_packages "")
if(TARGET livemon OR TARGET livemonctl)
  list(APPEND _livemon_packages livemon)
endif()
get_property(_livemon_libraries GLOBAL PROPERTY LIVEMON_COMPONENTS)
if(_livemon_libraries)
  list(APPEND _livemon_packages dev)
endif()
if(TARGET livemon_python AND NOT LIVEMON_WHEEL)
  list(APPEND _livemon_packages python)
endif()

# What Debian asks of every package beside its files: /usr/share/doc/<package>/copyright and a
# changelog, gzipped.
# Only in packages: a plain `cmake --install` leaves them out (EXCLUDE_FROM_ALL).
string(TIMESTAMP _livemon_changelog_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
set(_livemon_doc_dir "${PROJECT_BINARY_DIR}/packaging")
file(CONFIGURE OUTPUT "${_livemon_doc_dir}/changelog" CONTENT [[
livemon (@PROJECT_VERSION@) unstable; urgency=medium

  * livemon @PROJECT_VERSION@, packaged with CPack from its CMake build.

 -- @LIVEMON_PACKAGE_CONTACT@  @_livemon_changelog_date@
]] @ONLY)
livemon_gzip(livemon_package_changelog "${_livemon_doc_dir}/changelog" "${_livemon_doc_dir}/changelog.gz")

set(_livemon_package_name_livemon livemon)
set(_livemon_package_name_dev livemon-dev)
set(_livemon_package_name_python python3-livemon)
foreach(_component IN LISTS _livemon_packages)
  install(FILES "${PROJECT_SOURCE_DIR}/resources/debian/copyright" "${_livemon_doc_dir}/changelog.gz"
          DESTINATION "${CMAKE_INSTALL_DATADIR}/doc/${_livemon_package_name_${_component}}"
          COMPONENT ${_component} EXCLUDE_FROM_ALL)
endforeach()

set(CPACK_PACKAGE_NAME livemon)
set(CPACK_PACKAGE_VENDOR "livemon")
set(CPACK_PACKAGE_CONTACT "${LIVEMON_PACKAGE_CONTACT}")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_GENERATOR DEB)
set(CPACK_COMPONENTS_ALL ${_livemon_packages})
set(CPACK_DEB_COMPONENT_INSTALL ON)
# livemon_0.1.0_amd64.deb and so on.
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Root-owned files, 0644/0755 control files, and no symbol tables in the binaries (lintian).
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_LIVEMON_PACKAGE_NAME livemon)
set(CPACK_DEBIAN_LIVEMON_PACKAGE_SECTION science)
set(CPACK_DEBIAN_LIVEMON_DESCRIPTION "live dashboard and tools for machine-learning training runs
livemon shows the windowed statistics and events that training jobs publish
over ZeroMQ as live charts beside an event log, and replays recorded runs on
a timeline. This package holds the desktop dashboard `livemon` with its menu
entry, and `livemonctl`, the headless tools: demo, tail, record, replay,
info, export, relay, watch, ranks and runs.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME livemon-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# The libraries are static and link their third-party libraries privately: whoever links them needs
# those libraries' development files, which the CMake package finds (cmake/livemonConfig.cmake.in).
set(_livemon_dev_depends "")
if(TARGET livemon_transport OR TARGET livemon_recording)
  list(APPEND _livemon_dev_depends "pkgconf | pkg-config")
endif()
if(TARGET livemon_transport)
  list(APPEND _livemon_dev_depends libzmq3-dev)
endif()
if(TARGET livemon_recording)
  list(APPEND _livemon_dev_depends libzstd-dev zlib1g-dev)
endif()
if(TARGET livemon_exporters AND LIVEMON_WITH_PROMETHEUS)
  list(APPEND _livemon_dev_depends prometheus-cpp-dev)
endif()
list(JOIN _livemon_dev_depends ", " CPACK_DEBIAN_DEV_PACKAGE_DEPENDS)
set(CPACK_DEBIAN_DEV_DESCRIPTION "development files of livemon, live monitoring for training runs
The C++20 libraries a training job links to compute windowed statistics in its
innermost loop, log structured events and publish them without blocking:
core, wire, transport (ZeroMQ), recording (MCAP), exporters (TensorBoard,
Prometheus) and analysis, as static libraries with their headers and a CMake
package: find_package(livemon COMPONENTS transport) gives livemon::transport.")

set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-livemon)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
# The extension is built for one Python version (its file name says which).
if(TARGET livemon_python)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS
      "python3 (>= ${LIVEMON_PYTHON_VERSION}), python3 (<< ${LIVEMON_PYTHON_VERSION_NEXT})")
endif()
# Byte-compiles the modules on install and removes the bytecode again before removal, as Debian's
# own Python packages do (py3compile, py3clean): else the __pycache__ that importing as root writes
# would stay behind after the package is gone.
set(CPACK_DEBIAN_PYTHON_PACKAGE_CONTROL_EXTRA
    "${PROJECT_SOURCE_DIR}/resources/debian/python3-livemon/postinst"
    "${PROJECT_SOURCE_DIR}/resources/debian/python3-livemon/prerm")
# In /usr/lib/python3/dist-packages, not where `cmake --install` puts it.
set(CPACK_PRE_BUILD_SCRIPTS "${CMAKE_CURRENT_LIST_DIR}/LivemonPackagingPython.cmake")
set(CPACK_DEBIAN_PYTHON_DESCRIPTION "Python module of livemon, live monitoring for training runs
livemon's Stat, events and handlers, the non-blocking ZeroMQ publisher, the
profiler with torch.profiler's names and the PyTorch bridge, for Debian's
python3. The operator observer of livemon.torch_bridge.install(ops=True) is
compiled at first use against the running torch.")

include(CPack)
