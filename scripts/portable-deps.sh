#!/usr/bin/env bash
# Makes what the portable programs are built with and tested on (docs/operations.md,
# "Supported images"), once, and prints the directory that holds it (the only line on stdout):
#   <cache>/root-amd64    Debian 11 (bullseye, glibc 2.31) made with debootstrap: GCC 10 and
#                         its libstdc++ for x86_64, the aarch64 cross GCC 10 with its libstdc++
#                         and glibc (g++-10-aarch64-linux-gnu); also the x86_64 old userland
#                         the tests run the programs in (chroot)
#   <cache>/root-arm64    Debian 11 for arm64 (debootstrap --foreign: unpacked, not
#                         configured), the old userland of `qemu-aarch64-static -L`
#   <cache>/toolchain/ARCH  cc, c++, as, ld, ar, ... : the root's own tools run from the host
#                         (the compiler with --sysroot, binutils through the root's loader)
#   <cache>/deps/ARCH     static OpenSSL 3 and protobuf (bookworm's Debian source packages,
#                         with Debian's patches), zstd and libarchive (tar + zstd only), built
#                         by that GCC 10 against glibc 2.31, PIC and hardened
#                         and Asio and CLI11 (header-only) from Debian 12's packages
#   <cache>/built-using   the source packages linked in, for the packages' Built-Using
# <cache> is /var/cache/ibcollect-portable/<hash of the build recipe> (IBC_PORTABLE_CACHE_BASE
# overrides the first part): a changed recipe makes a new one, an unchanged one returns at
# once. The roots and the sources are kept apart, keyed by what makes them (roots-<hash>,
# sources-<hash>, linked from <cache>), so that a changed build step rebuilds only the
# dependencies. Needs root (debootstrap), debootstrap and dpkg-dev (scripts/setup.sh installs
# them) and Debian's archive. Builds run under `nice -n 19` with IBC_PORTABLE_JOBS (2) jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${IBC_PORTABLE_CACHE_BASE:-/var/cache/ibcollect-portable}
MIRROR=http://deb.debian.org/debian
JOBS=${IBC_PORTABLE_JOBS:-2}
ARCHES=(x86_64 aarch64)
SOURCES=(openssl protobuf libzstd libarchive)
# The toolchain, and libstdc++/libgcc whose static archives go into the programs.
ROOT_PACKAGES=gcc-10,g++-10,libc6-dev,libstdc++-10-dev,g++-10-aarch64-linux-gnu
TOOLCHAIN_FILE=$PWD/cmake/portable-toolchain.cmake

log() { echo "portable-deps: $*" >&2; }

key() { sha256sum | cut -c1-16; }

# stage DIR NAME FUNCTION: runs FUNCTION unless DIR/NAME is done; a failed stage is redone
# whole.
stage() {
  [ -f "$1/.done-$2" ] && return 0
  log "$2 ..."
  local started=$SECONDS
  "$3"
  touch "$1/.done-$2"
  log "$2 done in $((SECONDS - started)) s"
}

# Absolute symlinks of a root point into the host when the root is used as a sysroot
# (libc.so's /lib64/ld-linux-x86-64.so.2); relative ones point inside it either way.
relative_links() {
  local root=$1 link target
  find "$root" -xdev -type l -lname '/*' -print0 | while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$root$target")" "$link"
  done
}

make_root_amd64() {
  local root=$ROOTS/root-amd64
  rm -rf "$root"
  nice -n 19 debootstrap --variant=minbase --include="$ROOT_PACKAGES" bullseye "$root" \
    "$MIRROR" >"$root.log" 2>&1 || { tail -20 "$root.log" >&2; return 1; }
  rm -f "$root/var/cache/apt/archives/"*.deb
  relative_links "$root"
}

make_root_arm64() {
  local root=$ROOTS/root-arm64
  rm -rf "$root"
  nice -n 19 debootstrap --foreign --arch=arm64 --variant=minbase bullseye "$root" \
    "$MIRROR" >"$root.log" 2>&1 || { tail -20 "$root.log" >&2; return 1; }
  rm -f "$root/var/cache/apt/archives/"*.deb
  relative_links "$root"
}

# bookworm's source packages (with its point releases) through a private apt state: the
# host's apt is not touched.
fetch_sources() {
  rm -rf "$SRC/src" "$SRC/apt"
  mkdir -p "$SRC/src" "$SRC/apt/lists/partial" "$SRC/apt/cache/archives/partial"
  local key=/usr/share/keyrings/debian-archive-keyring.gpg
  cat >"$SRC/apt/sources.list" <<EOF
deb-src [signed-by=$key] $MIRROR bookworm main
deb-src [signed-by=$key] $MIRROR bookworm-updates main
EOF
  local apt=(-o "Dir::Etc::SourceList=$SRC/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$SRC/apt/lists" -o "Dir::Cache=$SRC/apt/cache" -o Debug::NoLocking=1
    -o APT::Sandbox::User=root -qq)
  apt-get "${apt[@]}" update >&2
  (cd "$SRC/src" && apt-get "${apt[@]}" source "${SOURCES[@]}" >"$SRC/apt-source.log" 2>&1) ||
    { tail -20 "$SRC/apt-source.log" >&2; return 1; }
  local s dir
  for s in "${SOURCES[@]}"; do
    dir=$(find "$SRC/src" -maxdepth 1 -type d -name "$s-*" | head -1)
    [ -n "$dir" ] || { log "apt-get source $s made no directory"; return 1; }
    ln -sfn "$(basename "$dir")" "$SRC/src/$s"
  done
  rm -rf "$SRC/src/"*.tar.* "$SRC/src/"*.dsc "$SRC/src/"*.asc "$SRC/apt"
}

# The root's tools for ARCH, runnable from the host: the compiler driver with --sysroot and -B
# (so that it finds the binutils below), binutils through the root's own loader and libraries
# (they need the root's libbfd).
write_toolchain() {
  local arch prefix dir tool root=$C/root-amd64
  local loader="$root/usr/lib/x86_64-linux-gnu/ld-2.31.so --library-path $root/usr/lib/x86_64-linux-gnu"
  for arch in "${ARCHES[@]}"; do
    prefix=$root/usr/bin/$arch-linux-gnu
    dir=$C/toolchain/$arch
    mkdir -p "$dir"
    for tool in as ld ar ranlib strip nm objcopy readelf; do
      printf '#!/bin/sh\nexec %s %s-%s "$@"\n' "$loader" "$prefix" "$tool" >"$dir/$tool"
    done
    printf '#!/bin/sh\nexec %s-gcc-10 --sysroot=%s -B%s/ "$@"\n' "$prefix" "$root" "$dir" >"$dir/cc"
    printf '#!/bin/sh\nexec %s-g++-10 --sysroot=%s -B%s/ "$@"\n' "$prefix" "$root" "$dir" >"$dir/c++"
    chmod 755 "$dir"/*
  done
}

cmake_dep() { # ARCH SOURCE_DIR BUILD_DIR [cmake options...]
  local arch=$1 src=$2 build=$3
  shift 3
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN_FILE" -DIBC_PORTABLE_ARCH="$arch" -DIBC_PORTABLE_CACHE="$C" \
    -DCMAKE_INSTALL_PREFIX="$C/deps/$arch" -DCMAKE_INSTALL_LIBDIR=lib -DBUILD_SHARED_LIBS=OFF \
    "$@" >"$build.log" 2>&1 || { tail -30 "$build.log" >&2; return 1; }
}

build_zstd() { # ARCH
  local b=$C/build/$1/zstd
  cmake_dep "$1" "$C/src/libzstd/build/cmake" "$b" -DZSTD_BUILD_SHARED=OFF -DZSTD_BUILD_PROGRAMS=OFF \
    -DZSTD_BUILD_TESTS=OFF -DZSTD_LEGACY_SUPPORT=OFF -DZSTD_MULTITHREAD_SUPPORT=OFF
  nice -n 19 cmake --build "$b" -j"$JOBS" >>"$b.log" 2>&1 && cmake --install "$b" >>"$b.log" 2>&1 ||
    { tail -30 "$b.log" >&2; return 1; }
}

# libarchive with tar and zstd only: no ICU, libxml2, expat, OpenSSL, zlib, bzip2, xz, lz4, ACL.
build_libarchive() { # ARCH
  local b=$C/build/$1/libarchive d=$C/deps/$1 off=() opt
  for opt in OPENSSL LIBB2 LZ4 LZO LZMA BZip2 ZLIB LIBXML2 EXPAT PCREPOSIX PCRE2POSIX LibGCC CNG \
    NETTLE MBEDTLS TAR CPIO CAT XATTR ACL ICONV TEST COVERAGE WERROR UNZIP; do
    off+=("-DENABLE_$opt=OFF")
  done
  cmake_dep "$1" "$C/src/libarchive" "$b" -DENABLE_ZSTD=ON -DZSTD_INCLUDE_DIR="$d/include" \
    -DZSTD_LIBRARY="$d/lib/libzstd.a" "${off[@]}"
  nice -n 19 cmake --build "$b" -j"$JOBS" --target archive_static >>"$b.log" 2>&1 ||
    { tail -30 "$b.log" >&2; return 1; }
  install -m 644 "$b/libarchive/libarchive.a" "$d/lib/libarchive.a"
  install -m 644 "$C/src/libarchive/libarchive/archive.h" \
    "$C/src/libarchive/libarchive/archive_entry.h" "$d/include/"
}

# OpenSSL 3's libraries (no programs, modules, engines or tests); the default configuration
# directory is Debian's, where Ubuntu and Debian keep it (programs pass their CA files).
build_openssl() { # ARCH
  local arch=$1 b=$C/build/$1/openssl t=$C/toolchain/$1
  rm -rf "$b" && mkdir -p "$b"
  (cd "$b" && CC=$t/cc AR=$t/ar RANLIB=$t/ranlib perl "$C/src/openssl/Configure" "linux-$arch" \
    no-shared no-module no-engine no-dso no-tests no-legacy no-ui-console --prefix="$C/deps/$arch" \
    --libdir=lib --openssldir=/usr/lib/ssl -fPIC -fstack-protector-strong \
    -fstack-clash-protection -D_FORTIFY_SOURCE=2 -ffunction-sections -fdata-sections \
    >"$b.log" 2>&1 &&
    nice -n 19 make -j"$JOBS" build_libs >>"$b.log" 2>&1 && make install_dev >>"$b.log" 2>&1) ||
    { tail -30 "$b.log" >&2; return 1; }
}

build_protobuf() { # ARCH
  local b=$C/build/$1/protobuf
  cmake_dep "$1" "$C/src/protobuf" "$b" -Dprotobuf_BUILD_TESTS=OFF -Dprotobuf_BUILD_PROTOC_BINARIES=OFF \
    -Dprotobuf_BUILD_LIBPROTOC=OFF -Dprotobuf_WITH_ZLIB=OFF -Dprotobuf_BUILD_SHARED_LIBS=OFF \
    -Dprotobuf_BUILD_EXAMPLES=OFF
  nice -n 19 cmake --build "$b" -j"$JOBS" >>"$b.log" 2>&1 && cmake --install "$b" >>"$b.log" 2>&1 ||
    { tail -30 "$b.log" >&2; return 1; }
}

build_deps() { # ARCH
  rm -rf "$C/deps/$1" "$C/build/$1"
  mkdir -p "$C/deps/$1/lib" "$C/deps/$1/include" "$C/build/$1"
  build_zstd "$1"
  build_libarchive "$1"
  build_openssl "$1"
  build_protobuf "$1"
  rm -rf "$C/build/$1"
}
deps_x86_64() { build_deps x86_64; }
deps_aarch64() { build_deps aarch64; }

# Header-only libraries the programs compile in (Asio, CLI11): Debian 12's, as the developer
# build uses them (scripts/setup.sh installs libasio-dev and libcli11-dev); they need nothing
# of the host but the C++ headers, which come from the root.
copy_headers() {
  local arch
  rm -rf "$C/headers"
  mkdir -p "$C/headers"
  for arch in "${ARCHES[@]}"; do
    cp -r /usr/include/asio /usr/include/asio.hpp /usr/include/CLI "$C/deps/$arch/include/"
  done
  dpkg-query -W -f='${source:Package} (= ${source:Version})\n' libasio-dev libcli11-dev \
    >"$C/headers/built-using"
}

# Built-Using (Debian policy 7.8): the source packages whose code is linked in.
write_built_using() {
  local admin=$C/root-amd64/var/lib/dpkg gcc s version
  gcc=$(dpkg-query --admindir="$admin" -W -f='${source:Package} (= ${source:Version})' libstdc++-10-dev)
  for s in "${SOURCES[@]}"; do
    version=$(dpkg-parsechangelog -l "$C/src/$s/debian/changelog" -S Version)
    echo "$s (= $version)"
  done >"$C/built-using.sources"
  echo "$gcc" >"$C/built-using.gcc"
}

started=$SECONDS
ROOTS=$BASE/roots-$( (declare -f relative_links make_root_amd64 make_root_arm64
  echo "$MIRROR $ROOT_PACKAGES") | key)
SRC=$BASE/sources-$( (declare -f fetch_sources; echo "$MIRROR ${SOURCES[*]}") | key)
C=$BASE/$( (declare -f write_toolchain cmake_dep build_zstd build_libarchive build_openssl \
  build_protobuf build_deps write_built_using
  echo "$ROOTS $SRC ${ARCHES[*]} $ROOT_PACKAGES"
  cat cmake/portable-toolchain.cmake) | key)
mkdir -p "$ROOTS" "$SRC" "$C"
stage "$ROOTS" root-amd64 make_root_amd64
stage "$ROOTS" root-arm64 make_root_arm64
stage "$SRC" sources fetch_sources
ln -sfn "$ROOTS/root-amd64" "$C/root-amd64"
ln -sfn "$ROOTS/root-arm64" "$C/root-arm64"
ln -sfn "$SRC/src" "$C/src"
stage "$C" toolchain write_toolchain
stage "$C" deps-x86_64 deps_x86_64
stage "$C" deps-aarch64 deps_aarch64
stage "$C" built-using write_built_using
stage "$C" "headers-$(declare -f copy_headers | key)" copy_headers
[ $((SECONDS - started)) -gt 1 ] && log "ready in $((SECONDS - started)) s: $C"
echo "$C"
