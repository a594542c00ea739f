# Packages of the portable programs (IBC_PORTABLE; docs/operations.md "Supported images"), one
# set per architecture: `ibcollect` and `ibcollect-support` as .deb (amd64, arm64) and .rpm
# (x86_64, aarch64). scripts/package.sh runs cpack here after scripts/check-portable.sh has
# written the glibc version the programs need (glibc-floor), then adds Built-Using to the
# .deb files (CPack has no field for it) and makes the tarball.
#   .deb: Depends libc6 (>= floor) only, besides the version pair and init-system-helpers;
#         set here, not by dpkg-shlibdeps, which cannot resolve arm64's libc on this machine
#   .rpm: Requires what rpmbuild finds in the ELF files (glibc's libraries and the loader) and
#         /bin/sh for the scriptlets; units in /usr/lib/systemd/system (rpm-units.cmake);
#         scriptlets that enable nothing
if(IBC_PORTABLE_ARCH STREQUAL "aarch64")
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
else()
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
endif()
set(CPACK_GENERATOR "DEB;RPM")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
set(CPACK_SYSTEM_NAME linux-${IBC_PORTABLE_ARCH})
set(IBC_GLIBC_FLOOR_FILE ${CMAKE_BINARY_DIR}/glibc-floor)
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/cpack-portable.cmake.in
               ${CMAKE_CURRENT_BINARY_DIR}/cpack-portable.cmake @ONLY)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_BINARY_DIR}/cpack-portable.cmake)

set(CPACK_RPM_COMPONENT_INSTALL ON)
set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
set(CPACK_RPM_PACKAGE_ARCHITECTURE ${IBC_PORTABLE_ARCH})
set(CPACK_RPM_PACKAGE_RELEASE ${IBC_DEB_RELEASE})
set(CPACK_RPM_PACKAGE_LICENSE "Apache-2.0")
set(CPACK_RPM_PACKAGE_GROUP "Applications/System")
set(CPACK_RPM_PACKAGE_VENDOR "ibcollect maintainers")
set(CPACK_RPM_PACKAGE_URL "https://ibcollect.invalid/")
# The Packager tag (rpm takes it from this macro).
set(CPACK_RPM_SPEC_MORE_DEFINE "%define packager ${IBC_DEB_MAINTAINER}")
set(CPACK_RPM_AGENT_PACKAGE_NAME ibcollect)
set(CPACK_RPM_SUPPORT_PACKAGE_NAME ibcollect-support)
set(CPACK_RPM_SUPPORT_PACKAGE_REQUIRES "ibcollect = ${PROJECT_VERSION}-${IBC_DEB_RELEASE}")
foreach(component AGENT SUPPORT)
  string(REGEX MATCH "^[^\n]*" summary "${CPACK_DEBIAN_${component}_DESCRIPTION}")
  string(REGEX REPLACE "^[^\n]*\n" "" description "${CPACK_DEBIAN_${component}_DESCRIPTION}")
  set(CPACK_RPM_${component}_PACKAGE_SUMMARY "${summary}")
  set(CPACK_RPM_${component}_PACKAGE_DESCRIPTION "${description}")
endforeach()
set(CPACK_RPM_AGENT_USER_FILELIST "%config(noreplace) ${IBC_CONF_DIR}/agent.conf")
# Directories of the filesystem and of other packages the packages put files into.
set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION
    /etc /usr/lib/systemd /usr/lib/systemd/system /usr/share/bash-completion
    /usr/share/bash-completion/completions /usr/share/zsh /usr/share/zsh/vendor-completions
    /usr/share/fish /usr/share/fish/vendor_completions.d /usr/share/lintian
    /usr/share/lintian/overrides /usr/share/man /usr/share/man/man1 /usr/share/doc)
# After an upgrade or removal, systemd rereads the units when it runs (and is not asked to
# enable or start anything).
set(CPACK_RPM_AGENT_POST_INSTALL_SCRIPT_FILE ${CMAKE_CURRENT_SOURCE_DIR}/rpm/daemon-reload.sh)
set(CPACK_RPM_AGENT_POST_UNINSTALL_SCRIPT_FILE ${CMAKE_CURRENT_SOURCE_DIR}/rpm/daemon-reload.sh)
