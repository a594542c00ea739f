#!/usr/bin/env bash
# The main job on an embedded default: installs what is missing, builds ibcollect
# (release), snapshots a real captured node tree shipped in the repo and diagnoses it.
#   scripts/demo.sh [TREE]     TREE defaults to a real mlx5 VF capture with error counters
# Idempotent: a second run rebuilds nothing and takes a second.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh release  # packages, then build/release/agent/ibcollect
BUILD=build/release

TREE=${1:-tests/fixtures/real/sysfs/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures}
OUT=build/demo
mkdir -p "$OUT"
echo "== ibcollect snapshot --root $TREE -o $OUT/node.ibsnap"
set +e
"$BUILD/agent/ibcollect" snapshot --root "$TREE" -o "$OUT/node.ibsnap" --no-info >/dev/null
rc=$?
echo "== ibcollect analyze $OUT/node.ibsnap"
"$BUILD/agent/ibcollect" analyze "$OUT/node.ibsnap"
rc2=$?
set -e
# 0/1/2 are verdicts (ok / warnings / critical findings); 3 and 4 are failures.
if [ "$rc" -ge 3 ] || [ "$rc2" -ge 3 ]; then
  echo "demo failed: ibcollect exited $rc / $rc2" >&2
  exit 1
fi
echo "== verdict exit code $rc2 (0 ok, 1 warnings, 2 critical); snapshot kept in $OUT/node.ibsnap"
