# livemon_gzip(<target> <input> <output>): a target, built by default, that writes <output>, the
# gzip of <input> at maximum compression and without a timestamp (-n), so that two builds give the
# same bytes. Debian wants man pages and changelogs gzipped (cmake/LivemonPackaging.cmake).
find_program(LIVEMON_GZIP gzip REQUIRED)
function(livemon_gzip target input output)
  # Not VERBATIM: the redirection is the shell's.
  add_custom_command(OUTPUT "${output}" COMMAND "${LIVEMON_GZIP}" -9 -n -c "${input}" > "${output}"
                     DEPENDS "${input}" COMMENT "Compressing ${output}")
  add_custom_target(${target} ALL DEPENDS "${output}")
endfunction()

# livemon_man_page(<program>): installs the man page <program>.1 of the calling folder, gzipped,
# with the program (install component `livemon`).
function(livemon_man_page program)
  set(output "${CMAKE_CURRENT_BINARY_DIR}/${program}.1.gz")
  livemon_gzip(${program}_man_page "${CMAKE_CURRENT_SOURCE_DIR}/${program}.1" "${output}")
  install(FILES "${output}" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1" COMPONENT livemon)
endfunction()
