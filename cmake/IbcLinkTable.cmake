# The link table of CONTRIBUTING.md ("Layout and targets"), checked when the build is
# configured: a target that reaches (directly or through the libraries it links) a library
# its row forbids fails the configuration with the chain that brought it in.

# Every library `target` links, transitively (target names, imported targets, paths).
function(_ibc_linked_closure target out)
  set(seen "")
  set(todo ${target})
  while(todo)
    list(POP_FRONT todo current)
    if(NOT TARGET ${current})
      continue()
    endif()
    get_target_property(type ${current} TYPE)
    set(direct "")
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(direct ${current} LINK_LIBRARIES)
    endif()
    get_target_property(iface ${current} INTERFACE_LINK_LIBRARIES)
    foreach(lib IN LISTS direct iface)
      if(lib MATCHES "NOTFOUND$" OR lib STREQUAL "")
        continue()
      endif()
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" lib "${lib}")
      if(NOT lib IN_LIST seen)
        list(APPEND seen ${lib})
        list(APPEND todo ${lib})
      endif()
    endforeach()
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

# ibc_check_link_table(TARGET t FORBID regex...): fails when t links a library matching one
# of the regular expressions.
function(ibc_check_link_table)
  cmake_parse_arguments(ARG "" "TARGET" "FORBID" ${ARGN})
  if(NOT TARGET ${ARG_TARGET})
    return()
  endif()
  _ibc_linked_closure(${ARG_TARGET} linked)
  foreach(pattern IN LISTS ARG_FORBID)
    foreach(lib IN LISTS linked)
      if(lib MATCHES "${pattern}")
        message(FATAL_ERROR "link table (CONTRIBUTING.md): ${ARG_TARGET} must not link "
                            "${pattern}, but links ${lib}")
      endif()
    endforeach()
  endforeach()
endfunction()

set(_ibc_qt "^Qt6::")
set(_ibc_rocksdb "rocksdb")
set(_ibc_archive "LIBARCHIVE|libarchive")
set(_ibc_asio "ibc_asio")
ibc_check_link_table(TARGET ibc_proto FORBID ${_ibc_asio} ${_ibc_qt} ${_ibc_rocksdb})
ibc_check_link_table(TARGET ibc_core FORBID ${_ibc_asio} ${_ibc_qt} ${_ibc_rocksdb} ${_ibc_archive})
ibc_check_link_table(TARGET ibc_os FORBID ${_ibc_asio} ${_ibc_qt} ${_ibc_rocksdb} ${_ibc_archive}
                     "^OpenSSL::SSL$")
ibc_check_link_table(TARGET ibc_client FORBID ${_ibc_qt} ${_ibc_rocksdb} ${_ibc_archive})
ibc_check_link_table(TARGET ibc_bundle FORBID ${_ibc_qt} ${_ibc_rocksdb})
ibc_check_link_table(TARGET ibcollect FORBID ${_ibc_qt} ${_ibc_rocksdb} ${_ibc_archive}
                     "^ibc_bundle$" "^ibc_support$")
ibc_check_link_table(TARGET ibcollect-support FORBID ${_ibc_qt} ${_ibc_rocksdb})
ibc_check_link_table(TARGET ibcollect-collector FORBID ${_ibc_qt} "^ibc_agent$" "^ibc_support$")
ibc_check_link_table(TARGET ibc_console_models FORBID "^Qt6::Widgets$" "^Qt6::Charts$"
                     "^ibc_agent$" "^ibc_support$")
ibc_check_link_table(TARGET ibcollect-console FORBID "^ibc_agent$" "^ibc_support$" ${_ibc_rocksdb})
