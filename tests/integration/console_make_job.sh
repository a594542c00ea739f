#!/usr/bin/env bash
# The console's real job, for its UI test, its screenshots and its benchmark:
#   DIR/pki/                 certs/make-pki: CA, agents acme/node1720, node2183, node1661,
#                            support alice
#   DIR/gpu01..04.ibsnap     the four facebookresearch/gcm captures of 8x HDR nodes
#                            (tests/fixtures/real/sysfs): healthy, 8 ports at 100 Gb/s, ib4
#                            down after 98 carrier changes, two ports INIT. Two of them are the
#                            same host (node1720), told apart by file name. Each is signed by
#                            its node's certificate and carries one real all_reduce_perf output
#                            (tests/fixtures/real/nccl-tests, captured on other clusters,
#                            attached with --nccl-tests as a user would): busbw to plot.
#   DIR/vm/gpu01..04.ibsnap  the same four as cloud VMs see them (so that core escalates the
#                            PFs to the provider): SYNTHETIC, a QEMU guest's DMI sys_vendor and
#                            product_name added to each copied tree, the rest as captured.
#   DIR/mlx5.ibsnap          the real mlx5 capture with hw_counters errors, a real mlx5 kernel
#                            log and a real NCCL log of a RoCE completion error (unsigned).
# Snapshots are made by `ibcollect snapshot --root` from trees materialised from the captures
# (nothing composed).
#   tests/integration/console_make_job.sh DIR BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
T=${1:?usage: console_make_job.sh DIR BUILD_DIR}
BUILD=${2:?usage: console_make_job.sh DIR BUILD_DIR}
IBC=$BUILD/agent/ibcollect
F=$PWD/tests/fixtures/real
mkdir -p "$T"
certs/make-pki "$T/pki" --agent acme/node1720 --agent acme/node2183 --agent acme/node1661 \
  --support alice >/dev/null

NT=$F/nccl-tests
nccl_tests=(
  "$NT/nccl-tests_all_reduce_perf_16rank-2node-h100-gcp-a3mega_create-a3mega-ztan-fork.txt"
  "$NT/nccl-tests_all_reduce_perf_1node-8xa100-validation-off-legacy-format_superbenchmark-tests-data.txt"
  "$NT/nccl-tests_all_reduce_perf_rccl-tail-asterisk-footer_rccl-pr-2078.txt"
  "$NT/nccl-tests_all_reduce_perf_ring-large-sizes-busbw95_nccl-tests-issue-252.txt"
)
# snapshot TREE NCCL_TESTS: TREE.ibsnap, signed by the node the tree is. Exit 1/2 are the
# verdicts (warnings, critical); anything else is a failure.
snapshot() {
  # The host name the snapshot will carry: the captures have no /proc, their node_desc names it.
  local host rc=0
  host=$(cat "$1"/sys/bus/pci/devices/*/infiniband/*/node_desc | awk '{print $1; exit}')
  "$IBC" snapshot --root "$1" --nccl-tests "$2" --job 4242 \
    --cert "$T/pki/agents/acme/$host.pem" --key "$T/pki/agents/acme/$host.key" \
    -o "$1.ibsnap" -q >/dev/null 2>&1 || rc=$?
  [ "$rc" -le 2 ] || { echo "snapshot of $1 failed ($rc)" >&2; exit 1; }
}
i=1
mkdir -p "$T/vm"
for capture in good_8xhdr200-all-active ib_intf_bad_rate_8x-rate-100edr-vs-ipoib-200000 \
  ib_intf_operstate_down_ib4-ipoib-down-carrier-changes-98 \
  stuck_ib_intf_two-ports-state-INIT-ipoib-down; do
  python3 "$F/sysfs/json_sysfs_extract.py" "$F/sysfs/sysfs-json_gcm-learn_$capture.json" "$T/gpu0$i"
  snapshot "$T/gpu0$i" "${nccl_tests[$((i - 1))]}"
  cp -r "$T/gpu0$i" "$T/vm/gpu0$i"
  mkdir -p "$T/vm/gpu0$i/sys/class/dmi/id"
  echo QEMU >"$T/vm/gpu0$i/sys/class/dmi/id/sys_vendor"
  echo "Standard PC (Q35 + ICH9, 2009)" >"$T/vm/gpu0$i/sys/class/dmi/id/product_name"
  snapshot "$T/vm/gpu0$i" "${nccl_tests[$((i - 1))]}"
  i=$((i + 1))
done
rc=0
"$IBC" snapshot --root "$F/sysfs/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures" \
  --dmesg-file "$F/dmesg/dmesg_mlx5-healthy-probe-pcie-x8-cable-plugged_arm-nas-issue-16.txt" \
  --nccl-log "$F/nccl-logs/nccl-log_roce-ipv6gid-completion-status12-vendor129_nccl-issue-1405.txt" \
  -o "$T/mlx5.ibsnap" -q >/dev/null 2>&1 || rc=$?
[ "$rc" -le 2 ] || { echo "snapshot of the mlx5 capture failed ($rc)" >&2; exit 1; }
