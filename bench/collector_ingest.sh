#!/usr/bin/env bash
# Ingest benchmark (on demand, not in CI): builds the collector and the driver in Release
# (build/release) and runs N = 100, 500, 1000 concurrent agents, each uploading signed
# 64 KiB snapshots over fresh mutual-TLS connections. Extra arguments go to the driver,
# e.g. --agents 1000 --rounds 5.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
run_collector_driver collector_ingest_bench "$@"
