#!/usr/bin/env bash
# The text a job owner reads (issue 10's figure): `ibcollect --job` on a real 3-node Slurm
# cluster started on this machine (tests/integration/slurm/cluster.sh; needs root), each
# node seeing a different real sysfs capture (mlx4 QDR 2-port, mlx4 counters_ext, mlx5 with
# hw_counters errors), run as `COLUMNS=80 ibcollect --job ID --window 1`. Prints the number
# of lines, the longest line and the exit code, and keeps the output for reading.
#   bench/job_text_output.sh [IBCOLLECT_BINARY] [EXTRA ARGS...]
# (default binary build/test/agent/ibcollect; on demand, not in CI).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:-build/test/agent/ibcollect}")
shift || true
F=$PWD/tests/fixtures/real/sysfs
CLUSTER=$PWD/tests/integration/slurm/cluster.sh
D=$(mktemp -d /tmp/ibc-jobtext-XXXXXX)
stop() { "$CLUSTER" stop "$D" >/dev/null 2>&1 || true; }
trap stop EXIT
"$CLUSTER" start "$D" \
  "node1=class:$F/sysfs_procfs-fixture_mlx4_0_ib-qdr-2port.tree/fixtures" \
  "node2=class:$F/sysfs_node-exporter-fixture_mlx4_0_counters-ext.tree" \
  "node3=class:$F/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures"
eval "$("$CLUSTER" env "$D")"
JOB=$(sbatch --parsable --output=/dev/null -N 3 --wrap 'sleep 600' | tr -d '\r\n')
for _ in $(seq 600); do
  scontrol show job "$JOB" | grep -q 'JobState=RUNNING' && break
  sleep 0.1
done
rc=0
COLUMNS=80 "$BIN" --job "$JOB" --window 1 --out "$D/out" "$@" >"$D/text.txt" 2>"$D/stderr.txt" || rc=$?
scancel "$JOB" || true
lines=$(wc -l <"$D/text.txt")
longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$D/text.txt")
echo "job_text_output: $lines lines, longest $longest characters, exit code $rc (COLUMNS=80)"
echo "output kept in $D/text.txt"
trap - EXIT
stop
