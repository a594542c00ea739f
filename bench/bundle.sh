#!/usr/bin/env bash
# Times `bundle export` and `bundle verify` (the library code the CLI calls) for 250 ...
# 2,000 synthetic nodes replicated from real captures, and prints the bundle's size.
# Target (issue 13): each under 2 s for 2,000 nodes.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build/bench
. bench/lib.sh
bench_build "$BUILD" "-DIBC_BUILD_BENCH=ON" ibc_bench_bundle
"$BUILD/bench/ibc_bench_bundle" tests/fixtures "${1:-2000}"
