#!/usr/bin/env bash
# The console's grid on a SYNTHETIC job replicated from the real captures (see
# bench/console_grid.cpp): one line per size,
#   console grid: N nodes load X ms sort Y ms filter Z ms
# for 500, 2,000 and 10,000 nodes (or the sizes given), then the largest GUI-thread stall
# while 2,000 snapshots stream in through the window's loader (a first load, then a
# reload). Offscreen, Release build.
# Targets (issue 12): 2,000 nodes load + first paint < 300 ms, sort and filter < 50 ms, no
# GUI-thread stall over 50 ms.
# Then a job-wide fault (issue 22): IBC_FAULT_SIZES (default "1 200 2000") SYNTHETIC jobs whose
# every node carries a real NCCL log with a socket fallback, a real nccl-tests output and a
# real kernel log (bench/console_grid.cpp --fault-job), each opened by
# `ibcollect-console FILES --screenshot DIR` (every page rendered, then exit; capped at 300 s):
#   console fault job: N nodes (B MiB of files) all pages rendered in X s, peak RSS Y MiB (Z MiB
#     above one file's: K x the files), then the load's and each page's time (--timings)
# Target (issue 22): 2,000 nodes under 5 s and at most twice the files' bytes above one file's
# RSS; 10,000 under 20 s (IBC_FAULT_SIZES="1 200 2000 10000").
#   bench/console_grid.sh [SIZES...]      (SIZES=none skips the grid, e.g. for the fault job only)
#   IBC_FAULT_SHOTS=DIR keeps the fault jobs' screenshots in DIR/N/
# Then one node with IBC_WIDE_PORTS ports (default "2000 20000"; issue 27: linear in ports):
#   console wide node: P ports on one node, all pages rendered in X s
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${IBC_BENCH_BUILD:-build/bench}
. bench/lib.sh
bench_build "$BUILD" "-DIBC_BUILD_BENCH=ON" ibc_bench_console_grid ibcollect-console
T=$(mktemp -d /tmp/ibc-console-grid-XXXXXX)
trap 'rm -rf "$T"' EXIT
F=tests/fixtures/real/sysfs
for pair in good:good_8xhdr200-all-active slow:ib_intf_bad_rate_8x-rate-100edr-vs-ipoib-200000 \
  stuck:stuck_ib_intf_two-ports-state-INIT-ipoib-down \
  down:ib_intf_operstate_down_ib4-ipoib-down-carrier-changes-98; do
  python3 "$F/json_sysfs_extract.py" "$F/sysfs-json_gcm-learn_${pair#*:}.json" "$T/${pair%%:*}"
done
# The fault job's nodes are cloud VMs: the good tree with a QEMU guest's DMI (SYNTHETIC, as
# scripts/console-screenshots.sh makes its escalate page's job).
cp -r "$T/good" "$T/vm"
mkdir -p "$T/vm/sys/class/dmi/id"
echo QEMU >"$T/vm/sys/class/dmi/id/sys_vendor"
echo "Standard PC (Q35 + ICH9, 2009)" >"$T/vm/sys/class/dmi/id/product_name"
if [ "${1:-}" != none ]; then
  QT_QPA_PLATFORM=offscreen "$BUILD/bench/ibc_bench_console_grid" tests/fixtures "$T" "$@"
fi

# IBC_FAULT_CONSOLE: another ibcollect-console to time on the same jobs (a build before a change).
CONSOLE=${IBC_FAULT_CONSOLE:-$BUILD/console/ibcollect-console}
for n in ${IBC_FAULT_SIZES:-1 200 2000}; do
  J=$T/fault-$n
  mkdir -p "$J" "$J.png"
  QT_QPA_PLATFORM=offscreen "$BUILD/bench/ibc_bench_console_grid" --fault-job tests/fixtures "$T" "$J" "$n"
  # The job's files are written back before the console is timed: the figure is the console's,
  # not the disk's (a 10,000-node job's 229 MiB still being flushed slowed its reads by seconds).
  sync
  bytes=$(du -cb "$J"/*.ibsnap | tail -1 | cut -f1)
  rc=0
  # Per-page times when the console can say them (--timings; a build before it cannot).
  timings=
  if "$CONSOLE" --help 2>/dev/null | grep -q -- --timings; then timings=--timings; fi
  QT_QPA_PLATFORM=offscreen /usr/bin/time -v -o "$J.time" timeout 300 "$CONSOLE" "$J"/*.ibsnap \
    --screenshot "$J.png" $timings >/dev/null 2>"$J.err" || rc=$?
  wall=$(awk '/Elapsed \(wall clock\)/ {n = split($NF, p, ":"); s = 0
    for (i = 1; i <= n; ++i) s = s * 60 + p[i]; printf "%.1f", s}' "$J.time")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$J.time")
  pages=$(ls "$J.png" | wc -l)
  # One file's RSS is the console's own (Qt, fonts): the first size of the list is 1.
  [ "$n" -ne 1 ] || rss1=$rss
  rss1=${rss1:-0}
  above=$((rss - rss1))
  printf 'console fault job: %d nodes (%.1f MiB of files) all pages rendered in %s s, peak RSS %s MiB (%s MiB above one file'"'"'s: %.1fx the files), %d page(s)%s\n' \
    "$n" "$(echo "$bytes / 1048576" | bc -l)" "$wall" "$rss" "$above" \
    "$(echo "$above * 1048576 / $bytes" | bc -l)" "$pages" \
    "$([ $rc -eq 0 ] || echo ", exit $rc (124: killed at 300 s)")"
  if [ -n "$timings" ]; then
    printf '  ms to each page (load and diff include their workers):'
    awk '/^timing: / {printf " %s %s", $2, $3} END {print ""}' "$J.err"
    printf '  peak RSS (MiB) after each:'
    awk '/^timing: / {printf " %s %s", $2, $(NF-1)} END {print ""}' "$J.err"
  fi
  # IBC_FAULT_SHOTS=DIR keeps each size's screenshots (DIR/N/<page>.png): the README's fleet
  # screenshots are these (IBC_FAULT_SIZES="16 2000").
  if [ -n "${IBC_FAULT_SHOTS:-}" ]; then
    mkdir -p "$IBC_FAULT_SHOTS/$n"
    cp "$J.png"/*.png "$IBC_FAULT_SHOTS/$n/"
  fi
  rm -rf "$J" "$J.png"
done

# One node with many ports (issue 27: a page's cost must grow linearly with a node's ports):
# IBC_WIDE_PORTS (default "2000 20000") SYNTHETIC ports on one node, every page rendered.
for ports in ${IBC_WIDE_PORTS:-2000 20000}; do
  W=$T/wide-$ports
  mkdir -p "$W.png"
  QT_QPA_PLATFORM=offscreen "$BUILD/bench/ibc_bench_console_grid" --wide-node tests/fixtures "$T" "$W.ibsnap" "$ports"
  rc=0
  timings=
  if "$CONSOLE" --help 2>/dev/null | grep -q -- --timings; then timings=--timings; fi
  QT_QPA_PLATFORM=offscreen /usr/bin/time -v -o "$W.time" timeout 300 "$CONSOLE" "$W.ibsnap" \
    --screenshot "$W.png" $timings >/dev/null 2>"$W.err" || rc=$?
  wall=$(awk '/Elapsed \(wall clock\)/ {n = split($NF, p, ":"); s = 0
    for (i = 1; i <= n; ++i) s = s * 60 + p[i]; printf "%.1f", s}' "$W.time")
  printf 'console wide node: %d ports on one node, all pages rendered in %s s%s\n' "$ports" "$wall" \
    "$([ $rc -eq 0 ] || echo ", exit $rc (124: killed at 300 s)")"
  printf '  ms to each page:'
  awk '/^timing: / {printf " %s %s", $2, $3} END {print ""}' "$W.err"
  rm -rf "$W.ibsnap" "$W.png"
done
