# Toolchain of the portable programs (docs/operations.md, "Supported images"): Debian 11's
# GCC 10, its libstdc++ and glibc 2.31 from the root that scripts/portable-deps.sh makes, for
# x86_64 or aarch64, and the static dependencies built against them. Used for those
# dependencies and for the project (scripts/setup.sh portable):
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/portable-toolchain.cmake -DIBC_PORTABLE_ARCH=aarch64 \
#         -DIBC_PORTABLE_CACHE=/var/cache/ibcollect-portable/<recipe hash> ...
# The compiler is the root's own, run with --sysroot (scripts/portable-deps.sh writes the
# wrappers); the build tools (CMake, Ninja, protoc) are the host's.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${IBC_PORTABLE_ARCH})
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES IBC_PORTABLE_ARCH IBC_PORTABLE_CACHE)

if(NOT IBC_PORTABLE_ARCH MATCHES "^(x86_64|aarch64)$" OR NOT IS_DIRECTORY "${IBC_PORTABLE_CACHE}")
  message(FATAL_ERROR "portable-toolchain.cmake needs -DIBC_PORTABLE_ARCH=x86_64|aarch64 and "
                      "-DIBC_PORTABLE_CACHE=<the directory scripts/portable-deps.sh printed>")
endif()
set(_tools ${IBC_PORTABLE_CACHE}/toolchain/${IBC_PORTABLE_ARCH})
set(CMAKE_C_COMPILER ${_tools}/cc)
set(CMAKE_CXX_COMPILER ${_tools}/c++)
set(CMAKE_AR ${_tools}/ar CACHE FILEPATH "" FORCE)
set(CMAKE_RANLIB ${_tools}/ranlib CACHE FILEPATH "" FORCE)
set(CMAKE_STRIP ${_tools}/strip CACHE FILEPATH "" FORCE)
set(CMAKE_NM ${_tools}/nm CACHE FILEPATH "" FORCE)
set(CMAKE_OBJCOPY ${_tools}/objcopy CACHE FILEPATH "" FORCE)

# Libraries and headers from the static dependencies only; programs (protoc) from the host.
set(CMAKE_FIND_ROOT_PATH ${IBC_PORTABLE_CACHE}/deps/${IBC_PORTABLE_ARCH})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Hardened, position-independent (static archives go into PIE programs), each function in its
# own section so that the link drops what is not called.
set(_hardening "-fPIC -fstack-protector-strong -fstack-clash-protection -D_FORTIFY_SOURCE=2")
set(CMAKE_C_FLAGS_INIT "${_hardening} -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${_hardening} -ffunction-sections -fdata-sections")
set(CMAKE_C_FLAGS_RELEASE_INIT "-O2 -DNDEBUG")
set(CMAKE_CXX_FLAGS_RELEASE_INIT "-O2 -DNDEBUG")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-z,relro,-z,now -Wl,--gc-sections")
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
