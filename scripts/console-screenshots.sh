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
#   escalate page: the same job as cloud VMs (a QEMU guest's DMI added to the copied trees,
#        SYNTHETIC), so that core escalates: suspects first, with their reasons.
#   jobs page: the same job uploaded to a real collector (127.0.0.1, port 0) with a PKI from
#        certs/make-pki, each snapshot signed by its node's certificate, then listed and
#        fetched by the console with a support certificate (--collector --tenant --job).
# Snapshots are made by `ibcollect snapshot --root` from trees materialised from the
# captures (nothing composed), in a temp dir, by tests/integration/console_make_job.sh.
#   scripts/console-screenshots.sh OUT_DIR [BUILD_DIR]   (default build/test)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/console-screenshots.sh OUT_DIR [BUILD_DIR]}
BUILD=${2:-build/test}
IBC=$BUILD/agent/ibcollect
CONSOLE=$BUILD/console/ibcollect-console
COLLECTOR=$BUILD/collector/ibcollect-collector
T=$(mktemp -d /tmp/ibc-console-shots-XXXXXX)
collector_pid=""
cleanup() {
  if [ -n "$collector_pid" ]; then kill "$collector_pid" 2>/dev/null || true; wait "$collector_pid" 2>/dev/null || true; fi
  rm -rf "$T"
}
trap cleanup EXIT
tests/integration/console_make_job.sh "$T" "$BUILD"

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
# A support case on the job, as the escalate page or `ibcollect case create` makes it: the
# jobs page lists it under job 4242.
"$IBC" case create --tenant acme --job 4242 --title "node1661: 2 ports stuck in INIT" \
  --node node1661 --code PORT_NOT_ACTIVE_SM --collector "$ADDR" --ca "$T/pki/ca.pem" \
  --cert "$T/pki/support/alice.pem" --key "$T/pki/support/alice.key" >/dev/null
QT_QPA_PLATFORM=offscreen "$CONSOLE" --collector "$ADDR" --ca "$T/pki/ca.pem" \
  --cert "$T/pki/support/alice.pem" --key "$T/pki/support/alice.key" --tenant acme --job 4242 \
  --screenshot "$OUT" --page jobs
QT_QPA_PLATFORM=offscreen "$CONSOLE" "$T"/gpu0?.ibsnap --ca "$T/pki/ca.pem" --screenshot "$OUT" --page grid
QT_QPA_PLATFORM=offscreen "$CONSOLE" "$T"/gpu0?.ibsnap --ca "$T/pki/ca.pem" --screenshot "$OUT" --page findings
QT_QPA_PLATFORM=offscreen "$CONSOLE" "$T"/gpu0?.ibsnap --ca "$T/pki/ca.pem" --screenshot "$OUT" --page diff
QT_QPA_PLATFORM=offscreen "$CONSOLE" "$T"/gpu0?.ibsnap --ca "$T/pki/ca.pem" --screenshot "$OUT" --page charts
# escalate: the same four captures as cloud VMs see them (console_make_job.sh's DIR/vm), so
# that core escalates the PFs to the provider.
QT_QPA_PLATFORM=offscreen "$CONSOLE" "$T"/vm/gpu0?.ibsnap --ca "$T/pki/ca.pem" --screenshot "$OUT" --page escalate
QT_QPA_PLATFORM=offscreen "$CONSOLE" "$T/mlx5.ibsnap" --screenshot "$OUT" --page node
