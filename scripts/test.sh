#!/usr/bin/env bash
# Installs what is missing, builds everything with clang (AddressSanitizer +
# UndefinedBehaviorSanitizer, libFuzzer targets) and runs every test: format check, unit
# tests, fuzz seed replay, integration tests. Idempotent and incremental (ccache, ninja).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh none  # packages (clang-format among them)

echo "== format check (clang-format 14)"
scripts/check-format.sh

# The portable ibcollect and ibcollect-support (x86_64, aarch64) against Debian 11, checked:
# glibc symbol versions, PIE and hardening, sizes (scripts/check-portable.sh). The roots,
# toolchains and static dependencies are cached in /var/cache/ibcollect-portable (cold: see
# docs/operations.md "Supported images"). Before the test build: the package test uses them.
scripts/setup.sh portable

scripts/setup.sh test  # build/test: clang, ASan/UBSan, libFuzzer targets, every test
BUILD=build/test

echo "== tests"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd "$BUILD" && ctest -j2 --output-on-failure --timeout 600)

echo "== the portable programs on Debian 11: x86_64 in a chroot, aarch64 under qemu-user"
tests/integration/old_root_test.sh "$BUILD" "$(scripts/portable-deps.sh)" build/portable-x86_64 \
  build/portable-aarch64
echo "== core's JSON pin and number tests built by GCC 10 (the portable toolchain), in Debian 11"
tests/integration/gcc10_json_test.sh "$(scripts/portable-deps.sh)" build/portable-x86_64

# The collector's io, worker and writer threads (and the store under them) under
# ThreadSanitizer: its unit tests and the transport tests against the real binaries.
scripts/setup.sh tsan
echo "== tests under ThreadSanitizer (label collector)"
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp"
(cd build/tsan && ctest -j2 -L collector --output-on-failure --timeout 600)
