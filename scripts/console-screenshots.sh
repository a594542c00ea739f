#!/usr/bin/env bash
# Screenshots of the console on real captures (README, docs/screenshots/, and the console's
# screenshot test):
#   job: the four facebookresearch/gcm captures of 8x HDR nodes (tests/fixtures/real/sysfs):
#        healthy, 8 ports at 100 Gb/s, ib4 down after 98 carrier changes, two ports INIT;
#        two of them are the same host (node1720), told apart by file name. Each node
#        carries one real all_reduce_perf output (tests/fixtures/real/nccl-tests; captured
#        on other clusters, attached with --nccl-tests as a user would) so the charts page
#        has busbw to plot: 339, 235, 361 and 98 GB/s peaks.
#   node page: the real mlx5 capture with hw_counters errors, with a real mlx5 kernel log and
#        a real NCCL log of a RoCE completion error (status 12).
#   jobs page: the same job uploaded to a real collector (127.0.0.1, port 0) with a PKI from
#        certs/make-pki, each snapshot signed by its node's certificate, then listed and
#        fetched by the console with a support certificate (--collector --tenant --job).
# Snapshots are made by `ibcollect snapshot --root` from trees materialised from the
# captures (nothing composed), in a temp dir.
#   scripts/console-screenshots.sh OUT_DIR [BUILD_DIR]   (default build/test)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/console-screenshots.sh OUT_DIR [BUILD_DIR]}
BUILD=${2:-build/test}
IBC=$BUILD/agent/ibcollect
CONSOLE=$BUILD/console/ibcollect-console
F=$PWD/tests/fixtures/real
COLLECTOR=$BUILD/collector/ibcollect-collector
T=$(mktemp -d /tmp/ibc-console-shots-XXXXXX)
collector_pid=""
cleanup() {
  if [ -n "$collector_pid" ]; then kill "$collector_pid" 2>/dev/null || true; wait "$collector_pid" 2>/dev/null || true; fi
  rm -rf "$T"
}
trap cleanup EXIT
certs/make-pki "$T/pki" --agent acme/node1720 --agent acme/node2183 --agent acme/node1661 \
  --support alice >/dev/null

NT=$F/nccl-tests
nccl_tests=(
  "$NT/nccl-tests_all_reduce_perf_16rank-2node-h100-gcp-a3mega_create-a3mega-ztan-fork.txt"
  "$NT/nccl-tests_all_reduce_perf_1node-8xa100-validation-off-legacy-format_superbenchmark-tests-data.txt"
  "$NT/nccl-tests_all_reduce_perf_rccl-tail-asterisk-footer_rccl-pr-2078.txt"
  "$NT/nccl-tests_all_reduce_perf_ring-large-sizes-busbw95_nccl-tests-issue-252.txt"
)
i=1
for capture in good_8xhdr200-all-active ib_intf_bad_rate_8x-rate-100edr-vs-ipoib-200000 \
  ib_intf_operstate_down_ib4-ipoib-down-carrier-changes-98 \
  stuck_ib_intf_two-ports-state-INIT-ipoib-down; do
  python3 "$F/sysfs/json_sysfs_extract.py" "$F/sysfs/sysfs-json_gcm-learn_$capture.json" "$T/gpu0$i"
  # Exit 1/2 are the verdicts (warnings, critical); anything else is a failure.
  # The host name the snapshot will carry: the captures have no /proc, their node_desc names it.
  host=$(cat "$T/gpu0$i"/sys/bus/pci/devices/*/infiniband/*/node_desc | awk '{print $1; exit}')
  rc=0
  "$IBC" snapshot --root "$T/gpu0$i" --nccl-tests "${nccl_tests[$((i - 1))]}" --job 4242 \
    --cert "$T/pki/agents/acme/$host.pem" --key "$T/pki/agents/acme/$host.key" \
    -o "$T/gpu0$i.ibsnap" -q >/dev/null 2>&1 || rc=$?
  [ "$rc" -le 2 ] || { echo "snapshot of $capture failed ($rc)" >&2; exit 1; }
  i=$((i + 1))
done
rc=0
"$IBC" snapshot --root "$F/sysfs/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures" \
  --dmesg-file "$F/dmesg/dmesg_mlx5-healthy-probe-pcie-x8-cable-plugged_arm-nas-issue-16.txt" \
  --nccl-log "$F/nccl-logs/nccl-log_roce-ipv6gid-completion-status12-vendor129_nccl-issue-1405.txt" \
  -o "$T/mlx5.ibsnap" -q >/dev/null 2>&1 || rc=$?
[ "$rc" -le 2 ] || { echo "snapshot of the mlx5 capture failed ($rc)" >&2; exit 1; }

mkdir -p "$OUT"
# The collector: its first stdout line says where it listens.
mkfifo "$T/collector.out"
"$COLLECTOR" --listen 127.0.0.1:0 --data "$T/store" --ca "$T/pki/ca.pem" \
  --cert "$T/pki/collector.pem" --key "$T/pki/collector.key" >"$T/collector.out" 2>"$T/collector.log" &
collector_pid=$!
read -r first <"$T/collector.out"
ADDR=${first#listening on }
"$IBC" upload "$T"/gpu0?.ibsnap --collector "$ADDR" --ca "$T/pki/ca.pem" \
  --cert "$T/pki/agents/acme/node1720.pem" --key "$T/pki/agents/acme/node1720.key" \
  --spool "$T/spool" --retries 0 >/dev/null
QT_QPA_PLATFORM=offscreen "$CONSOLE" --collector "$ADDR" --ca "$T/pki/ca.pem" \
  --cert "$T/pki/support/alice.pem" --key "$T/pki/support/alice.key" --tenant acme --job 4242 \
  --screenshot "$OUT" --page jobs
QT_QPA_PLATFORM=offscreen "$CONSOLE" "$T"/gpu0?.ibsnap --screenshot "$OUT" --page grid
QT_QPA_PLATFORM=offscreen "$CONSOLE" "$T"/gpu0?.ibsnap --screenshot "$OUT" --page findings
QT_QPA_PLATFORM=offscreen "$CONSOLE" "$T"/gpu0?.ibsnap --screenshot "$OUT" --page diff
QT_QPA_PLATFORM=offscreen "$CONSOLE" "$T"/gpu0?.ibsnap --screenshot "$OUT" --page charts
QT_QPA_PLATFORM=offscreen "$CONSOLE" "$T"/gpu0?.ibsnap --screenshot "$OUT" --page escalate
QT_QPA_PLATFORM=offscreen "$CONSOLE" "$T/mlx5.ibsnap" --screenshot "$OUT" --page node
