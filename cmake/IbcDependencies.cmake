# Protobuf, OpenSSL 3 and libarchive, linked statically or dynamically per program
# (DESIGN.md §10): the collector and the console link Debian's shared libraries, so that a
# Debian security update reaches them; only the portable programs (`ibcollect`,
# `ibcollect-support`) embed the libraries. A program says which by its target property
# IBC_STATIC_DEPS (cmake/IbcPrograms.cmake sets it).
#
# OpenSSL::Crypto, OpenSSL::SSL and protobuf::libprotobuf keep their usual names, so every
# CMakeLists links them as usual; they are defined here, before FindOpenSSL and FindProtobuf
# would define them, as a choice made by the program being linked:
#   $<IF:$<BOOL:$<TARGET_PROPERTY:IBC_STATIC_DEPS>>,ibc_OpenSSL_Crypto_static,..._shared>
# ($<TARGET_PROPERTY:prop> in a usage requirement reads the consuming program's property).
#
# IBC_PORTABLE (cmake/portable-toolchain.cmake): only the static archives of the portable
# dependencies exist, and libarchive is the one with tar + zstd only.

foreach(name OpenSSL::Crypto OpenSSL::SSL protobuf::libprotobuf)
  add_library(${name} INTERFACE IMPORTED GLOBAL)
endforeach()

if(IBC_PORTABLE)
  set(Protobuf_USE_STATIC_LIBS ON)
  set(OPENSSL_USE_STATIC_LIBS TRUE)
endif()
find_package(Protobuf REQUIRED)
find_package(OpenSSL 3 REQUIRED)
find_package(Threads REQUIRED)

# The static archive beside a shared library Debian's -dev package installs (libssl.a beside
# libssl.so), or the library itself when it is an archive already (IBC_PORTABLE).
function(_ibc_static_archive shared out)
  get_filename_component(dir ${shared} DIRECTORY)
  get_filename_component(name ${shared} NAME_WE)
  if(EXISTS ${dir}/${name}.a)
    set(${out} ${dir}/${name}.a PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

# ibc_per_program_library(TARGET LIBRARY DEPENDS...): TARGET links LIBRARY's static archive
# into programs with IBC_STATIC_DEPS, its shared library into the others. Each is an imported
# library (TARGET_static, TARGET_shared) that links DEPENDS after it, so that CMake orders
# static archives as they need each other (libssl.a before libcrypto.a).
function(ibc_per_program_library target include_dirs library)
  _ibc_static_archive(${library} archive)
  if(NOT archive)
    message(FATAL_ERROR "no static archive beside ${library}: ${target} cannot be linked into "
                        "a program with IBC_STATIC_DEPS")
  endif()
  string(REGEX REPLACE "[^A-Za-z0-9]+" "_" name ${target})
  foreach(kind static shared)
    set(file ${library})
    set(type SHARED)
    set(depends "")
    foreach(dep IN LISTS ARGN)
      if(TARGET ${dep}_${kind})
        list(APPEND depends ${dep}_${kind})
      else()
        list(APPEND depends ${dep})
      endif()
    endforeach()
    if(kind STREQUAL "static")
      set(file ${archive})
      set(type STATIC)
    endif()
    add_library(ibc_${name}_${kind} ${type} IMPORTED GLOBAL)
    set_target_properties(ibc_${name}_${kind} PROPERTIES IMPORTED_LOCATION ${file}
                          INTERFACE_INCLUDE_DIRECTORIES "${include_dirs}"
                          INTERFACE_LINK_LIBRARIES "${depends}")
  endforeach()
  set(chosen "$<IF:$<BOOL:$<TARGET_PROPERTY:IBC_STATIC_DEPS>>,ibc_${name}_static,ibc_${name}_shared>")
  set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${include_dirs}"
                                             INTERFACE_LINK_LIBRARIES "${chosen}")
endfunction()

ibc_per_program_library(protobuf::libprotobuf "${Protobuf_INCLUDE_DIRS}" ${Protobuf_LIBRARY}
                        Threads::Threads)
ibc_per_program_library(OpenSSL::Crypto "${OPENSSL_INCLUDE_DIR}" ${OPENSSL_CRYPTO_LIBRARY}
                        Threads::Threads ${CMAKE_DL_LIBS})
ibc_per_program_library(OpenSSL::SSL "${OPENSSL_INCLUDE_DIR}" ${OPENSSL_SSL_LIBRARY}
                        ibc_OpenSSL_Crypto)

# libarchive (tar + zstd) for escalation bundles (docs/formats.md); Debian ships no CMake config.
if(IBC_PORTABLE)
  find_library(IBC_LIBARCHIVE_A libarchive.a REQUIRED)
  find_library(IBC_LIBZSTD_A libzstd.a REQUIRED)
  find_path(IBC_LIBARCHIVE_INCLUDE archive.h REQUIRED)
  add_library(PkgConfig::LIBARCHIVE INTERFACE IMPORTED GLOBAL)
  set_target_properties(PkgConfig::LIBARCHIVE PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES ${IBC_LIBARCHIVE_INCLUDE}
    INTERFACE_LINK_LIBRARIES "${IBC_LIBARCHIVE_A};${IBC_LIBZSTD_A}")
else()
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(LIBARCHIVE REQUIRED IMPORTED_TARGET libarchive)
endif()
