#!/usr/bin/env bash
# Sets a machine up for ibcollect: installs every Debian package it needs (build, tests,
# integration, benchmarks), then configures and builds one build tree.
#   scripts/setup.sh [release|test|tsan|package|portable|none]
#     release (default)  build/release: RelWithDebInfo ibcollect, its man page and shell
#                        completion (what scripts/demo.sh runs)
#     test               build/test: clang, ASan/UBSan, libFuzzer targets, every test
#     tsan               build/tsan: clang, ThreadSanitizer, the collector's tests only
#     package            build/package: the programs, their man pages and completion as Debian
#                        packages them (RelWithDebInfo, Debian's hardening flags, prefix /usr,
#                        no tests); scripts/package.sh turns it into .deb files
#     portable           build/portable-x86_64, build/portable-aarch64: ibcollect and
#                        ibcollect-support for glibc 2.28+ images (docs/operations.md,
#                        "Supported images"), built by Debian 11's GCC 10 in a debootstrap root
#                        with static protobuf, OpenSSL, libarchive (scripts/portable-deps.sh
#                        makes them once, cached in /var/cache/ibcollect-portable), then checked
#                        (scripts/check-portable.sh: symbol versions, hardening, size)
#     none               packages only
# Idempotent: when every package is installed and the tree is up to date it returns in a
# second without touching apt (ninja, ccache). Needs root (or sudo) only when a package is
# missing.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_KIND=${1:-release}
case "$BUILD_KIND" in
  release|test|tsan|package|portable|none) ;;
  *) echo "usage: scripts/setup.sh [release|test|tsan|package|portable|none]" >&2; exit 3 ;;
esac

PACKAGES=(
  # toolchain
  cmake ninja-build ccache g++ clang-14 lld pkg-config clang-format-14 git
  # libraries (docs/architecture.md)
  libprotobuf-dev protobuf-compiler libasio-dev libssl-dev openssl librocksdb-dev libzstd-dev
  libarchive-dev
  qt6-base-dev qt6-charts-dev libqt6opengl6-dev libgl-dev
  libibverbs-dev libibumad-dev
  libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev
  # sanitizer and fuzzer runtimes for clang
  libclang-rt-14-dev
  # integration tests: a real Slurm cluster on one machine, network tools
  slurm-wlm slurmctld slurmd slurm-client munge iproute2 util-linux procps ethtool
  # GUI tests and screenshots
  xvfb xauth
  # benchmarks (run on demand): the peer we compare against, and timers
  prometheus-node-exporter hyperfine time python3
  # Debian packages (scripts/package.sh) and their test: shlibdeps and build flags, man
  # pages from --help, lintian, `systemd-analyze verify` (works without systemd as PID 1),
  # `man -w`
  dpkg-dev help2man lintian systemd man-db
  # the portable programs (scripts/portable-deps.sh): a Debian 11 root and its aarch64 twin,
  # run under qemu; their .rpm packages and rpmlint
  debootstrap qemu-user-static binutils rpm rpmlint
  # the collector's --metrics test parses with Prometheus' own text-format parser
  python3-prometheus-client
)

# One dpkg-query for all packages keeps the no-op case fast.
missing=()
# dpkg-query exits 1 when any package is unknown to dpkg (the fresh-machine case), so its
# status must not end the script under `set -e -o pipefail`.
installed=$({ dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${PACKAGES[@]}" 2>/dev/null || true; } |
  awk '$2 ~ /^ii/ {print $1}')
for p in "${PACKAGES[@]}"; do
  if ! grep -qx -- "$p" <<<"$installed"; then
    missing+=("$p")
  fi
done

install_missing() {
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

  echo "setup: installing ${#missing[@]} Debian packages: ${missing[*]}" >&2
  # Package post-install scripts must not start services (slurm, munge, node-exporter):
  # tests start their own daemons on private ports. policy-rc.d exit 101 = "not allowed".
  policy=/usr/sbin/policy-rc.d
  made_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
    made_policy=1
  fi
  cleanup() { if [ "$made_policy" = 1 ]; then $SUDO rm -f "$policy"; fi; }
  trap cleanup EXIT

  export DEBIAN_FRONTEND=noninteractive
  if ! $SUDO apt-get install -y --no-install-recommends "${missing[@]}"; then
    $SUDO apt-get update
    $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
  fi
  cleanup
  trap - EXIT
}

if [ "${#missing[@]}" -gt 0 ]; then
  install_missing
fi

# Cache hits across clones at other paths (CI builds a fresh clone): ccache rewrites
# absolute paths under the checkout to relative ones.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1

case "$BUILD_KIND" in
  release)
    BUILD=build/release
    if [ ! -f "$BUILD/build.ninja" ]; then
      cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIBC_BUILD_TESTS=OFF >/dev/null
    elif ! grep -qx 'IBC_MAN_PAGES:BOOL=ON' "$BUILD/CMakeCache.txt"; then
      # A tree configured before the man pages were part of every build.
      cmake -DIBC_MAN_PAGES=ON "$BUILD" >/dev/null
    fi
    # The agent with its man page and shell completion (`cmake --build build/release` builds
    # every program's).
    cmake --build "$BUILD" --target ibcollect ibc_man_ibcollect ibc_completion_ibcollect -j2
    ;;
  test)
    BUILD=build/test
    if [ ! -f "$BUILD/build.ninja" ]; then
      CC=clang-14 CXX=clang++-14 cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
        -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" -DIBC_SANITIZE=ON -DIBC_FUZZ=ON >/dev/null
    fi
    echo "== build ($BUILD)"
    cmake --build "$BUILD" -j2
    ;;
  tsan)
    BUILD=build/tsan
    if [ ! -f "$BUILD/build.ninja" ]; then
      CC=clang-14 CXX=clang++-14 cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
        -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" -DIBC_TSAN=ON >/dev/null
    fi
    echo "== build ($BUILD: the collector's tests under ThreadSanitizer)"
    cmake --build "$BUILD" -j2 --target ibc_collector_tests ibc_client_tests ibc_transport_tests \
      ibc_ops_tests
    ;;
  package)
    BUILD=build/package
    if [ ! -f "$BUILD/build.ninja" ]; then
      # Debian's hardening flags, without the -g -O2 of RelWithDebInfo and without
      # -ffile-prefix-map (an absolute path in the flags defeats ccache across clones).
      export DEB_BUILD_MAINT_OPTIONS=hardening=+all
      cxxflags="$(dpkg-buildflags --get CPPFLAGS) $(dpkg-buildflags --get CXXFLAGS)"
      cflags="$(dpkg-buildflags --get CPPFLAGS) $(dpkg-buildflags --get CFLAGS)"
      strip_flags() {
        local kept=() f
        for f in $1; do
          case "$f" in -g | -O2 | -ffile-prefix-map=*) ;; *) kept+=("$f") ;; esac
        done
        echo "${kept[*]}"
      }
      cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIBC_BUILD_TESTS=OFF \
        -DIBC_MAN_PAGES=ON -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON \
        -DCMAKE_CXX_FLAGS="$(strip_flags "$cxxflags")" -DCMAKE_C_FLAGS="$(strip_flags "$cflags")" \
        -DCMAKE_EXE_LINKER_FLAGS="$(dpkg-buildflags --get LDFLAGS)" >/dev/null
    fi
    echo "== build ($BUILD: the four programs and their man pages)" >&2
    cmake --build "$BUILD" -j2 --target ibcollect ibcollect-support ibcollect-collector ibcollect-console \
      ibc_man_pages ibc_completions >&2
    ;;
  portable)
    CACHE=$(scripts/portable-deps.sh)
    for arch in x86_64 aarch64; do
      BUILD=build/portable-$arch
      # x86_64 makes the man pages and completion from its programs; aarch64 (which cannot run
      # here but under qemu) installs those.
      docs=(-DIBC_MAN_PAGES=ON)
      targets=(ibcollect ibcollect-support ibc_man_pages ibc_completions)
      if [ "$arch" = aarch64 ]; then
        docs=(-DIBC_MAN_PAGES=OFF -DIBC_DOCS_FROM="$PWD/build/portable-x86_64/packaging")
        targets=(ibcollect ibcollect-support)
      fi
      if ! grep -qx "IBC_PORTABLE_CACHE:[A-Z]*=$CACHE" "$BUILD/CMakeCache.txt" 2>/dev/null; then
        # A new recipe (another cache directory) means another compiler: configure anew.
        rm -rf "$BUILD"
        cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DIBC_PORTABLE=ON \
          -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/portable-toolchain.cmake" -DIBC_PORTABLE_ARCH=$arch \
          -DIBC_PORTABLE_CACHE="$CACHE" -DCMAKE_INSTALL_PREFIX=/usr "${docs[@]}" >/dev/null
      fi
      echo "== build ($BUILD: the portable programs)"
      nice -n 19 cmake --build "$BUILD" -j2 --target "${targets[@]}"
    done
    echo "== check the portable programs (scripts/check-portable.sh)"
    scripts/check-portable.sh build/portable-x86_64 build/portable-aarch64
    ;;
  none) ;;
esac
