#!/usr/bin/env bash
# The man pages are never out of date with --help (docs/operations.md): each program's page is made
# from this build's binary as scripts/package.sh makes it (packaging/man/make-man.py,
# help2man) and every --flag of its --help and of each subcommand's --help must be in it.
# Needs no root (the package test checks the installed pages too, as root).
#   man_pages_test.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=$(realpath "${1:?usage: man_pages_test.sh BUILD_DIR}")
OUT=$(mktemp -d /tmp/ibc-man-test-XXXXXX)
trap 'rm -rf "$OUT"' EXIT
pages=("agent/ibcollect 1" "agent/ibcollect-support 1" "collector/ibcollect-collector 8")
if [ -x "$BUILD/console/ibcollect-console" ]; then pages+=("console/ibcollect-console 1"); fi
for entry in "${pages[@]}"; do
  read -r program section <<<"$entry"
  name=$(basename "$program")
  packaging/man/make-man.py "$BUILD/$program" "$section" "test page" \
    "packaging/man/$name.h2m" "$OUT/$name.$section.gz"
  packaging/man/check-man-flags.py "$BUILD/$program" "$OUT/$name.$section.gz"
done
