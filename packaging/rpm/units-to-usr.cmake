# CPACK_PRE_BUILD_SCRIPTS of the RPM generator: moves the staged systemd units from
# lib/systemd/system to usr/lib/systemd/system, where RPM-based systems keep them (and leaves
# no /lib directory behind: it belongs to the filesystem package), and drops the lintian
# overrides, which only the .deb needs.
file(GLOB_RECURSE units "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*/lib/systemd/system/*")
foreach(unit IN LISTS units)
  if(unit MATCHES "/usr/lib/systemd/")
    continue()
  endif()
  string(REGEX REPLACE "/lib/systemd/system/" "/usr/lib/systemd/system/" moved "${unit}")
  get_filename_component(dir "${moved}" DIRECTORY)
  file(MAKE_DIRECTORY "${dir}")
  file(RENAME "${unit}" "${moved}")
  string(REGEX REPLACE "/lib/systemd/system/[^/]*$" "/lib" lib "${unit}")
  list(APPEND emptied ${lib})
endforeach()
if(emptied)
  file(REMOVE_RECURSE ${emptied})
endif()
file(GLOB lintian "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*/usr/share/lintian")
if(lintian)
  file(REMOVE_RECURSE ${lintian})
endif()
