#!/usr/bin/env bash
# The launcher side of `ibcollect --job` at scale (on demand, not in CI): N simulated nodes
# (default 2,000) answer through a fake srun/scontrol/sinfo that print what the nodes would
# (bench/job_scale.cpp: SYNTHETIC nodes replicated from real captures, each signed by its own
# node certificate), so the nodes cost nothing and the figures are the launcher's and the
# collector's. Two runs of the real Release `ibcollect --job 4242 --window 0`:
#   verdict: without a collector: resolve, reassemble, judge, write N files, print the
#            verdict (wall time of the whole process, and its peak RSS on stderr);
#   stored:  with --collector (a real ibcollect-collector on 127.0.0.1, real PKI, RocksDB in
#            a temp dir): the time the launcher reports for uploading the N signed snapshots
#            (every one acknowledged = durably stored); the collector is then asked for the
#            job's snapshots with a support certificate to check that N are there.
# The last line is exactly `job N nodes: verdict X s, stored Y s`. Targets (issue 24) at
# 2,000 nodes: verdict <= 2 s, stored <= 1 s.
#   bench/job_scale.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-2000}
BUILD=build/bench
. bench/lib.sh
bench_build "$BUILD" "-DIBC_BUILD_BENCH=ON" ibcollect ibcollect-support ibcollect-collector ibc_bench_job_scale

WORK=$(mktemp -d /tmp/ibc-job-scale-XXXXXX)
COLLECTOR_PID=
cleanup() {
  if [ -n "$COLLECTOR_PID" ]; then kill "$COLLECTOR_PID" 2>/dev/null && wait "$COLLECTOR_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "== PKI and $N simulated nodes (not timed)" >&2
certs/make-pki "$WORK/pki" --agent bench/launcher --support bench-support >/dev/null
"$BUILD/bench/ibc_bench_job_scale" "$WORK/pki" tests/fixtures "$N" "$WORK" >&2

"$BUILD/collector/ibcollect-collector" --listen 127.0.0.1:0 --data "$WORK/data" \
  --ca "$WORK/pki/ca.pem" --cert "$WORK/pki/collector.pem" --key "$WORK/pki/collector.key" \
  >"$WORK/collector.out" 2>"$WORK/collector.log" &
COLLECTOR_PID=$!
for _ in $(seq 100); do
  grep -q "^listening on " "$WORK/collector.out" 2>/dev/null && break
  sleep 0.1
done
ADDR=$(sed -n 's/^listening on //p' "$WORK/collector.out")
[ -n "$ADDR" ] || { cat "$WORK/collector.log" >&2; echo "the collector did not start" >&2; exit 1; }

# IBC_JOB_LAUNCHER: another ibcollect to time as the launcher (a build before a change).
IBC=${IBC_JOB_LAUNCHER:-$PWD/$BUILD/agent/ibcollect}
now() { date +%s.%N; }
echo "== verdict: ibcollect --job 4242 on $N nodes (fake launcher)" >&2
t0=$(now)
rc=0
PATH="$WORK/bin:$PATH" /usr/bin/time -f "%M" -o "$WORK/verdict.rss" "$IBC" --job 4242 --window 0 \
  --agent "$IBC" --out "$WORK/out-verdict" --format text >"$WORK/verdict.txt" 2>"$WORK/verdict.err" || rc=$?
t1=$(now)
[ "$rc" -le 2 ] || { cat "$WORK/verdict.err" >&2; echo "--job failed (exit $rc)" >&2; exit 1; }
kept=$(ls "$WORK/out-verdict" | wc -l)
[ "$kept" -eq "$N" ] || { echo "--job kept $kept snapshot files, not $N" >&2; exit 1; }
verdict=$(echo "$t1 - $t0" | bc -l)
grep -m3 -E "node|OK|WARN|CRIT" "$WORK/verdict.txt" | sed 's/^/   /' >&2 || true
echo "   the launcher's peak RSS: $(($(tail -1 "$WORK/verdict.rss") / 1024)) MiB" >&2

echo "== stored: the same job with --collector $ADDR" >&2
rc=0
PATH="$WORK/bin:$PATH" "$IBC" --job 4242 --window 0 --agent "$IBC" --out "$WORK/out-stored" --format text \
  --collector "$ADDR" --ca "$WORK/pki/ca.pem" --cert "$WORK/pki/agents/bench/launcher.pem" \
  --key "$WORK/pki/agents/bench/launcher.key" >/dev/null 2>"$WORK/stored.err" || rc=$?
[ "$rc" -le 2 ] || { cat "$WORK/stored.err" >&2; echo "--job --collector failed (exit $rc)" >&2; exit 1; }
line=$(grep -m1 -E "delivered [0-9]+ of [0-9]+ snapshot.* in [0-9.]+ s" "$WORK/stored.err" || true)
[ -n "$line" ] || { cat "$WORK/stored.err" >&2; echo "no upload line from the launcher" >&2; exit 1; }
echo "   $line" >&2
stored=$(echo "$line" | sed -E 's/.* in ([0-9.]+) s.*/\1/')

# Every snapshot is in the collector: fetched back with a support certificate (not timed).
"$PWD/$BUILD/agent/ibcollect-support" fetch --job 4242 -o "$WORK/fetched" --collector "$ADDR" \
  --ca "$WORK/pki/ca.pem" --cert "$WORK/pki/support/bench-support.pem" \
  --key "$WORK/pki/support/bench-support.key" >/dev/null 2>"$WORK/fetch.err" ||
  { cat "$WORK/fetch.err" >&2; exit 1; }
fetched=$(ls "$WORK/fetched" | wc -l)
[ "$fetched" -eq "$N" ] || { echo "the collector holds $fetched snapshots of the job, not $N" >&2; exit 1; }
echo "   the collector holds all $fetched; its log: $(grep -c . "$WORK/collector.log") line(s), last: $(tail -1 "$WORK/collector.log")" >&2
printf 'job %d nodes: verdict %.2f s, stored %.2f s\n' "$N" "$verdict" "$stored"
