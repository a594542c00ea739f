#!/usr/bin/env bash
# Installs what is missing, builds everything with clang (AddressSanitizer +
# UndefinedBehaviorSanitizer, libFuzzer targets) and runs every test: format check, unit
# tests, fuzz seed replay, integration tests. Idempotent and incremental (ccache, ninja).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

echo "== format check (clang-format 14)"
scripts/check-format.sh

BUILD=build/test
if [ ! -f "$BUILD/build.ninja" ]; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" -DIBC_SANITIZE=ON -DIBC_FUZZ=ON >/dev/null
fi
echo "== build ($BUILD)"
cmake --build "$BUILD" -j2

echo "== tests"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$BUILD"
ctest -j2 --output-on-failure --timeout 600
