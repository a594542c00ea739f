#!/usr/bin/env bash
# The console's grid on a SYNTHETIC job replicated from the real captures (see
# bench/console_grid.cpp): one line per size,
#   console grid: N nodes load X ms sort Y ms filter Z ms
# for 500, 2,000 and 10,000 nodes (or the sizes given), then the largest GUI-thread stall
# while 2,000 snapshots stream in through the window's loader (a first load, then a
# reload). Offscreen, Release build.
# Targets (issue 12): 2,000 nodes load + first paint < 300 ms, sort and filter < 50 ms, no
# GUI-thread stall over 50 ms.
#   bench/console_grid.sh [SIZES...]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${IBC_BENCH_BUILD:-build/bench}
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DIBC_BUILD_TESTS=OFF -DIBC_BUILD_BENCH=ON >/dev/null
fi
cmake --build "$BUILD" --target ibc_bench_console_grid -j2 >/dev/null
T=$(mktemp -d /tmp/ibc-console-grid-XXXXXX)
trap 'rm -rf "$T"' EXIT
F=tests/fixtures/real/sysfs
for pair in good:good_8xhdr200-all-active slow:ib_intf_bad_rate_8x-rate-100edr-vs-ipoib-200000 \
  stuck:stuck_ib_intf_two-ports-state-INIT-ipoib-down \
  down:ib_intf_operstate_down_ib4-ipoib-down-carrier-changes-98; do
  python3 "$F/json_sysfs_extract.py" "$F/sysfs-json_gcm-learn_${pair#*:}.json" "$T/${pair%%:*}"
done
QT_QPA_PLATFORM=offscreen "$BUILD/bench/ibc_bench_console_grid" tests/fixtures "$T" "$@"
