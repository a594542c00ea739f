#!/usr/bin/env bash
# Backup benchmark (on demand, not in CI): builds the collector and the driver in Release
# (build/release), fills a store with N 64 KiB snapshots, starts the collector on it with an
# agent uploading, and prints the time and size of `ibcollect-collector backup` under load.
# Extra arguments go to the driver, e.g. --snapshots 20000 --work /var/tmp/x.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
run_collector_driver collector_backup_bench "$@"
