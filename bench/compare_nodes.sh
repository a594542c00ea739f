#!/usr/bin/env bash
# Times the launcher side of `ibcollect --job` (reassembly, decoding, single-node and
# cross-node rules, report) for 250 ... 2,000 synthetic nodes replicated from real
# captures. Target (issue 3): under 1 s for 2,000 nodes, growing linearly.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh none
BUILD=build/bench
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DIBC_BUILD_TESTS=OFF -DIBC_BUILD_BENCH=ON >/dev/null
fi
cmake --build "$BUILD" --target ibc_bench_compare -j2 >/dev/null
"$BUILD/bench/ibc_bench_compare" tests/fixtures "${1:-2000}"
