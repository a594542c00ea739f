#!/usr/bin/env bash
# docs/codes.md is made from core's finding registry by `ibcollect explain --list --format
# markdown`: never edit it by hand, change the registry (core/src/diagnosis/findings.cpp) and
# run this. A ctest test (Docs.CodesMdIsCurrentWithTheFindingRegistry) runs it with --check.
#   scripts/update-codes-md.sh [IBCOLLECT]           rewrite docs/codes.md
#   scripts/update-codes-md.sh --check IBCOLLECT     exit 1 (with the diff) when it is stale
# IBCOLLECT is a built ibcollect; default build/release/agent/ibcollect (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
if [ "${1:-}" = --check ]; then
  check=1
  shift
fi
program=${1:-build/release/agent/ibcollect}
if [ ! -x "$program" ]; then
  echo "update-codes-md: no ibcollect at $program (build it: scripts/setup.sh release)" >&2
  exit 3
fi
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
"$program" explain --list --format markdown >"$tmp"
if [ "$check" = 0 ]; then
  cp "$tmp" docs/codes.md
  echo "docs/codes.md written from $program" >&2
  exit 0
fi
if ! diff -u docs/codes.md "$tmp"; then
  echo "docs/codes.md is not what the finding registry says (diff above: - committed, + now)." >&2
  echo "Regenerate it: scripts/update-codes-md.sh $program" >&2
  exit 1
fi
