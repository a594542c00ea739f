#!/usr/bin/env bash
# Backup benchmark (on demand, not in CI): builds the collector and the driver in Release
# (build/release), fills a store with N 64 KiB snapshots, starts the collector on it with an
# agent uploading, and prints the time and size of `ibcollect-collector backup` under load.
# Extra arguments go to the driver, e.g. --snapshots 20000 --work /var/tmp/x.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh none
BUILD=build/release
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DIBC_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$BUILD" -j1 --target ibcollect-collector collector_backup_bench
exec "$BUILD/collector/collector_backup_bench" --collector "$BUILD/collector/ibcollect-collector" \
  --make-pki certs/make-pki "$@"
