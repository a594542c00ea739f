#!/bin/sh
# Regenerates the checked-in golden files after an intended change, then shows the diff to
# review like code:
#   tests/fixtures/golden/*.txt, *.json   text and JSON renderers (report, job)
#   tests/fixtures/golden/proto/*.txt     the wire schema; a renumbered or retyped field is
#                                         a wire break and must never be "regenerated away"
# Usage: scripts/update-golden.sh [BUILD_DIR]   (default build/test, built beforehand)
set -eu
build=${1:-build/test}
cd "$(dirname "$0")/.."
IBC_UPDATE_GOLDEN=1 "$build/tests/unit/ibc_core_tests" --gtest_filter='ProtoSchema.*:RenderGolden.*'
IBC_UPDATE_GOLDEN=1 "$build/tests/unit/ibc_agent_tests" --gtest_filter='ReportGolden.*'
git --no-pager diff --stat -- tests/fixtures/golden
