# Sourced by the benchmark scripts (bash): what they share.
#
#   bench_build BUILD_DIR "CMAKE FLAGS" TARGET...
# installs what is missing (scripts/setup.sh none), configures BUILD_DIR once (Release, no
# tests, plus the flags given) and builds the targets with -j2; the build's output goes to
# stderr so that a benchmark's stdout holds only its figures.
bench_build() {
  local build=$1 flags=$2
  shift 2
  scripts/setup.sh none >/dev/null
  if [ ! -f "$build/build.ninja" ]; then
    # shellcheck disable=SC2086 # the flags are words
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DIBC_BUILD_TESTS=OFF $flags >/dev/null
  fi
  cmake --build "$build" -j2 --target "$@" >&2
}

#   run_collector_driver DRIVER [ARGS...]
# builds the Release collector and the driver (a collector_*_bench target) in build/release
# and runs the driver against that collector with the repository's certs/make-pki, passing
# ARGS on. It replaces the shell.
run_collector_driver() {
  local driver=$1
  shift
  bench_build build/release "" ibcollect-collector "$driver"
  exec "build/release/collector/$driver" --collector build/release/collector/ibcollect-collector \
    --make-pki certs/make-pki "$@"
}
