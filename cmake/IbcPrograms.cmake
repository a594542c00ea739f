# How the programs that run on customers' and providers' machines are linked (DESIGN.md §10,
# docs/operations.md "Supported images"): `ibcollect` and `ibcollect-support` embed protobuf
# and OpenSSL (IBC_STATIC_DEPS, cmake/IbcDependencies.cmake); the collector and the console
# link the shared libraries.
#
# IBC_PORTABLE (scripts/setup.sh portable): Debian 11's GCC 10 and glibc 2.31, libstdc++ and
# libgcc linked in, only glibc shared, PIE with RELRO and BIND_NOW (the hardening compile
# flags come from cmake/portable-toolchain.cmake), stripped.
# Developer builds (IBC_STATIC_AGENT): a non-PIE `ibcollect` starts without ~20k relative
# relocations (bench/snapshot_vs_node_exporter.py); it is for this machine, not shipped.
set(IBC_PORTABLE_PROGRAMS ibcollect ibcollect-support)
if(IBC_PORTABLE)
  foreach(program IN LISTS IBC_PORTABLE_PROGRAMS)
    set_target_properties(${program} PROPERTIES IBC_STATIC_DEPS ON POSITION_INDEPENDENT_CODE ON)
    target_link_options(${program} PRIVATE -static-libstdc++ -static-libgcc -pie
                        -Wl,-z,relro,-z,now -Wl,--gc-sections -s)
  endforeach()
elseif(IBC_STATIC_AGENT)
  set_target_properties(${IBC_PORTABLE_PROGRAMS} PROPERTIES IBC_STATIC_DEPS ON)
  if(NOT IBC_SANITIZE AND NOT IBC_TSAN)
    target_link_options(ibcollect PRIVATE -static-libstdc++ -static-libgcc -no-pie)
    set_target_properties(ibcollect PROPERTIES POSITION_INDEPENDENT_CODE OFF)
  endif()
endif()
