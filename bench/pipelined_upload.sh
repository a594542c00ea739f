#!/usr/bin/env bash
# Pipelined uploads (on demand, not in CI): one `ibcollect upload` of N signed snapshots
# (default 2,000) to a real collector on 127.0.0.1, over one connection, with the
# collector's --max-pipelined-requests at 16 (the default) and at 1 (one request at a time,
# as before issue 24), ROUNDS times each, interleaved. Prints the wall time of each upload
# (reading the files included) and the collector's group commits.
#   bench/pipelined_upload.sh [N] [KIB] [ROUNDS]
# KIB: padding of each snapshot with an NCCL log of about that size (0: the bare ~2 KiB
# snapshot of the real mlx5 capture). Builds build/release if needed.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-2000}
KIB=${2:-0}
ROUNDS=${3:-3}
BUILD=build/release
. bench/lib.sh
bench_build "$BUILD" "" ibcollect ibcollect-collector
IBC="$PWD/$BUILD/agent/ibcollect"
COLLECTOR="$PWD/$BUILD/collector/ibcollect-collector"
TREE="$PWD/tests/fixtures/real/sysfs/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures"

W=$(mktemp -d /tmp/ibc-pipelined-XXXXXX)
cpid=""
cleanup() {
  if [ -n "$cpid" ]; then kill "$cpid" 2>/dev/null || true; fi
  rm -rf "$W"
}
trap cleanup EXIT
cd "$W"
"$OLDPWD/certs/make-pki" pki --agent acme/node01 >/dev/null
cp -r "$TREE" tree
mkdir -p tree/proc/sys/kernel snaps
echo node01 >tree/proc/sys/kernel/hostname
log=()
if [ "$KIB" -gt 0 ]; then
  python3 - "$KIB" <<'EOF'
import random, sys
want = int(sys.argv[1]) * 1024
out, n = [], 0
while n < want:
    line = "node01:1:1 [0] NCCL INFO Channel %02d/0 : 0[0] -> 1[0] via NET/IB/%d comm 0x%x" % (
        len(out) % 32, len(out) % 8, random.getrandbits(40))
    out.append(line)
    n += len(line) + 1
open("nccl.log", "w").write("\n".join(out) + "\n")
EOF
  log=(--nccl-log nccl.log)
fi
for i in $(seq 1 "$N"); do
  "$IBC" snapshot --root tree --job bench "${log[@]}" --cert pki/agents/acme/node01.pem \
    --key pki/agents/acme/node01.key -o "snaps/s$i.ibsnap" >/dev/null 2>&1 || true
done
echo "$N snapshots of $(stat -c %s snaps/s1.ibsnap) bytes each"

run() {
  local window=$1
  rm -rf data spool out
  mkdir out
  "$COLLECTOR" --listen 127.0.0.1:0 --data data --ca pki/ca.pem --cert pki/collector.pem \
    --key pki/collector.key --max-pipelined-requests "$window" >out/c.out 2>out/c.log &
  cpid=$!
  for _ in $(seq 1 200); do grep -q listening out/c.out 2>/dev/null && break; sleep 0.05; done
  local addr start end
  addr=$(sed -n 's/listening on //p' out/c.out)
  start=$(date +%s.%N)
  "$IBC" upload snaps/*.ibsnap --collector "$addr" --ca pki/ca.pem \
    --cert pki/agents/acme/node01.pem --key pki/agents/acme/node01.key --spool spool \
    --retries 0 2>out/up.err || true
  end=$(date +%s.%N)
  kill -TERM "$cpid"
  wait "$cpid" || true
  cpid=""
  printf 'window %2d: %.3f s, %d delivered, %s\n' "$window" "$(echo "$end - $start" | bc)" \
    "$(grep -c '^ibcollect: delivered' out/up.err)" \
    "$(grep -o 'write_batches=[0-9]*' out/c.log | tail -1)"
}
for _ in $(seq 1 "$ROUNDS"); do
  run 16
  run 1
done
