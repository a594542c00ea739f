#!/usr/bin/env bash
# Times `bundle export` and `bundle verify` (the library code the CLI calls) for 250 ...
# 2,000 synthetic nodes replicated from real captures, and prints the bundle's size.
# Target (issue 13): each under 2 s for 2,000 nodes.
# Then what a decompression bomb costs `bundle verify`, `bundle show` and
# `host-inspect --bundle` (wall time and peak RSS of the real binary; issue 27: refused in
# under 1 s within the reader's bound). IBC_BEFORE=path/to/older/ibcollect-support adds its figures.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build/bench
. bench/lib.sh
bench_build "$BUILD" "-DIBC_BUILD_BENCH=ON" ibc_bench_bundle ibc_bench_bundle_bomb ibcollect-support
"$BUILD/bench/ibc_bench_bundle" tests/fixtures "${1:-2000}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$BUILD/bench/ibc_bench_bundle_bomb" "$work" "$BUILD/agent/ibcollect-support" "${IBC_BEFORE:--}" \
  "${IBC_BOMB_MEMBERS:-64}"
