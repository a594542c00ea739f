#!/usr/bin/env bash
# Times the launcher side of `ibcollect --job` (reassembly, decoding, single-node and
# cross-node rules, report) for 250 ... 2,000 synthetic nodes replicated from real
# captures. Target (issue 3): under 1 s for 2,000 nodes, growing linearly.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build/bench
. bench/lib.sh
bench_build "$BUILD" "-DIBC_BUILD_BENCH=ON" ibc_bench_compare
"$BUILD/bench/ibc_bench_compare" tests/fixtures "${1:-2000}"
