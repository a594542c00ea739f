#!/usr/bin/env bash
# Builds every package and prints the directory that holds them (the only line on stdout;
# progress goes to stderr):
#   ibcollect-collector, ibcollect-console   Debian 12 .deb (amd64) from build/package
#                                            (`scripts/setup.sh package`: RelWithDebInfo with
#                                            Debian's hardening flags, shared libraries)
#   ibcollect, ibcollect-support             the portable programs (`scripts/setup.sh
#                                            portable`, docs/operations.md "Supported images"):
#                                            .deb for amd64 and arm64 (Depends: libc6 only,
#                                            Built-Using: what is linked in), .rpm for x86_64
#                                            and aarch64, and ibcollect-VERSION-linux-ARCH.tar.gz
#                                            with both programs and install.sh
#   scripts/package.sh
# Checks what it made: lintian (arm64 and amd64 .deb), rpmlint, `rpm -qpR` (glibc, the loader
# and /bin/sh only), `rpm -i --root TMP --nodeps`. Idempotent: when no program, man page or
# packaging file changed since the packages were made it rebuilds nothing and returns in
# seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh package >&2
scripts/setup.sh portable >&2
CACHE=$(scripts/portable-deps.sh)
BUILD=build/package
OUT=$PWD/$BUILD/packages
VERSION=$(sed -n 's/^project(ibcollect VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)

# stale OUTPUT INPUT...: OUTPUT is missing or older than an input.
stale() {
  local output=$1
  shift
  [ ! -e "$output" ] || [ -n "$(find "$@" -newer "$output" -print -quit)" ]
}

# The Debian 12 packages of the collector and the console.
debian_packages() {
  local dir=$BUILD/deb
  if stale "$dir/.made" "$BUILD/collector/ibcollect-collector" "$BUILD/console/ibcollect-console" \
    "$BUILD/packaging/man" "$BUILD/CPackConfig.cmake" "$BUILD/packaging/changelog.Debian.gz" packaging; then
    echo "== cpack (DEB, the collector and the console) into $dir" >&2
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$BUILD" && cpack -G DEB -B "$PWD/deb" >&2)
    # The programs' own packages are the portable ones.
    rm -rf "$dir/_CPack_Packages" "$dir/ibcollect_"*.deb "$dir/ibcollect-support_"*.deb
    touch "$dir/.made"
  fi
  cp "$dir"/*.deb "$OUT/"
}

# add_built_using DEB "SOURCE (= VERSION), ...": the field Debian policy 7.8 asks of a package
# that embeds other packages' code (CPack has none).
add_built_using() {
  local deb=$1 tree
  tree=$(mktemp -d)
  dpkg-deb -R "$deb" "$tree"
  sed -i "/^Depends:/a Built-Using: $2" "$tree/DEBIAN/control"
  dpkg-deb --root-owner-group -b "$tree" "$deb" >/dev/null
  rm -rf "$tree"
}

# The tarball: both programs, man pages, completion, the sample config, the units, install.sh.
tarball() { # ARCH DIR
  local arch=$1 dir=$2 stage name
  name=ibcollect-$VERSION-linux-$arch
  stage=$(mktemp -d)
  DESTDIR=$stage/installed cmake --install "build/portable-$arch" --component agent >/dev/null
  DESTDIR=$stage/installed cmake --install "build/portable-$arch" --component support >/dev/null
  local t=$stage/$name i=$stage/installed
  mkdir -p "$t/share/doc/ibcollect" "$t/lib/systemd"
  cp -r "$i/usr/bin" "$t/"
  cp -r "$i/usr/share/man" "$i/usr/share/bash-completion" "$i/usr/share/zsh" "$i/usr/share/fish" "$t/share/"
  cp -r "$i/etc" "$t/"
  cp -r "$i/lib/systemd/system" "$t/lib/systemd/"
  cp packaging/debian/copyright "$t/share/doc/ibcollect/copyright"
  cp packaging/tarball/install.sh "$t/install.sh"
  echo "$VERSION" >"$t/VERSION"
  tar --owner=root --group=root --sort=name -C "$stage" -czf "$dir/$name.tar.gz" "$name"
  rm -rf "$stage"
}

portable_packages() { # ARCH
  local arch=$1 build=build/portable-$1 dir=build/portable-$1/packages deb
  if stale "$dir/.made" "$build/agent/ibcollect" "$build/agent/ibcollect-support" \
    "$build/CPackConfig.cmake" "$build/glibc-floor" "$CACHE/built-using.sources" \
    build/portable-x86_64/packaging/man packaging; then
    echo "== cpack (DEB, RPM: ibcollect, ibcollect-support for $arch) into $dir" >&2
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$build" && cpack -B "$PWD/packages" >&2)
    rm -rf "$dir/_CPack_Packages"
    # GCC 10 (libstdc++, libgcc), Asio and CLI11 (headers), OpenSSL and protobuf in both;
    # zstd and libarchive in the support program.
    local common linked
    common=$(cat "$CACHE/built-using.gcc" "$CACHE/headers/built-using" | paste -sd, | sed 's/,/, /g')
    linked=$(grep -E '^(openssl|protobuf) ' "$CACHE/built-using.sources" | paste -sd, | sed 's/,/, /g')
    add_built_using "$dir/ibcollect_"*.deb "$common, $linked"
    linked=$(paste -sd, "$CACHE/built-using.sources" | sed 's/,/, /g')
    add_built_using "$dir/ibcollect-support_"*.deb "$common, $linked"
    tarball "$arch" "$dir"
    check_packages "$dir"
    touch "$dir/.made"
  fi
  cp "$dir"/*.deb "$dir"/*.rpm "$dir"/*.tar.gz "$OUT/"
}

# lintian and rpmlint without errors; the .rpm requires glibc, the loader and /bin/sh only,
# and installs into an empty root.
check_packages() { # DIR
  local dir=$1 rpm requirement root
  lintian --fail-on error "$dir"/*.deb >&2 || { echo "package.sh: lintian reports errors" >&2; return 1; }
  rpmlint -r packaging/rpm/ibcollect.rpmlintrc "$dir"/*.rpm >&2 || { echo "package.sh: rpmlint reports errors" >&2; return 1; }
  for rpm in "$dir"/*.rpm; do
    while read -r requirement; do
      case "$requirement" in
        libc.so.6* | libm.so.6* | libpthread.so.0* | libdl.so.2* | librt.so.1* | ld-linux-*) ;;
        rtld\(GNU_HASH\) | /bin/sh | ibcollect\ =\ * | config\(ibcollect*\)* | rpmlib\(*) ;;
        *) echo "package.sh: $(basename "$rpm") requires $requirement" >&2; return 1 ;;
      esac
    done < <(rpm -qpR "$rpm" 2>/dev/null)
  done
  root=$(mktemp -d)
  rpm -i --root "$root" --nodeps --ignorearch --noscripts "$dir"/*.rpm >&2 ||
    { rm -rf "$root"; echo "package.sh: rpm -i --root failed" >&2; return 1; }
  rm -rf "$root"
}

rm -rf "$OUT"
mkdir -p "$OUT"
debian_packages
portable_packages x86_64
portable_packages aarch64
for f in "$OUT"/*; do
  echo "   $(basename "$f")  $(du -k "$f" | cut -f1) KiB" >&2
done
echo "$OUT"
