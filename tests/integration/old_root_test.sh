#!/usr/bin/env bash
# The portable programs on an old userland (docs/operations.md, "Supported images"): the x86_64
# build runs inside the Debian 11 root (glibc 2.31) by chroot, the aarch64 build under
# `qemu-aarch64-static -L` the Debian 11 arm64 root. Each runs what a customer, a support
# engineer and a provider run, on real fixture trees at the same paths as the host build
# (REFERENCE, this machine's build of the same sources), and their output must equal the host
# build's byte for byte (snapshot and host-inspect JSON without the time they were made),
# exit codes included:
#   --version; snapshot --root (signed); analyze, compare, verify of the same snapshots;
#   upload to a collector running outside the root; bundle export; bundle verify;
#   host-inspect --bundle with a host tree; --job over ssh (nodes, finding codes, exit code:
#   the live machine's counters move between runs).
#   tests/integration/old_root_test.sh REFERENCE_BUILD CACHE PORTABLE_BUILD...
# CACHE is what scripts/portable-deps.sh printed; a PORTABLE_BUILD is build/portable-ARCH.
# Needs root (chroot, mounts in a private mount namespace). Prints one line per check and
# "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${IBC_OLD_ROOT_NAMESPACE:-}" ]; then
  # Mounts made here vanish with the namespace, whatever happens to this script.
  exec env IBC_OLD_ROOT_NAMESPACE=1 unshare --mount --propagation private "$0" "$@"
fi
REF=$1
CACHE=$2
shift 2
W=$(mktemp -d /tmp/ibc-old-root.XXXXXX)
collector_pid=""
cleanup() {
  [ -n "$collector_pid" ] && kill "$collector_pid" 2>/dev/null
  rm -rf "$W"
}
trap cleanup EXIT
passed=0
failed=0

# The source tree and the work directory at the same paths inside the x86_64 root.
ROOT=$CACHE/root-amd64
for dir in "$PWD" "$W"; do
  mkdir -p "$ROOT$dir"
  mount --bind "$dir" "$ROOT$dir"
done
mount -t proc proc "$ROOT/proc"
# --job collects the live machine on every "node": the same sysfs inside the root.
mount --rbind /sys "$ROOT/sys"

# run PLATFORM PROGRAM ARGS...: PROGRAM (agent/ibcollect, agent/ibcollect-support) of the
# platform's build; prints its stdout then "exit N".
run() {
  local platform=$1 program=$2 code=0
  shift 2
  case "$platform" in
    host) "$REF/$program" "$@" 2>>"$W/stderr.log" || code=$? ;;
    x86_64)
      chroot "$ROOT" /bin/sh -c 'cd "$0" && exec "$@"' "$PWD" "build/portable-x86_64/$program" "$@" \
        2>>"$W/stderr.log" || code=$?
      ;;
    aarch64)
      qemu-aarch64-static -L "$CACHE/root-arm64" "build/portable-aarch64/$program" "$@" \
        2>>"$W/stderr.log" || code=$?
      ;;
  esac
  echo "exit $code"
}

# same NAME PLATFORM: the platform's output of check NAME equals the host's.
same() {
  local name=$1 platform=$2
  if cmp -s "$W/host/$name" "$W/$platform/$name"; then
    echo "ok    $platform: $name ($(tail -1 "$W/host/$name"))"
    passed=$((passed + 1))
  else
    echo "FAIL  $platform: $name differs from the host build's:"
    diff "$W/host/$name" "$W/$platform/$name" | head -20 || true
    failed=$((failed + 1))
  fi
}

# expect NAME PLATFORM CODE: the platform's run of check NAME ended with exit CODE.
expect() {
  if [ "$(tail -1 "$W/$2/$1")" = "exit $3" ]; then
    echo "ok    $2: $1 (exit $3)"
    passed=$((passed + 1))
  else
    echo "FAIL  $2: $1: $(tail -1 "$W/$2/$1"), expected exit $3"
    tail -5 "$W/stderr.log"
    failed=$((failed + 1))
  fi
}

# JSON without the fields that hold the time it was made (collected_at_unix_ms of a snapshot,
# inspected_at_unix_ms of a host inspection): every other byte is compared.
without_time() { sed -E '/"[a-z_]+_at_unix_ms": /d'; }

# ---- inputs, made once with the host build ----------------------------------------------
fixtures=$PWD/tests/fixtures
certs/make-pki "$W/pki" --agent acme/node01 --agent acme/node02 --support alice >/dev/null 2>&1
python3 tests/fixtures/synthetic/make_host_trees.py "$fixtures" "$W/hosts" >/dev/null
for pair in node01:sysfs_procfs-fixture_mlx5_0_hw-counters-errors node02:sysfs_procfs-fixture_mlx4_0_ib-qdr-2port; do
  node=${pair%%:*}
  cp -r "$fixtures/real/sysfs/${pair#*:}.tree/fixtures" "$W/tree-$node"
  mkdir -p "$W/tree-$node/proc/sys/kernel"
  echo "$node" >"$W/tree-$node/proc/sys/kernel/hostname"
done
mkdir -p "$W/data"
exec 3< <(exec "$REF/collector/ibcollect-collector" --listen 127.0.0.1:0 --data "$W/data" \
  --ca "$W/pki/ca.pem" --cert "$W/pki/collector.pem" --key "$W/pki/collector.key" 2>"$W/collector.log")
collector_pid=$!
read -r listening <&3
address=${listening#listening on }
ca=(--ca "$W/pki/ca.pem")
alice=(--cert "$W/pki/support/alice.pem" --key "$W/pki/support/alice.key")

# `--job --launcher ssh` with a stand-in for ssh that runs the remote command (its last
# argument) on this machine, as sshd would on a node: the launcher and its "nodes" are the
# same root. The aarch64 nodes run their program under qemu, as the launcher does.
mkdir -p "$W/bin"
printf '#!/bin/sh\nfor a; do c=$a; done\nexec /bin/sh -c "$c"\n' >"$W/bin/ssh"
printf '#!/bin/sh\nexec qemu-aarch64-static -L "%s" "%s" "$@"\n' "$CACHE/root-arm64" \
  "$PWD/build/portable-aarch64/agent/ibcollect" >"$W/bin/ibcollect-aarch64"
chmod +x "$W/bin/ssh" "$W/bin/ibcollect-aarch64"

# What two runs of --job on the live machine share (counters and the kernel log move on in
# between): the nodes and whether they answered, the finding codes per node, the exit code.
job_summary() {
  python3 -c '
import json, sys
text = sys.stdin.read()
body, _, code = text.rpartition("exit ")
try:
    doc = json.loads(body)
except ValueError:
    print("not JSON:", body[:200]); print("exit", code.strip()); sys.exit()
for n in doc.get("nodes", []):
    print("node", n.get("node"), "unreachable" if n.get("unreachable_reason") else "answered")
for f in sorted({(f["node"], f["code"]) for f in doc.get("findings", [])}):
    print("finding", *f)
print("exit", code.strip())'
}

# ---- each platform: the host build first, then the portable ones ------------------------
checks() { # PLATFORM
  local p=$1 node agent
  mkdir -p "$W/$p"
  run "$p" agent/ibcollect --version >"$W/$p/version"
  for node in node01 node02; do
    agent=(--cert "$W/pki/agents/acme/$node.pem" --key "$W/pki/agents/acme/$node.key")
    run "$p" agent/ibcollect snapshot --root "$W/tree-$node" --job 77 "${agent[@]}" \
      -o "$W/$node.ibsnap" --force --format json | without_time >"$W/$p/snapshot-$node.json"
    mv "$W/$node.ibsnap" "$W/$p-$node.ibsnap"
    run "$p" agent/ibcollect upload "$W/$p-$node.ibsnap" --collector "$address" "${ca[@]}" \
      "${agent[@]}" >"$W/$p/upload-$node"
  done
  # The same inputs for every platform: the host build's snapshots.
  run "$p" agent/ibcollect analyze "$W/host-node01.ibsnap" --format json >"$W/$p/analyze.json"
  run "$p" agent/ibcollect compare "$W/host-node01.ibsnap" "$W/host-node02.ibsnap" --format json \
    >"$W/$p/compare.json"
  run "$p" agent/ibcollect verify "$W/host-node01.ibsnap" "${ca[@]}" >"$W/$p/verify"
  run "$p" agent/ibcollect-support bundle export "$W/host-node01.ibsnap" "$W/host-node02.ibsnap" \
    -o "$W/$p.ibbundle" "${alice[@]}" --force >/dev/null
  run "$p" agent/ibcollect-support bundle verify "$W/$p.ibbundle" "${ca[@]}" >"$W/$p/verify-own-bundle"
  run "$p" agent/ibcollect-support bundle verify "$W/host.ibbundle" "${ca[@]}" >"$W/$p/bundle-verify"
  run "$p" agent/ibcollect-support host-inspect --bundle "$W/host.ibbundle" "${ca[@]}" \
    --root "$W/hosts/bundle-pf-errors" --format json | without_time >"$W/$p/host-inspect.json"
  local node_program=$REF/agent/ibcollect
  case "$p" in
    x86_64) node_program=$PWD/build/portable-x86_64/agent/ibcollect ;;
    aarch64) node_program=$W/bin/ibcollect-aarch64 ;;
  esac
  PATH=$W/bin:$PATH run "$p" agent/ibcollect --job 77 --launcher ssh --hosts node01,node02 \
    --agent "$node_program" --window 0 --timeout 60 --out "$W/job-$p" --format json |
    job_summary >"$W/$p/job"
}

checks host
echo "x86_64 root: $(chroot "$ROOT" /usr/bin/ldd --version | head -1)"
echo "arm64 root:  $(qemu-aarch64-static -L "$CACHE/root-arm64" \
  "$CACHE/root-arm64/usr/lib/aarch64-linux-gnu/libc.so.6" | head -1)"
for build in "$@"; do
  platform=${build##*/portable-}
  [ -x "$build/agent/ibcollect" ] || { echo "FAIL  $platform: $build/agent/ibcollect is missing"; failed=$((failed + 1)); continue; }
  checks "$platform"
  for name in version snapshot-node01.json snapshot-node02.json analyze.json compare.json verify \
    bundle-verify host-inspect.json job; do
    same "$name" "$platform"
  done
  expect upload-node01 "$platform" 0
  expect upload-node02 "$platform" 0
  expect verify-own-bundle "$platform" 0
  # Equal to the host's is not enough: both "nodes" answered the launcher.
  if [ "$(grep -c '^node node0[12] answered$' "$W/$platform/job")" = 2 ]; then
    echo "ok    $platform: job (node01 and node02 answered)"
    passed=$((passed + 1))
  else
    echo "FAIL  $platform: job: not every node answered:"
    cat "$W/$platform/job"
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
