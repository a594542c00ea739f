# Warnings, ccache and sanitizers shared by every ibcollect target.

find_program(IBC_CCACHE ccache)
if(IBC_CCACHE)
  set(CMAKE_C_COMPILER_LAUNCHER ${IBC_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${IBC_CCACHE})
endif()

# Interface target carrying our warning flags; generated protobuf code does not get them.
add_library(ibc_warnings INTERFACE)
target_compile_options(ibc_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Wimplicit-fallthrough -Werror=return-type)

if(IBC_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

if(IBC_TSAN)
  if(IBC_SANITIZE OR IBC_FUZZ)
    message(FATAL_ERROR "IBC_TSAN cannot be combined with IBC_SANITIZE or IBC_FUZZ")
  endif()
  # The collector's io, worker and writer threads (and the agent's job launcher threads)
  # under ThreadSanitizer: scripts/test.sh runs the collector and transport tests with it.
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()

if(IBC_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "IBC_FUZZ needs clang (configure with -DCMAKE_CXX_COMPILER=clang++-14)")
  endif()
  # Instrument every library for coverage so the fuzzers see into ibc_core.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
