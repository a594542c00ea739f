#!/usr/bin/env bash
# Times `bundle export` and `bundle verify` (the library code the CLI calls) for 250 ...
# 2,000 synthetic nodes replicated from real captures, and prints the bundle's size.
# Target (issue 13): each under 2 s for 2,000 nodes.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh none
BUILD=build/bench
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DIBC_BUILD_TESTS=OFF -DIBC_BUILD_BENCH=ON >/dev/null
fi
cmake --build "$BUILD" --target ibc_bench_bundle -j2 >/dev/null
"$BUILD/bench/ibc_bench_bundle" tests/fixtures "${1:-2000}"
